/*
 * mergeq.h - the project's merge queue (SPEC §14): the agents waiting to
 * land on main, in order, one landing at a time (cmd/cmd_queue.c does the
 * landing; the dashboard starts it, core/lander.c).
 *
 * The queue is one file in the common git directory, workrex-queue.json
 * (the waiting, the given back, and the last 20 landed), replaced whole (a new file renamed over it): a kill -9 leaves the queue
 * before or after one change, never half of one. Changes are made under
 * workrex-queue.owner (mq_lock), so `queue add` from a shell and the landing
 * never lose each other's.
 */
#ifndef WRX_MERGEQ_H
#define WRX_MERGEQ_H

#include "git.h"

#include <stdbool.h>

/* An entry's state: waiting, at one of the landing's steps, or out of it. */
#define MQ_QUEUED "queued"
#define MQ_REBASING "rebasing"
#define MQ_CHECKING "checking"
#define MQ_LANDED "landed"
#define MQ_RETURNED "returned" /* given back to its agent: in again when it is done */

struct mq_entry {
	char *handle; /* owned */
	char *state;  /* owned: one of the above */
	char *reason; /* owned: why it waits or came back, or NULL */
	long at;      /* when it took this state, epoch seconds */
};

struct mergeq {
	bool paused;
	struct mq_entry *e; /* owned, in landing order */
	size_t n;
};

/* Hold the queue against other changers until the fd is closed; -errno. */
int mq_lock(const struct repo *r);
/* The queue as kept (empty when there is none yet): 0, or -errno. */
int mq_load(const struct repo *r, struct mergeq *q);
/* q as the queue: 0, or -errno. */
int mq_save(const struct repo *r, const struct mergeq *q);
void mq_free(struct mergeq *q);
/* handle's entry, or NULL. */
struct mq_entry *mq_find(struct mergeq *q, const char *handle);
/* handle's entry set to state and reason (added at the end when it has none). */
void mq_put(struct mergeq *q, const char *handle, const char *state, const char *reason);
/* handle's entry taken out: true if it had one. */
bool mq_drop(struct mergeq *q, const char *handle);
/* handle's entry moved to position pos (1-based; past the end: last). */
bool mq_move(struct mergeq *q, const char *handle, size_t pos);
/*
 * Under the lock: load, set handle's state and reason (mq_put), save. 0, or
 * -errno.
 */
int mq_set(const struct repo *r, const char *handle, const char *state, const char *reason);
/* Is there a queue file at all (a stat: cheap enough for the dashboard's loop)? */
bool mq_exists(const struct repo *r);
bool mq_exists_at(const char *gitdir);

#endif
