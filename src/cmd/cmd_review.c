/*
 * cmd_review.c - diff: what an agent changed (SPEC §10), for a person, a
 * script (--stat, --json) and the dashboard's review view, which runs it
 * as its child and reads the plain diff as it comes.
 *
 * A sandboxed agent's commits are imported (verified) first, a remote
 * agent's fetched back, as merge does: what is shown is what would merge.
 */
#include "../git/comments.h"
#include "../git/diff.h"
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The diff's lines from fd (at its start), each to fn. */
static void each_line(int fd, void (*fn)(void *arg, const char *s, size_t n, int lineno), void *arg)
{
	FILE *f = fdopen(dup(fd), "r");
	if (f == NULL)
		return;
	rewind(f);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0;
	while ((n = getline(&line, &cap, f)) >= 0)
		fn(arg, line, (size_t)n, lineno++);
	free(line);
	fclose(f);
}

static void read_one(void *arg, const char *s, size_t n, int lineno)
{
	diff_read_line(arg, s, n, lineno);
}

/* For a terminal: coloured by kind, every byte of the files as text. */
struct show {
	struct diff_reader d;
	struct buf out;
};

static void show_one(void *arg, const char *s, size_t n, int lineno)
{
	struct show *sh = arg;
	static const char *const sgr[] = {
		[DL_TEXT] = "",        [DL_COMMIT] = "\033[33m", [DL_FILE] = "\033[1m",
		[DL_META] = "\033[1m", [DL_HUNK] = "\033[36m",   [DL_ADD] = "\033[32m",
		[DL_DEL] = "\033[31m", [DL_CONTEXT] = "",
	};
	enum diff_line k = diff_read_line(&sh->d, s, n, lineno);
	if (n && s[n - 1] == '\n')
		n--;
	buf_addstr(&sh->out, sgr[k]);
	diff_visible(s, n, &sh->out);
	buf_addstr(&sh->out, *sgr[k] ? "\033[m\n" : "\n");
	if (sh->out.len > 65536) {
		fwrite(sh->out.data, 1, sh->out.len, stdout);
		sh->out.len = 0;
	}
}

static json_object *stat_json(const struct agent_rec *a, enum diff_mode m, const char *base,
			      const struct diff_reader *d)
{
	json_object *o = json_object_new_object(), *files = json_object_new_array();
	json_object_object_add(o, "handle", json_object_new_string(a->handle));
	json_object_object_add(o, "mode", json_object_new_string(diff_mode_name(m)));
	if (a->branch)
		json_object_object_add(o, "branch", json_object_new_string(a->branch));
	if (base)
		json_object_object_add(o, "base", json_object_new_string(base));
	for (int i = 0; i < d->nfiles; i++) {
		const struct diff_file *f = &d->files[i];
		json_object *j = json_object_new_object();
		json_object_object_add(j, "path", json_object_new_string(f->path));
		json_object_object_add(j, "added", json_object_new_int(f->added));
		json_object_object_add(j, "deleted", json_object_new_int(f->deleted));
		json_object_object_add(j, "hunks", json_object_new_int(f->hunks));
		json_object_object_add(j, "binary", json_object_new_boolean(f->binary));
		json_object_array_add(files, j);
	}
	json_object_object_add(o, "files", files);
	json_object_object_add(o, "added", json_object_new_int(d->added));
	json_object_object_add(o, "deleted", json_object_new_int(d->deleted));
	return o;
}

static void print_stat(const struct diff_reader *d)
{
	for (int i = 0; i < d->nfiles; i++) {
		const struct diff_file *f = &d->files[i];
		struct buf name = {0};
		diff_visible(f->path, strlen(f->path), &name);
		buf_addch(&name, '\0');
		if (f->binary)
			printf("%6s %6s  %s\n", "bin", "", name.data);
		else
			printf("%+6d %6d  %s\n", f->added, -f->deleted, name.data);
		buf_free(&name);
	}
	printf("%d file%s, +%d -%d\n", d->nfiles, d->nfiles == 1 ? "" : "s", d->added, d->deleted);
}

int cmd_diff(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"wip", no_argument, NULL, 'w'},     {"branch", no_argument, NULL, 'b'},
		{"commits", no_argument, NULL, 'c'}, {"stat", no_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},    {"unstaged", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},    {0, 0, 0, 0},
	};
	const struct cmd *self = cmd_find("diff");
	int mode = -1, c;
	bool stat = false, json = false;
	optind = 0;
	while ((c = getopt_exact(argc, argv, "", opts)) != -1) {
		if (c == 'w' || c == 'b' || c == 'c' || c == 'u') {
			int m = c == 'w'   ? DIFF_WIP
				: c == 'b' ? DIFF_BRANCH
				: c == 'c' ? DIFF_COMMITS
					   : DIFF_UNSTAGED;
			if (mode >= 0 && mode != m)
				return cmd_usage(self);
			mode = m;
		} else if (c == 's') {
			stat = true;
		} else if (c == 'j') {
			json = true;
		} else {
			return cmd_usage(self);
		}
	}
	if (argc - optind > 1)
		return cmd_usage(self);
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "diff", optind < argc ? argv[optind] : NULL, &a);
	if (rc)
		return rc;
	if (mode < 0)
		mode = a.remote ? DIFF_BRANCH : DIFF_WIP;
	if ((mode == DIFF_WIP || mode == DIFF_UNSTAGED) && a.remote) {
		rc = cmd_fail("diff",
			      "%s runs on %s: its uncommitted work is there "
			      "(--branch shows what it committed, fetched back)",
			      a.handle, a.remote);
		agent_rec_free(&a);
		return rc;
	}
	if (a.branch && cmd_import_sandbox(ctx, "diff", &a) < 0) {
		agent_rec_free(&a);
		return 1;
	}
	char *main = a.base ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	const char *base = a.base ? a.base : main;
	struct diff_target t = {
		.worktree = a.remote ? NULL : a.path, .branch = a.branch, .base = base};
	/* Straight to stdout for a pipe (the review view): it reads as git writes. */
	bool plain = !stat && !json && !isatty(STDOUT_FILENO);
	int fd = plain ? STDOUT_FILENO : memfd_create("workrex-diff", MFD_CLOEXEC);
	char *cause = NULL;
	fflush(stdout);
	if (fd < 0)
		rc = cmd_fail("diff", "a memory file: %s", strerror(errno));
	else if (diff_write(ctx->repo, &t, (enum diff_mode)mode, fd, &cause) < 0)
		rc = cmd_fail("diff", "%s: %s", a.handle, cause);
	if (rc == 0 && !plain) {
		if (stat || json) {
			struct diff_reader d = {0};
			each_line(fd, read_one, &d);
			if (json) {
				json_object *o = stat_json(&a, (enum diff_mode)mode, base, &d);
				printf("%s\n", json_object_to_json_string_ext(
						       o, JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
				json_object_put(o);
			} else {
				print_stat(&d);
			}
			diff_reader_free(&d);
		} else {
			struct show sh = {0};
			each_line(fd, show_one, &sh);
			fwrite(sh.out.data ? sh.out.data : "", 1, sh.out.len, stdout);
			buf_free(&sh.out);
			diff_reader_free(&sh.d);
		}
	}
	if (fd > STDOUT_FILENO)
		close(fd);
	free(cause);
	free(main);
	agent_rec_free(&a);
	return rc;
}

/* ---- review: comments for the agent ---- */

/* The hunk of a's WIP (a remote agent's: its branch) that holds file:line; NULL for none. */
struct hunk_find {
	struct diff_reader d;
	const char *file;
	int line;
	struct buf cur; /* the hunk read now */
	int at, end;    /* its lines on the changed side: [at, end) */
	char *found;    /* owned */
};

static void find_one(void *arg, const char *s, size_t n, int lineno)
{
	struct hunk_find *h = arg;
	enum diff_line k = diff_read_line(&h->d, s, n, lineno);
	bool ours = h->d.nfiles && strcmp(h->d.files[h->d.nfiles - 1].path, h->file) == 0;
	if (k == DL_HUNK || k == DL_FILE || k == DL_COMMIT) {
		if (h->found == NULL && h->cur.len && h->line >= h->at && h->line < h->end)
			h->found = xstrdup(h->cur.data);
		h->cur.len = 0;
		if (k == DL_HUNK && ours) {
			const char *plus = memchr(s, '+', n);
			h->at = plus ? atoi(plus + 1) : 0;
			const char *comma = plus ? strpbrk(plus, ", ") : NULL;
			h->end = h->at + (comma && *comma == ',' ? atoi(comma + 1) : 1);
			if (h->end == h->at)
				h->end = h->at + 1; /* a deletion: its place */
			buf_add(&h->cur, s, n);
		}
		return;
	}
	if (h->cur.len)
		buf_add(&h->cur, s, n);
}

static char *hunk_of(struct cmd_ctx *ctx, const struct agent_rec *a, const char *base,
		     const char *file, int line)
{
	int fd = memfd_create("workrex-diff", MFD_CLOEXEC);
	struct diff_target t = {
		.worktree = a->remote ? NULL : a->path, .branch = a->branch, .base = base};
	char *cause = NULL;
	if (fd < 0 ||
	    diff_write(ctx->repo, &t, a->remote ? DIFF_BRANCH : DIFF_WIP, fd, &cause) < 0) {
		free(cause);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct hunk_find h = {.file = file, .line = line};
	each_line(fd, find_one, &h);
	if (h.found == NULL && h.cur.len && line >= h.at && line < h.end)
		h.found = xstrdup(h.cur.data);
	close(fd);
	buf_free(&h.cur);
	diff_reader_free(&h.d);
	return h.found;
}

static void print_waiting(const char *handle, int n)
{
	printf("%s: %d comment%s wait%s for it\n", handle, n, n == 1 ? "" : "s", n == 1 ? "s" : "");
}

static int list_comments(struct cmd_ctx *ctx, const struct agent_rec *a)
{
	struct review_comment *c;
	int n = comments_load(repo_root(ctx->repo), a->handle, &c);
	if (n < 0)
		return cmd_fail("review", "%s: its comments cannot be read: %s", a->handle,
				strerror(-n));
	for (int i = 0; i < n; i++) {
		struct buf t = {0};
		diff_visible(c[i].text, strlen(c[i].text), &t);
		if (c[i].line > 0)
			printf("%d. %s:%d  %s\n", i + 1, c[i].file, c[i].line,
			       t.data ? t.data : "");
		else
			printf("%d. %s  %s\n", i + 1, c[i].file, t.data ? t.data : "");
		buf_free(&t);
	}
	if (n == 0)
		printf("no comment waits for %s\n", a->handle);
	comments_free(c, n);
	return 0;
}

int cmd_review(struct cmd_ctx *ctx, int argc, char **argv)
{
	const struct cmd *self = cmd_find("review");
	bool send = argc == 3 && strcmp(argv[2], "--send") == 0;
	bool comment = argc == 5 && strcmp(argv[2], "--comment") == 0;
	if (argc < 2 || argv[1][0] == '-' || !(argc == 2 || send || comment))
		return cmd_usage(self);
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "review", argv[1], &a);
	if (rc)
		return rc;
	if (argc == 2) {
		rc = list_comments(ctx, &a);
		agent_rec_free(&a);
		return rc;
	}
	json_object *req = cmd_agent_request(send ? "review-send" : "comment", &a);
	struct review_comment c = {0};
	char *main = NULL;
	if (comment) {
		/* FILE:LINE, or FILE alone for the file as a whole. */
		const char *colon = strrchr(argv[3], ':');
		char *end = NULL;
		long line = colon ? strtol(colon + 1, &end, 10) : 0;
		bool numbered = colon && end && *end == '\0' && end != colon + 1 && line > 0;
		c.file = numbered ? xstrndup(argv[3], (size_t)(colon - argv[3])) : xstrdup(argv[3]);
		c.line = numbered ? (int)line : 0;
		c.text = argv[4];
		main = a.base ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
		c.hunk = c.line ? hunk_of(ctx, &a, a.base ? a.base : main, c.file, c.line) : NULL;
		json_object_object_add(req, "file", json_object_new_string(c.file));
		json_object_object_add(req, "line", json_object_new_int(c.line));
		if (c.hunk)
			json_object_object_add(req, "hunk", json_object_new_string(c.hunk));
		json_object_object_add(req, "text", json_object_new_string(c.text));
	}
	json_object *r = NULL;
	rc = cmd_dashboard(ctx, "review", req, &r);
	json_object *m;
	if (rc == 0 && json_object_object_get_ex(r, "message", &m))
		printf("%s\n", json_object_get_string(m));
	json_object_put(r);
	if (rc == -ENOENT && comment) {
		/* Nobody runs: kept here for the next dashboard, which counts them. */
		rc = comments_add(repo_root(ctx->repo), a.handle, &c);
		if (rc < 0)
			cmd_fail("review", "%s: the comment was not kept: %s", a.handle,
				 strerror(-rc));
		else
			print_waiting(a.handle, comments_count(repo_root(ctx->repo), a.handle));
	} else if (rc == -ENOENT) {
		cmd_fail("review", "%s: nothing runs it here: workrex open %s first", a.handle,
			 a.handle);
		rc = -1;
	}
	json_object_put(req);
	free(c.file);
	free(c.hunk);
	free(main);
	agent_rec_free(&a);
	return rc < 0 ? 1 : 0;
}
