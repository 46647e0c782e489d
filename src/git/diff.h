/*
 * diff.h - what an agent changed, as a unified diff (SPEC §10): written as
 * git makes it, so that a reader shows the first screen at once, and read
 * back line by line into files, hunks and +/- counts.
 *
 * Modes: WIP is `git diff HEAD` in the worktree with its untracked files
 * shown as new (read without following a symlink: a link is its target's
 * name); branch is `<base>...<branch>`; commits is each commit of
 * `<base>..<branch>`, oldest first, one after another. git runs with no
 * external diff driver and no textconv, so nothing the worktree's
 * .gitattributes names runs on the host, and with no colour: a reader
 * colours by line kind and draws a file's bytes as text (diff_visible).
 */
#ifndef WRX_DIFF_H
#define WRX_DIFF_H

#include "git.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * The three a user switches between (DIFF_MODES), and what patch mode
 * stages from: the worktree against the index, as git add -p reads it.
 */
/*
 * wip: the worktree against HEAD, untracked files too; branch: against its
 * base; commits: each commit; staged: the index against HEAD (what a
 * commit takes); unstaged: the worktree against the index (git add -p's).
 */
enum diff_mode {
	DIFF_WIP,
	DIFF_BRANCH,
	DIFF_COMMITS,
	DIFF_STAGED,
	DIFF_MODES,
	DIFF_UNSTAGED = DIFF_MODES
};

/* "wip", "branch", "commits", "staged", "unstaged". */
const char *diff_mode_name(enum diff_mode m);

struct diff_target {
	const char *worktree; /* WIP: where git runs; NULL: no worktree here */
	const char *branch;   /* branch and commits: the agent's branch */
	const char *base;     /* what it is compared with: its recorded base, or main */
	const char *prefix; /* each path shown under it ("web/": a workspace's other repository) */
};

/*
 * Write t's diff in mode m to fd, as git makes it. 0, or -errno with
 * *cause (caller frees); a git that failed says why on its stderr, which
 * is gathered into the cause.
 */
int diff_write(const struct repo *r, const struct diff_target *t, enum diff_mode m, int fd,
	       char **cause);

/* ---- reading one back ---- */

enum diff_line {
	DL_TEXT,   /* anything else: a commit's message, a note */
	DL_COMMIT, /* "commit <sha>": a commit starts (commits mode) */
	DL_FILE,   /* "diff --git a/X b/Y": a file starts */
	DL_META,   /* the file's header lines: index, mode, ---, +++, rename, Binary */
	DL_HUNK,   /* "@@ -a,b +c,d @@" */
	DL_ADD,
	DL_DEL,
	DL_CONTEXT,
};

struct diff_file {
	char *path; /* owned: its name after the change ("b/" side), or before for a deletion */
	int added, deleted;
	bool binary;
	int line;  /* where its "diff --git" line is, counted from 0 */
	int hunks; /* how many */
};

/*
 * A diff read line by line: diff_read_line classifies each line and
 * keeps the files with their counts as they come. new_line: the line's
 * number, from 0, as the caller counts them.
 */
struct diff_reader {
	struct diff_file *files; /* owned */
	int nfiles;
	int added, deleted; /* in all */
	bool in_hunk;
	int old_left, new_left; /* lines of the hunk still to come */
};

/* A hunk header's ranges: "@@ -old_start[,old_count] +new_start[,new_count] @@". */
struct diff_range {
	int old_start, old_count, new_start, new_count;
};
/* s (n bytes) as a hunk header (a count left out is 1): 0, or -1 when it is not one. */
int diff_hunk_range(const char *s, size_t n, struct diff_range *r);

enum diff_line diff_read_line(struct diff_reader *d, const char *line, size_t len, int lineno);
void diff_reader_free(struct diff_reader *d);

/*
 * A line's bytes as text: control characters (C0, DEL, C1 and ESC) as
 * caret notation (^[, ^?) or <U+0085>, a tab as spaces to the next stop
 * of 8, invalid UTF-8 as <XX>. So no sequence in a diffed file reaches a
 * terminal. Appended to out.
 */
struct buf;
void diff_visible(const char *s, size_t n, struct buf *out);

#endif
