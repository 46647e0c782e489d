/*
 * intent.h - what a command is in the middle of, on disk while it runs.
 *
 * An action that takes several steps (add: a branch, a worktree, its
 * record, its files and hooks) first writes its intent under the git dir
 * (workrex-intents/KIND.NAME) and holds a lock on it until it is done, when
 * the file goes. A kill -9 at any step leaves the file with no lock held:
 * the next command that opens the project finds it and completes or undoes
 * what was begun (worktree_recover), and says which. A command still
 * running holds its lock, and is left alone.
 */
#ifndef WRX_INTENT_H
#define WRX_INTENT_H

#include "git.h"

struct intent {
	char *path; /* NULL: none */
	int fd;     /* holds the lock */
};

/*
 * Write and lock KIND.NAME with body ("key=value" lines), whole (written
 * aside, locked, then linked into place, so that no reader sees it half
 * written or unlocked). -EEXIST while another command's intent of that
 * name is there; -errno if it cannot be written.
 */
int intent_begin(const struct repo *r, const char *kind, const char *name, const char *body,
		 struct intent *out);
/* Why intent_begin refused (rc): "a merge of 'NAME' is under way already", or the
 * write's failure. what: the action with its article ("a merge"). Caller frees. */
char *intent_refused(const struct repo *r, const char *what, const char *name, int rc);
/* The action is done (or failed and said so): the file goes. */
void intent_end(struct intent *in);
/* The action cannot go on here (a write failed part way): the file stays,
 * unlocked, for the next command to complete, as after a kill. */
void intent_leave(struct intent *in);

/*
 * fn for each intent of KIND that no running command holds, locked for
 * the call, with its name and its body; the file goes when fn returns 0.
 */
void intent_each_left(const struct repo *r, const char *kind,
		      int (*fn)(const struct repo *r, const char *name, const char *body,
				void *arg),
		      void *arg);
/*
 * Add key=value to a running intent's body (a step reached, a temporary
 * thing made, to find after a kill): appended, whole lines only count.
 */
int intent_note(struct intent *in, const char *key, const char *value);
/* The value of key in an intent's body, the last noted (caller frees), or NULL. */
char *intent_get(const char *body, const char *key);

#endif
