/*
 * checks.h - what a group's candidate's check said (SPEC §11): the
 * project's `check` command, run in its worktree (inside its sandbox when
 * it is sandboxed), its outcome kept in the agent's host-only directory
 * (private.h) for compare to show and compare --merge to require.
 *
 * The record is replaced whole (a new file renamed over it): a kill -9
 * leaves the last record or the one before, never half of one. A
 * sandboxed agent cannot read or write it.
 */
#ifndef WRX_CHECKS_H
#define WRX_CHECKS_H

#include <stdbool.h>

#define CHECK_OUTPUT_MAX 16384 /* the output's tail kept */

struct check_result {
	char *state;  /* owned: "running", "passed", "failed" */
	int code;     /* its exit status once it ended */
	char *key;    /* owned: what it checked: HEAD and the worktree's changes */
	char *where;  /* owned: "host" or "sandbox" */
	long started; /* epoch seconds */
	long ended;   /* 0 while it runs */
	char *output; /* owned: stdout and stderr, the tail */
};

/* handle's last check into r: 0, or -ENOENT (none) / -errno. */
int check_load(const char *root, const char *handle, struct check_result *r);
/* r as handle's last check: 0 or -errno. */
int check_save(const char *root, const char *handle, const struct check_result *r);
void check_result_free(struct check_result *r);
/*
 * What a check of the worktree at path would see: its HEAD and a hash of
 * its changes (git status, untracked files too), in process. A string to
 * free; "" when it is no repository.
 */
char *check_state_key(const char *path);

#endif
