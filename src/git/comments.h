/*
 * comments.h - review comments waiting for their agent (SPEC §10): what
 * the user said about a file and line of its changes, with the hunk it
 * was said on, kept until they go to the agent as one message.
 *
 * They live in the agent's host-only directory (private.h), one JSON
 * object a line, appended under a lock: the review view, `workrex review
 * --comment` and a dashboard's core may add at once, and a kill -9 loses
 * at most the line being written, never the ones before. A sandboxed
 * agent cannot read or write them.
 */
#ifndef WRX_COMMENTS_H
#define WRX_COMMENTS_H

#include <stddef.h>

struct review_comment {
	char *file; /* owned: its path in the worktree */
	int line;   /* its line there (the changed side), 0: the file */
	char *hunk; /* owned: the hunk it was said on, or NULL */
	char *text; /* owned */
};

/* Append c to handle's comments. 0 or -errno. */
int comments_add(const char *root, const char *handle, const struct review_comment *c);
/* handle's comments, oldest first, into *out (comments_free). How many, or -errno. */
int comments_load(const char *root, const char *handle, struct review_comment **out);
/* How many wait (0 when none or unreadable); reads no more than it counts. */
int comments_count(const char *root, const char *handle);
/*
 * The first n went to the agent: forgotten, and those added meanwhile
 * kept. How many are left.
 */
int comments_drop(const char *root, const char *handle, int n);
/*
 * The which-th (from 1, as comments_load lists them) given text, or gone
 * (text NULL). How many wait then, or -errno (-ENOENT: no such one).
 */
int comments_change(const char *root, const char *handle, int which, const char *text);
void comments_free(struct review_comment *c, int n);

/*
 * The number of the agent's pull request (workrex pr, add --pr), kept
 * beside its comments for the dashboard to follow; 0 for none.
 */
int review_pr_get(const char *root, const char *handle);
void review_pr_set(const char *root, const char *handle, int number);

/* The one message the agent gets: each file:line, its hunk, the comment. Caller frees. */
char *comments_message(const struct review_comment *c, int n);

#endif
