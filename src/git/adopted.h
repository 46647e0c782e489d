/*
 * adopted.h - sessions started outside workrex that the dashboard shows
 * (`workrex adopt`): a `claude --bg` job, or an agent CLI run by hand in
 * one of the project's worktrees. Each is recorded in the repository's
 * config (workrex.adopted.<handle>.*), beside the agents' own records but
 * never among them: no verb that removes or merges a worktree sees one.
 */
#ifndef WRX_ADOPTED_H
#define WRX_ADOPTED_H

#include "git.h"

#include <stdbool.h>
#include <stddef.h>

struct adopted_rec {
	char *handle;  /* owned; its row's name */
	char *id;      /* owned; the CLI's id for it: a job's, or a session's */
	char *session; /* owned; its session id, which its registry entries name */
	char *cwd;     /* owned; where it runs */
	char *kind;    /* owned; its CLI (config/kinds.h) */
	bool attach;   /* its CLI can show it in a pane of ours (a background job) */
};

/* Every adopted session of r's: 0 and *out (caller frees each and the array). */
int adopted_list(const struct repo *r, struct adopted_rec **out, size_t *n);
/* The one called handle into *out (caller frees): 0, or -ENOENT. */
int adopted_get(const struct repo *r, const char *handle, struct adopted_rec *out);
void adopted_list_free(struct adopted_rec *a, size_t n);
/* Record a (its handle unused by any agent or adopted session). 0, or -errno. */
int adopted_add(const struct repo *r, const struct adopted_rec *a);
/* Forget the one called handle. 0, or -ENOENT. */
int adopted_drop(const struct repo *r, const char *handle);
void adopted_rec_free(struct adopted_rec *a);

#endif
