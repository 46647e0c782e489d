/*
 * hunks.h - patch mode's model (SPEC §10): the unstaged diff cut into
 * hunks the user answers one by one, as `git add -p` asks them, split
 * where git splits, and the answered ones put back together into the
 * patch `git apply --cached` stages. The index afterwards is the one
 * `git add -p` leaves for the same answers: each hunk staged at its old
 * place moved by what the hunks staged before it in its file changed.
 *
 * Only text changes to files that stay are offered; a new, deleted or
 * binary file, or a mode change alone, is left to git add.
 */
#ifndef WRX_HUNKS_H
#define WRX_HUNKS_H

#include <stdbool.h>
#include <stddef.h>

struct hunk {
	int file; /* its file in the set */
	int old_start, old_count, new_start, new_count;
	char **lines; /* owned: " x", "-x", "+x" or "\ No newline at end of file" */
	int nlines;
	char answer; /* 0 not yet, 'y' stage, 'n' skip */
};

struct hunk_file {
	char *path;   /* owned: its name after the change */
	char *header; /* owned: its lines before the first hunk, each ending in \n */
};

struct hunk_set {
	struct hunk_file *files; /* owned */
	int nfiles;
	struct hunk *hunks; /* owned: in the diff's order */
	int nhunks;
	int skipped; /* files not offered (new, deleted, binary, mode only) */
};

/* A `git diff` (worktree against index) of len bytes into s. 0, or -1: not a diff. */
int hunks_parse(const char *diff, size_t len, struct hunk_set *s);
/* Hunk i cut where context lines part its changes: true when it was (it is now several). */
bool hunks_split(struct hunk_set *s, int i);
/* The patch of the hunks answered 'y', for git apply --cached; NULL when there is none. */
char *hunks_patch(const struct hunk_set *s);
void hunks_free(struct hunk_set *s);

#endif
