/*
 * review.c - the review view (prefix D, SPEC §10): over the panes, the
 * focused agent's files with their +/- beside its diff, in three modes
 * (Tab): WIP, its branch, its commits.
 *
 * The diff comes from a child, `workrex diff HANDLE --MODE` (cmd_review.c:
 * the sandbox's commits imported first, git with no driver of the
 * worktree's), read on the loop as it writes: the first screen shows
 * while a long diff is still coming, and no read holds the loop longer
 * than one chunk takes to split into lines. Only the rows on the screen
 * are drawn, each line's bytes as text (diff_visible): a sequence in a
 * diffed file never reaches the terminal.
 *
 * With review.pager (delta --color-only when delta is installed) the same
 * diff also goes through that filter, in a second child: its line i
 * colours line i, only if its text without its SGR sequences is that
 * line's, byte for byte; only SGR is read from it, the rest is text as
 * above. A filter whose lines do not match is told and dropped.
 */
#include "../core/children.h"
#include "../core/actions.h"
#include "../core/run.h"
#include "../git/comments.h"
#include "../git/diff.h"
#include "../git/hunks.h"
#include "../term/sgr.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

/* The file list's width, when the screen is wide enough for one. */
#define LIST_MAX 32
#define LIST_MIN_COLS 60

struct review;

/* The child's reader: outlives the view until the child ended. */
struct feed {
	struct ui *ui;
	struct review *r; /* NULL: the view closed; the child is killed */
	bool coloured;    /* the pager's, not the diff's */
};

/* The pager's lines, as it wrote them. */
struct coloured {
	struct buf text; /* every line, NUL-terminated, one after another */
	size_t *off;     /* owned: where each line starts in text */
	int n, cap;
	struct buf partial, err;
	struct feed *feed;
	bool done, dropped;
	int status;
};

struct review {
	char *handle; /* owned */
	enum diff_mode mode;
	struct buf text;     /* every line, NUL-terminated, one after another */
	size_t *off;         /* owned: where each line starts in text */
	unsigned char *kind; /* owned: each line's enum diff_line */
	int *newl;           /* owned: each line's number on the changed side, 0 for none */
	int n, cap;
	int cur_new;        /* the changed side's next line number, while reading */
	struct buf partial; /* the last line, until its newline comes */
	struct diff_reader d;
	struct buf err; /* what the child said on stderr */
	struct feed *feed;
	bool done;
	int status;
	struct coloured c;         /* through review.pager; c.dropped: none, or not matching */
	int top;                   /* the first line shown */
	int hscroll;               /* columns of the diff's lines scrolled off to the left */
	struct review_comment *cm; /* owned: the agent's waiting comments, to mark their lines */
	int ncm, cm_seen;          /* how many; the agent's count they were read at */
	char *search;              /* owned: the last text searched for, or NULL */
	/* Patch mode (a): the unstaged hunks, asked one at a time (git/hunks.h). */
	bool patching;
	struct hunk_set hs;
	int at; /* the hunk asked now */
};

static void add_line(struct review *r, const char *s, size_t len)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->off = xrealloc(r->off, (size_t)r->cap * sizeof *r->off);
		r->kind = xrealloc(r->kind, (size_t)r->cap);
		r->newl = xrealloc(r->newl, (size_t)r->cap * sizeof *r->newl);
	}
	enum diff_line k = diff_read_line(&r->d, s, len, r->n);
	r->kind[r->n] = (unsigned char)k;
	/* Its number on the changed side, which a comment names. */
	struct diff_range rg;
	if (k == DL_HUNK && diff_hunk_range(s, len, &rg) == 0)
		r->cur_new = rg.new_start;
	else if (k == DL_FILE || k == DL_COMMIT)
		r->cur_new = 0;
	r->newl[r->n] = (k == DL_ADD || k == DL_CONTEXT) && r->cur_new ? r->cur_new++ : 0;
	r->off[r->n++] = r->text.len;
	buf_add(&r->text, s, len);
	buf_addch(&r->text, '\0');
}

static const char *line_at(const struct review *r, int i)
{
	return r->text.data + r->off[i];
}

static void add_coloured(struct review *r, const char *s, size_t len)
{
	struct coloured *c = &r->c;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 1024;
		c->off = xrealloc(c->off, (size_t)c->cap * sizeof *c->off);
	}
	c->off[c->n++] = c->text.len;
	buf_add(&c->text, s, len);
	buf_addch(&c->text, '\0');
}

static void on_output(void *arg, int stream, const char *p, size_t n)
{
	struct feed *f = arg;
	struct review *r = f->r;
	if (r == NULL)
		return;
	struct buf *partial = f->coloured ? &r->c.partial : &r->partial;
	void (*add)(struct review *, const char *, size_t) = f->coloured ? add_coloured : add_line;
	if (stream == 2) {
		buf_add(f->coloured ? &r->c.err : &r->err, p, n);
		return;
	}
	while (n) {
		const char *nl = memchr(p, '\n', n);
		if (nl == NULL) {
			buf_add(partial, p, n);
			break;
		}
		size_t k = (size_t)(nl - p);
		if (partial->len) {
			buf_add(partial, p, k);
			add(r, partial->data, partial->len);
			partial->len = 0;
		} else {
			add(r, p, k);
		}
		p += k + 1;
		n -= k + 1;
	}
	ui_dirty(f->ui);
}

static long backlog(void *arg)
{
	struct feed *f = arg;
	return f->r ? 0 : -1;
}

static void start(struct ui *ui, struct review *r);
static void hunks_loaded(struct ui *ui, struct review *r);

/* Both children ended: a pager that failed, or whose lines are not the diff's, is dropped. */
static void pager_check(struct ui *ui, struct review *r)
{
	struct coloured *c = &r->c;
	if (!r->done || !c->done || c->dropped)
		return;
	const char *why = c->status != 0 ? "failed"
			  : c->n != r->n ? "changed the number of lines"
					 : NULL;
	if (why == NULL || r->status != 0)
		return;
	c->dropped = true;
	const char *said = c->err.len ? c->err.data : "";
	ui_message(ui, true, "review.pager %s%s%.*s; git's colours instead", why, *said ? ": " : "",
		   (int)strcspn(said, "\n"), said);
}

static void feed_exit(void *arg, int code)
{
	struct feed *f = arg;
	struct review *r = f->r;
	if (r && f->coloured) {
		if (r->c.partial.len)
			add_coloured(r, r->c.partial.data, r->c.partial.len);
		r->c.partial.len = 0;
		buf_addch(&r->c.err, '\0');
		r->c.done = true;
		r->c.status = code;
		r->c.feed = NULL;
		pager_check(f->ui, r);
		ui_dirty(f->ui);
	} else if (r) {
		if (r->partial.len)
			add_line(r, r->partial.data, r->partial.len);
		r->partial.len = 0;
		r->done = true;
		r->status = code;
		r->feed = NULL;
		if (r->patching)
			hunks_loaded(f->ui, r);
		pager_check(f->ui, r);
		ui_dirty(f->ui);
	}
	free(f);
}

static void clear_lines(struct review *r)
{
	if (r->feed)
		r->feed->r = NULL; /* the child is killed at its next read */
	r->feed = NULL;
	buf_free(&r->text);
	buf_free(&r->partial);
	buf_free(&r->err);
	free(r->off);
	free(r->kind);
	free(r->newl);
	r->off = NULL;
	r->kind = NULL;
	r->newl = NULL;
	r->cur_new = 0;
	if (r->c.feed)
		r->c.feed->r = NULL;
	buf_free(&r->c.text);
	buf_free(&r->c.partial);
	buf_free(&r->c.err);
	free(r->c.off);
	r->c = (struct coloured){0};
	r->n = r->cap = 0;
	diff_reader_free(&r->d);
	r->done = false;
	r->status = 0;
	r->top = 0;
}

/* review.pager, or delta --color-only when delta is on PATH: a shell command, or NULL. */
static char *pager(const struct ui *ui)
{
	const char *p = ui->w->cfg.review_pager;
	if (p)
		return *p && strcmp(p, "none") != 0 ? xstrdup(p) : NULL;
	return path_has("delta") ? xstrdup("delta --color-only") : NULL;
}

/* argv's output on a new feed of r: it, or NULL when it did not start. */
static struct feed *feed_start(struct ui *ui, struct review *r, char *const *argv, bool coloured)
{
	struct feed *f = xcalloc(1, sizeof *f);
	*f = (struct feed){.ui = ui, .r = r, .coloured = coloured};
	struct run_stream rs = {.argv = argv,
				.cwd = ui->w->root,
				.output = on_output,
				.backlog = backlog,
				.exit = feed_exit,
				.arg = f};
	if (run_stream(ui->w->loop, &rs) < 0) {
		free(f);
		return NULL;
	}
	return f;
}

static void start(struct ui *ui, struct review *r)
{
	clear_lines(r);
	char *mode = xasprintf("--%s", diff_mode_name(r->mode));
	char *const more[] = {mode, "--", r->handle, NULL};
	char **argv = child_argv(ui->w, "diff", more);
	r->feed = feed_start(ui, r, argv, false);
	child_argv_free(argv);
	if (r->feed == NULL) {
		buf_addstr(&r->err, "workrex diff did not start");
		r->done = true;
		r->status = 127;
	}
	/* The same diff again, through the pager, in a shell the user's command is written for. */
	char *cmd = r->feed ? pager(ui) : NULL;
	if (cmd) {
		char *const colour[] = {"--color", mode, "--", r->handle, NULL};
		char **sh = child_argv_piped(ui->w, "diff", colour, cmd);
		r->c.feed = feed_start(ui, r, sh, true);
		child_argv_free(sh);
	}
	r->c.dropped = r->c.feed == NULL;
	free(cmd);
	free(mode);
}

static const struct mode_ops review_mode;
static void review_close(struct ui *ui);

/* The review view open now, or NULL. */
static struct review *review_of(const struct ui *ui)
{
	return ui_mode(ui, &review_mode);
}

void review_open(struct ui *ui, const struct agent *a)
{
	review_close(ui);
	if (!a->git.worktree) {
		ui_message(ui, true, "review: %s is the project's own directory, not an agent's",
			   a->handle);
		return;
	}
	struct review *r = xcalloc(1, sizeof *r);
	r->handle = xstrdup(a->handle);
	r->mode = a->remote.host ? DIFF_BRANCH : DIFF_WIP;
	ui_mode_open(ui, &review_mode, r);
	start(ui, r);
}

static void review_close(struct ui *ui)
{
	ui_mode_close(ui, &review_mode);
}

static void review_free(struct ui *ui, void *data)
{
	struct review *r = data;
	(void)ui;
	clear_lines(r);
	hunks_free(&r->hs);
	comments_free(r->cm, r->ncm);
	free(r->search);
	free(r->handle);
	free(r);
}

/* ---- patch mode ---- */

/* The unstaged diff came whole: its hunks, or back to WIP when there are none. */
static void hunks_loaded(struct ui *ui, struct review *r)
{
	struct buf all = {0};
	for (int i = 0; i < r->n; i++) {
		buf_addstr(&all, line_at(r, i));
		buf_addch(&all, '\n');
	}
	hunks_free(&r->hs);
	int rc = r->status == 0 ? hunks_parse(all.data ? all.data : "", all.len, &r->hs) : -1;
	buf_free(&all);
	r->at = 0;
	if (rc == 0 && r->hs.nhunks)
		return;
	ui_message(ui, rc < 0, "patch: %s",
		   rc < 0          ? "the unstaged diff could not be read"
		   : r->hs.skipped ? "only new, deleted or binary files: git add stages those"
				   : "nothing unstaged to stage");
	hunks_free(&r->hs);
	r->patching = false;
	r->mode = DIFF_WIP;
	start(ui, r);
}

/* What a patch mode's git apply finds its view by: never a pointer that may have gone. */
struct staging {
	struct ui *ui;
	char *handle; /* owned */
	int hunks;
};

static void staged(void *arg, int status, const char *output, const char *last)
{
	(void)output;
	struct staging *st = arg;
	struct ui *ui = st->ui;
	if (status == 0)
		ui_message(ui, false, "%s: %d hunk%s staged", st->handle, st->hunks,
			   st->hunks == 1 ? "" : "s");
	else
		ui_message(ui, true, "%s: staging failed: %s", st->handle,
			   last && *last ? last : "git apply failed");
	struct review *r = review_of(ui);
	if (r && !r->patching && strcmp(r->handle, st->handle) == 0)
		start(ui, r); /* WIP again, with what is staged now */
	free(st->handle);
	free(st);
}

/* The answers so far go to the index in one git apply, as git add -p's do. */
static void patch_finish(struct ui *ui, struct review *r)
{
	char *patch = hunks_patch(&r->hs);
	int n = 0;
	for (int i = 0; i < r->hs.nhunks; i++)
		n += r->hs.hunks[i].answer == 'y';
	hunks_free(&r->hs);
	r->patching = false;
	r->mode = DIFF_WIP;
	struct agent *a = session_find_agent(ui->w->s, r->handle);
	if (patch == NULL || a == NULL) {
		ui_message(ui, false, "%s: nothing staged", r->handle);
		free(patch);
		start(ui, r);
		return;
	}
	clear_lines(r);
	r->done = true;
	char *const argv[] = {"git", "-c", "core.hooksPath=/dev/null", "apply", "--cached",
			      "-",   NULL};
	struct staging *st = xcalloc(1, sizeof *st);
	*st = (struct staging){.ui = ui, .handle = xstrdup(r->handle), .hunks = n};
	struct run_opts o = {
		.argv = argv, .cwd = a->path, .input = patch, .done = staged, .arg = st};
	if (run_start(ui->w->loop, &o) < 0) {
		ui_message(ui, true, "%s: git apply did not start", r->handle);
		free(st->handle);
		free(st);
		start(ui, r);
	}
	free(patch);
}

static void patch_key(struct ui *ui, struct review *r, int key)
{
	struct hunk_set *hs = &r->hs;
	enum view_op op = view_key(VIEW_PATCH, key);
	switch (op) {
	case V_STAGE:
	case V_SKIP:
		hs->hunks[r->at++].answer = op == V_STAGE ? 'y' : 'n';
		if (r->at == hs->nhunks) {
			patch_finish(ui, r);
			return;
		}
		break;
	case V_SPLIT:
		if (!hunks_split(hs, r->at))
			ui_message(ui, true, "patch: this hunk cannot be split");
		break;
	case V_UNDO:
		if (r->at > 0)
			hs->hunks[--r->at].answer = 0;
		break;
	case V_CLOSE:
		patch_finish(ui, r);
		return;
	default:
		return;
	}
	ui_dirty(ui);
}

static attr_t line_attr(struct ui *ui, enum diff_line k);
static void draw_text(int y, int x, int width, const char *s, size_t n);
static bool draw_coloured(struct ui *ui, struct review *r, int i, int y, int x, int width);

static void patch_draw(struct ui *ui, struct review *r, int rows)
{
	const struct hunk *h = &r->hs.hunks[r->at];
	const struct hunk_file *f = &r->hs.files[h->file];
	int staged = 0;
	for (int i = 0; i < r->hs.nhunks; i++)
		staged += r->hs.hunks[i].answer == 'y';
	char *head = xasprintf(" patch %s  [%d/%d]  %s  %d staged  "
			       "y stage, n skip, s split, u undo, q done",
			       r->handle, r->at + 1, r->hs.nhunks, f->path, staged);
	attr_set(A_REVERSE, 0, NULL);
	mvhline(0, 0, ' ', ui->cols);
	draw_text(0, 0, ui->cols, head, strlen(head));
	attr_set(A_NORMAL, 0, NULL);
	free(head);
	char *at = xasprintf("@@ -%d,%d +%d,%d @@", h->old_start, h->old_count, h->new_start,
			     h->new_count);
	for (int y = 0; y < rows; y++) {
		move(1 + y, 0);
		clrtoeol();
		const char *s = y == 0 ? at : y - 1 < h->nlines ? h->lines[y - 1] : NULL;
		if (s == NULL)
			continue;
		enum diff_line k = y == 0        ? DL_HUNK
				   : s[0] == '+' ? DL_ADD
				   : s[0] == '-' ? DL_DEL
						 : DL_CONTEXT;
		attr_set(line_attr(ui, k), 0, NULL);
		draw_text(1 + y, 0, ui->cols, s, strlen(s));
		attr_set(A_NORMAL, 0, NULL);
	}
	free(at);
}

/* ---- commit (c) ---- */

static void committed(void *arg, int status, const char *output, const char *last)
{
	struct staging *st = arg;
	struct ui *ui = st->ui;
	/* git commit's first line: "[branch abc1234] subject". */
	const char *first = output ? output + strspn(output, "\n") : "";
	if (status == 0)
		ui_message(ui, false, "%s: committed %.*s", st->handle, (int)strcspn(first, "\n"),
			   first);
	else
		ui_message(ui, true, "%s: commit failed: %s", st->handle,
			   last && *last ? last : "git commit failed");
	struct review *r = review_of(ui);
	if (r && !r->patching && strcmp(r->handle, st->handle) == 0)
		start(ui, r);
	free(st->handle);
	free(st);
}

/* What is staged, with the message typed; git hooks stay off (the worktree is the agent's). */
static void commit_answer(struct ui *ui, const char *message, void *arg)
{
	(void)arg;
	struct review *r = review_of(ui);
	struct agent *a = r ? session_find_agent(ui->w->s, r->handle) : NULL;
	if (message == NULL || a == NULL)
		return;
	if (*message == '\0') {
		ui_message(ui, true, "%s: no message, nothing committed", a->handle);
		return;
	}
	char *const argv[] = {"git",           "-c", "core.hooksPath=/dev/null", "commit", "-m",
			      (char *)message, NULL};
	struct staging *st = xcalloc(1, sizeof *st);
	*st = (struct staging){.ui = ui, .handle = xstrdup(a->handle)};
	struct run_opts o = {.argv = argv, .cwd = a->path, .done = committed, .arg = st};
	if (run_start(ui->w->loop, &o) < 0) {
		ui_message(ui, true, "%s: git commit did not start", a->handle);
		free(st->handle);
		free(st);
	}
}

/*
 * Whose index the review's a and c would change: none here for an agent on
 * a server (its worktree is there), and one a sandboxed agent never sees
 * (its git dir is its own, git/private.h). NULL: the host's is its own.
 */
static const char *index_elsewhere(struct ui *ui, const struct review *r)
{
	struct agent *a = session_find_agent(ui->w->s, r->handle);
	if (a == NULL)
		return "it is gone";
	if (a->remote.host)
		return "its worktree is on its server";
	if (sandbox_wanted(ui->w, a))
		return "it runs in a sandbox, whose index is its own";
	return NULL;
}

/* git diff --cached --quiet said: 1, something staged (ask the message); 0, nothing. */
static void staged_checked(void *arg, int status, const char *output, const char *last)
{
	struct staging *st = arg;
	struct ui *ui = st->ui;
	(void)output;
	(void)last;
	if (review_of(ui) && !ui->quitting) {
		if (status == 1)
			ui_prompt(ui, "commit message: ", false, commit_answer, NULL);
		else if (status == 0)
			ui_message(
				ui, true,
				"%s: nothing staged to commit: a stages hunks (patch mode), or git "
				"add in its pane; Tab shows what is staged",
				st->handle);
		else
			ui_message(ui, true, "%s: git diff --cached failed", st->handle);
	}
	free(st->handle);
	free(st);
}

static void commit(struct ui *ui, struct review *r)
{
	/* An agent whose index is not the host's commits itself, as asked. */
	if (strcmp(ui->w->cfg.review_commit, "agent") != 0 && index_elsewhere(ui, r) == NULL) {
		/* Asked for a message only when there is something to commit. */
		struct agent *a = session_find_agent(ui->w->s, r->handle);
		char *const argv[] = {"git", "diff", "--cached", "--quiet", NULL};
		struct staging *st = xcalloc(1, sizeof *st);
		*st = (struct staging){.ui = ui, .handle = xstrdup(r->handle)};
		struct run_opts o = {
			.argv = argv, .cwd = a->path, .done = staged_checked, .arg = st};
		if (run_start(ui->w->loop, &o) < 0) {
			free(st->handle);
			free(st);
			ui_prompt(ui, "commit message: ", false, commit_answer, NULL);
		}
		return;
	}
	/*
	 * The agent commits, asked in words typed into its input: only when it
	 * said it waits (its CLI at its prompt), not into whatever runs there.
	 */
	struct agent *ag = session_find_agent(ui->w->s, r->handle);
	if (ag && ag->status != WRX_STATUS_WAITING && ag->status != WRX_STATUS_DONE) {
		ui_message(ui, true,
			   "%s has not said it waits for input (%s): its commit is asked of it "
			   "only then, not typed into what runs there",
			   r->handle,
			   ag->status == WRX_STATUS_NONE ? "no status" : status_word(ag->status));
		return;
	}
	json_object *args = json_object_new_object();
	json_object_object_add(args, "handle", json_object_new_string(r->handle));
	json_object_object_add(args, "text",
			       json_object_new_string(ui->w->cfg.review_commit_prompt));
	json_object_object_add(args, "enter", json_object_new_boolean(1));
	actions_call(ui->w, "send", args, DOOR_UI, 0, NULL, NULL); /* it says how it went */
}

/* ---- comments (o, S) ---- */

static int file_at(const struct review *r, int line);

/* What a comment's question keeps until the user answers. */
struct pending {
	char *handle, *file, *hunk; /* owned */
	int line;
};

static void comment_answer(struct ui *ui, const char *text, void *arg)
{
	struct pending *p = arg;
	if (text && *text) {
		json_object *args = json_object_new_object();
		json_object_object_add(args, "handle", json_object_new_string(p->handle));
		json_object_object_add(args, "file", json_object_new_string(p->file));
		json_object_object_add(args, "line", json_object_new_int(p->line));
		json_object_object_add(args, "hunk", json_object_new_string(p->hunk));
		json_object_object_add(args, "text", json_object_new_string(text));
		actions_call(ui->w, "comment", args, DOOR_UI, 0, NULL, NULL); /* it says how many */
	}
	free(p->handle);
	free(p->file);
	free(p->hunk);
	free(p);
}

/* o: a comment on the line at the top of the view, in its hunk. */
static bool boundary(const struct review *r, int i)
{
	return r->kind[i] == DL_HUNK || r->kind[i] == DL_FILE || r->kind[i] == DL_COMMIT;
}

static void comment_here(struct ui *ui, struct review *r)
{
	/* On a file's header (] put it at the top): its first hunk. */
	int at = r->top;
	if (at < 0 || at >= r->n) { /* no lines (no changes, no commits) */
		ui_message(ui, true, "review: a comment goes on a hunk: n moves to one");
		return;
	}
	if (r->kind[at] == DL_FILE || r->kind[at] == DL_META) {
		int next = at + 1;
		while (next < r->n && !boundary(r, next))
			next++;
		if (next < r->n && r->kind[next] == DL_HUNK)
			at = next;
	}
	int h = at;
	while (h >= 0 && !boundary(r, h))
		h--;
	int f = file_at(r, at);
	struct diff_range rg;
	if (h < 0 || r->kind[h] != DL_HUNK || f < 0 ||
	    diff_hunk_range(line_at(r, h), strlen(line_at(r, h)), &rg) < 0) {
		ui_message(ui, true, "review: a comment goes on a hunk: n moves to one");
		return;
	}
	/*
	 * Its line on the changed side: the hunk's start and the lines kept or
	 * added since, up to the line at the top or, on the hunk's header,
	 * its first change.
	 */
	int to = at;
	if (at == h)
		for (to = h + 1; to < r->n && r->kind[to] == DL_CONTEXT;)
			to++;
	int line = rg.new_start;
	for (int i = h + 1; i < to; i++)
		line += r->kind[i] == DL_ADD || r->kind[i] == DL_CONTEXT;
	struct buf hunk = {0};
	for (int i = h; i < r->n && (i == h || !boundary(r, i)); i++) {
		buf_addstr(&hunk, line_at(r, i));
		buf_addch(&hunk, '\n');
	}
	struct pending *p = xcalloc(1, sizeof *p);
	*p = (struct pending){.handle = xstrdup(r->handle),
			      .file = xstrdup(r->d.files[f].path),
			      .hunk = hunk.data ? hunk.data : xstrdup(""),
			      .line = line};
	char *label = xasprintf("comment on %s:%d: ", p->file, line);
	ui_prompt(ui, label, false, comment_answer, p);
	free(label);
}

/* S: the comments waiting, to the agent as one message (the review-send verb). */
static void comments_send(struct ui *ui, struct review *r)
{
	json_object *args = json_object_new_object();
	json_object_object_add(args, "handle", json_object_new_string(r->handle));
	actions_call(ui->w, "review-send", args, DOOR_UI, 0, NULL, NULL);
}

/*
 * The lines the view moves in: the whole diff, or in commits mode the
 * commit the top line is in (one commit at a time; h/l go to the next).
 * *nth: that commit's number from 1 and *of how many there are.
 */
static void span(const struct review *r, int *lo, int *hi, int *nth, int *of)
{
	*lo = 0;
	*hi = r->n;
	*nth = *of = 0;
	if (r->mode != DIFF_COMMITS)
		return;
	for (int i = 0; i < r->n; i++) {
		if (r->kind[i] != DL_COMMIT)
			continue;
		(*of)++;
		if (i <= r->top) {
			*lo = i;
			*nth = *of;
		} else if (*hi == r->n && *nth) {
			*hi = i;
		}
	}
}

/* ---- drawing ---- */

static int body_rows(const struct ui *ui)
{
	return WRX_MAX(ui->rows - 2, 1);
}

static int list_width(const struct ui *ui)
{
	return ui->cols >= LIST_MIN_COLS ? WRX_MIN(LIST_MAX, ui->cols / 3) : 0;
}

/* The file the line at top belongs to, or -1 above the first. */
static int file_at(const struct review *r, int line)
{
	int lo = 0, hi = r->d.nfiles - 1, at = -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (r->d.files[mid].line <= line) {
			at = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return at;
}

static attr_t line_attr(struct ui *ui, enum diff_line k)
{
	static const short fg[] = {
		[DL_TEXT] = -1,       [DL_COMMIT] = COLOR_YELLOW, [DL_FILE] = -1,
		[DL_META] = -1,       [DL_HUNK] = COLOR_CYAN,     [DL_ADD] = COLOR_GREEN,
		[DL_DEL] = COLOR_RED, [DL_CONTEXT] = -1};
	attr_t a = k == DL_FILE || k == DL_META || k == DL_COMMIT ? A_BOLD : A_NORMAL;
	int pair = fg[k] >= 0 ? ui_colour_pair(ui, fg[k], -1) : 0;
	return a | (attr_t)COLOR_PAIR(pair);
}

static void draw_text_from(int y, int x, int width, const char *s, size_t n, int skip)
{
	struct buf v = {0};
	diff_visible(s, n, &v);
	buf_addch(&v, '\0');
	const char *p = v.data;
	/* Scrolled sideways: skip characters (a UTF-8 lead byte starts one). */
	for (int k = 0; *p && k < skip; k++)
		for (p++; ((unsigned char)*p & 0xc0) == 0x80; p++)
			;
	mvaddnstr(y, x, p, width); /* bytes; curses stops at the width it draws */
	buf_free(&v);
}

static void draw_text(int y, int x, int width, const char *s, size_t n)
{
	draw_text_from(y, x, width, s, n, 0);
}

/* Bytes as text from the cursor in style st, up to column end. */
static void draw_run(struct ui *ui, const struct wrx_cell *st, const char *s, size_t n, int end)
{
	int y, x;
	getyx(stdscr, y, x);
	(void)y;
	if (n == 0 || x >= end)
		return;
	int pair = 0;
	attr_set(ui_cell_attr(ui, st, false, &pair), 0, &pair);
	struct buf v = {0};
	diff_visible(s, n, &v);
	addnstr(v.data, (int)WRX_MIN(v.len, (size_t)(end - x))); /* bytes: never past end */
	buf_free(&v);
}

/*
 * Line i as the pager coloured it, at (y, x) in width columns: true; false
 * (nothing drawn) when there is no such line or its text is not line i's.
 */
static bool draw_coloured(struct ui *ui, struct review *r, int i, int y, int x, int width)
{
	const struct coloured *c = &r->c;
	if (c->dropped || i >= c->n)
		return false;
	const char *col = c->text.data + c->off[i], *plain = line_at(r, i);
	size_t n = strlen(col), pn = strlen(plain);
	char *bare = xmalloc(n + 1);
	bool same = sgr_strip(col, n, bare) == pn && memcmp(bare, plain, pn) == 0;
	free(bare);
	if (!same)
		return false;
	struct wrx_cell st = {0};
	int end = x + width;
	move(y, x);
	for (size_t at = 0, from = 0;; at++) {
		size_t len = at < n && col[at] == '\033' ? sgr_at(col + at, n - at) : 0;
		if (len == 0 && at < n)
			continue;
		draw_run(ui, &st, col + from, at - from, end);
		if (at == n)
			break;
		if (col[at + len - 1] == 'K') {
			/* The rest of the row in the background so far, as a terminal erases it. */
			int cy, cx, pair = 0;
			getyx(stdscr, cy, cx);
			attr_set(ui_cell_attr(ui, &st, false, &pair), 0, &pair);
			if (cx < end)
				mvhline(cy, cx, ' ', end - cx);
		}
		sgr_apply(&st, col + at, len);
		at += len - 1;
		from = at + 1;
	}
	attr_set(A_NORMAL, 0, NULL);
	return true;
}

static void draw_list(struct ui *ui, struct review *r, int w, int rows, int cur, int lo, int hi)
{
	/* The files of the span: in commits mode, the commit's. */
	int from = 0, to = r->d.nfiles;
	while (from < to && r->d.files[from].line < lo)
		from++;
	while (to > from && r->d.files[to - 1].line >= hi)
		to--;
	int first = cur >= from + rows ? cur - rows + 1 : from;
	for (int y = 0; y < rows; y++) {
		int i = first + y;
		move(1 + y, 0);
		attr_set(A_NORMAL, 0, NULL);
		for (int x = 0; x < w; x++)
			addch(' ');
		if (i >= to)
			continue;
		const struct diff_file *f = &r->d.files[i];
		char stat[32];
		if (f->binary)
			snprintf(stat, sizeof stat, " bin ");
		else
			snprintf(stat, sizeof stat, "%+d -%d ", f->added, f->deleted);
		attr_set(i == cur ? A_REVERSE : A_NORMAL, 0, NULL);
		/* Its path, cut from the left when long: two input.c are two paths. */
		int room = w - 2 - (int)strlen(stat) - 1;
		const char *path = f->path;
		bool cut = false;
		while ((int)strlen(path) > room && strchr(path, '/')) {
			path = strchr(path, '/') + 1;
			cut = true;
		}
		char *row = xasprintf(" %s%s%s", stat, cut ? "…/" : "", path);
		draw_text(1 + y, 0, w - 1, row, strlen(row));
		free(row);
	}
	attr_set(A_NORMAL, 0, NULL);
	mvvline(1, w - 1, ACS_VLINE, rows);
}

/* The agent's waiting comments, read again when its count changed (o, S, review --edit). */
static void comments_seen(struct ui *ui, struct review *r)
{
	struct agent *a = session_find_agent(ui->w->s, r->handle);
	int now = a ? a->comments : 0;
	if (r->cm && now == r->cm_seen)
		return;
	comments_free(r->cm, r->ncm);
	r->cm = NULL;
	r->ncm = WRX_MAX(comments_load(ui->w->root, r->handle, &r->cm), 0);
	r->cm_seen = now;
	if (r->cm == NULL)
		r->cm = xcalloc(1, sizeof *r->cm); /* read, none: not read again until it changes */
}

static bool commented(const struct review *r, int i)
{
	if (r->newl == NULL || r->newl[i] == 0 || r->ncm == 0)
		return false;
	int f = file_at(r, i);
	for (int k = 0; f >= 0 && k < r->ncm; k++)
		if (r->cm[k].line == r->newl[i] && !strcmp(r->cm[k].file, r->d.files[f].path))
			return true;
	return false;
}

static void review_draw(struct ui *ui, void *data)
{
	struct review *r = data;
	int rows = body_rows(ui);
	if (ui->rows < 2 || ui->cols < 1)
		return;
	if (r->patching && r->done && r->hs.nhunks) {
		patch_draw(ui, r, rows);
		return;
	}
	int cur = file_at(r, r->top), lo, hi, nth, of;
	span(r, &lo, &hi, &nth, &of);
	char *where = r->n ? xasprintf("%d-%d/%d", r->top + 1, WRX_MIN(r->top + rows, hi), r->n)
			   : xstrdup("0/0");
	char *mode = of ? xasprintf("commits %d/%d", nth, of) : xstrdup(diff_mode_name(r->mode));
	/* The span's files and lines: in commits mode, that commit's. */
	int files = 0, added = 0, deleted = 0;
	for (int i = 0; i < r->d.nfiles; i++) {
		if (r->d.files[i].line < lo || r->d.files[i].line >= hi)
			continue;
		files++;
		added += r->d.files[i].added;
		deleted += r->d.files[i].deleted;
	}
	const char *state = !r->done         ? "  reading..."
			    : r->status != 0 ? "  FAILED"
			    : r->n == 0      ? "  no changes"
					     : "";
	/* What it shows first, then the keys: ? lists them all (at 80 columns the rest is cut). */
	char *head = xasprintf(" review %s  [%s]  %d file%s +%d -%d  %s%s  ? keys  Tab mode  "
			       "o comment  S send  c commit  m merge  q closes",
			       r->handle, mode, files, files == 1 ? "" : "s", added, deleted, where,
			       state);
	attr_set(A_REVERSE, 0, NULL);
	mvhline(0, 0, ' ', ui->cols);
	draw_text(0, 0, ui->cols, head, strlen(head));
	attr_set(A_NORMAL, 0, NULL);
	free(head);
	free(where);
	free(mode);
	int lw = list_width(ui);
	if (lw)
		draw_list(ui, r, lw, rows, cur, lo, hi);
	int w = ui->cols - lw;
	comments_seen(ui, r);
	for (int y = 0; y < rows; y++) {
		int i = r->top + y;
		move(1 + y, lw);
		clrtoeol();
		/* A line a waiting comment is on: marked at the right edge. */
		bool marked = i < hi && commented(r, i);
		int tw = marked ? w - 2 : w;
		if (i < hi && (r->hscroll || !draw_coloured(ui, r, i, 1 + y, lw, tw))) {
			attr_set(line_attr(ui, (enum diff_line)r->kind[i]), 0, NULL);
			const char *s = line_at(r, i);
			draw_text_from(1 + y, lw, tw, s, strlen(s), r->hscroll);
			attr_set(A_NORMAL, 0, NULL);
		}
		if (marked)
			ui_put_text(1 + y, lw + w - 2, 2, "\u270e", A_BOLD);
		if (i < hi) {
			continue;
		} else if (i == r->n && r->done && r->status != 0 && r->err.len) {
			attr_set(line_attr(ui, DL_DEL), 0, NULL);
			draw_text(1 + y, lw, w, r->err.data, strcspn(r->err.data, "\n"));
			attr_set(A_NORMAL, 0, NULL);
		}
	}
}

/* ---- keys ---- */

/* The next line from `from` (by step) whose kind is k, or -1. */
static int next_kind(const struct review *r, int from, int step, enum diff_line k)
{
	for (int i = from; i >= 0 && i < r->n; i += step)
		if (r->kind[i] == k)
			return i;
	return -1;
}

static void search_done(struct ui *ui, const char *text, void *arg)
{
	(void)arg;
	struct review *r = review_of(ui);
	if (r == NULL || text == NULL)
		return;
	if (*text) {
		free(r->search);
		r->search = xstrdup(text);
	}
	if (r->search == NULL)
		return;
	for (int k = 1; k <= r->n; k++) {
		int i = (r->top + k) % r->n;
		if (strstr(line_at(r, i), r->search)) {
			r->top = i;
			ui_dirty(ui);
			return;
		}
	}
	ui_message(ui, true, "review: %s: not found", r->search);
}

/* ?: the review view's keys and its patch mode's, from the key table. */
static void keys_shown(struct ui *ui)
{
	struct buf b = {0};
	view_help(VIEW_REVIEW, &b);
	buf_addf(&b, "\nin %s:\n", view_name(VIEW_PATCH));
	view_help(VIEW_PATCH, &b);
	textview_open(ui, "review keys", b.data);
	buf_free(&b);
}

/* What a key that acts did: nothing (not one), all (the view may be gone), or a new diff. */
enum review_acted { REVIEW_KEY_NOT, REVIEW_KEY_DONE, REVIEW_KEY_RESTARTED };

static enum review_acted review_act(struct ui *ui, struct review *r, enum view_op op)
{
	switch (op) {
	case V_PATCH: /* the unstaged hunks, one at a time */
		if (index_elsewhere(ui, r)) {
			ui_message(ui, true, "patch: %s: %s; c asks it to commit", r->handle,
				   index_elsewhere(ui, r));
			return REVIEW_KEY_DONE;
		}
		r->patching = true;
		r->mode = DIFF_UNSTAGED;
		start(ui, r);
		return REVIEW_KEY_RESTARTED;
	case V_NEXT_MODE:
		r->patching = false;
		r->mode = (enum diff_mode)((r->mode + 1) % DIFF_MODES);
		start(ui, r);
		return REVIEW_KEY_RESTARTED;
	case V_CLOSE:
		review_close(ui);
		return REVIEW_KEY_DONE;
	case V_KEYS:
		keys_shown(ui);
		return REVIEW_KEY_DONE;
	case V_SEARCH:
		ui_prompt(ui, "search: ", false, search_done, NULL);
		return REVIEW_KEY_DONE;
	case V_COMMIT:
		commit(ui, r);
		return REVIEW_KEY_DONE;
	case V_COMMENT:
		comment_here(ui, r);
		return REVIEW_KEY_DONE;
	case V_SEND:
		comments_send(ui, r);
		return REVIEW_KEY_DONE;
	case V_MERGE: /* asked with what it brings (merge --preview) */
		review_close(ui);
		prompts_agent_verb(ui, "merge");
		return REVIEW_KEY_DONE;
	default:
		return REVIEW_KEY_NOT;
	}
}

/* A hunk, file or commit to jump to (its first line), -1 for none. */
static int review_jump(struct review *r, enum view_op op, int lo, int hi, bool commits)
{
	int cur = file_at(r, r->top), to;
	switch (op) {
	case V_NEXT_HUNK:
		return (to = next_kind(r, r->top + 1, 1, DL_HUNK)) >= 0 && to < hi ? to : -1;
	case V_PREV_HUNK:
		return (to = next_kind(r, r->top - 1, -1, DL_HUNK)) >= lo ? to : -1;
	case V_NEXT_FILE:
		return cur + 1 < r->d.nfiles && r->d.files[cur + 1].line < hi
			       ? r->d.files[cur + 1].line
			       : -1;
	case V_PREV_FILE:
		if (cur >= 0 && r->d.files[cur].line < r->top && r->d.files[cur].line >= lo)
			return r->d.files[cur].line;
		return cur > 0 && r->d.files[cur - 1].line >= lo ? r->d.files[cur - 1].line : -1;
	case V_NEXT_COMMIT: /* commits mode: the next commit, the one before */
	case V_RIGHT:
		return commits && hi < r->n ? hi : -1;
	case V_PREV_COMMIT:
	case V_LEFT:
		return commits ? next_kind(r, lo - 1, -1, DL_COMMIT) : -1;
	default:
		return -1;
	}
}

/* Where a moving key takes the top line; false for a key that does not move. */
static bool review_move(struct review *r, enum view_op op, int rows, int lo, int last)
{
	switch (op) {
	case V_DOWN:
	case V_UP:
		r->top += op == V_DOWN ? 1 : -1;
		return true;
	case V_HALF_DOWN:
	case V_HALF_UP:
		r->top += op == V_HALF_DOWN ? rows / 2 : -rows / 2;
		return true;
	case V_PAGE_DOWN:
	case V_PAGE_UP:
		r->top += op == V_PAGE_DOWN ? rows : -rows;
		return true;
	case V_TOP:
		r->top = lo;
		return true;
	case V_END:
		r->top = last;
		return true;
	case V_SIDE_RIGHT: /* sideways: long lines read on */
	case V_SIDE_LEFT:
	case V_RIGHT: /* sideways, but in commits mode the next commit */
	case V_LEFT:
		r->hscroll =
			WRX_MAX(r->hscroll + (op == V_SIDE_RIGHT || op == V_RIGHT ? 8 : -8), 0);
		return true;
	default:
		return false;
	}
}

static void review_key(struct ui *ui, void *data, int key)
{
	struct review *r = data;
	int lo, hi, nth, of;
	span(r, &lo, &hi, &nth, &of);
	int rows = body_rows(ui), last = WRX_MAX(hi - rows, lo);
	if (r->patching && r->done && r->hs.nhunks) {
		patch_key(ui, r, key);
		return;
	}
	enum view_op op = view_key(VIEW_REVIEW, key);
	enum review_acted acted = review_act(ui, r, op);
	if (acted == REVIEW_KEY_DONE)
		return;
	/* A hunk, file or commit jumped to shows at the top, even near the end. */
	bool jump = op == V_NEXT_HUNK || op == V_PREV_HUNK || op == V_NEXT_FILE ||
		    op == V_PREV_FILE || op == V_NEXT_COMMIT || op == V_PREV_COMMIT ||
		    op == V_RIGHT || op == V_LEFT;
	bool sideways = !of && (op == V_RIGHT || op == V_LEFT);
	int to = jump && !sideways ? review_jump(r, op, lo, hi, of > 0) : -1;
	if (to >= 0)
		r->top = to;
	else if (acted == REVIEW_KEY_NOT && (!jump || sideways) &&
		 !review_move(r, op, rows, lo, last))
		return;
	if (!jump)
		r->top = WRX_MIN(r->top, last);
	r->top = WRX_MAX(WRX_MIN(r->top, WRX_MAX(r->n - 1, 0)), jump ? 0 : lo);
	ui_dirty(ui);
}

static const struct mode_ops review_mode = {
	.name = "review",
	.draw = review_draw,
	.key = review_key,
	.free = review_free,
};
