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
#include "../util/beneath.h"
#include "../util/proc.h"
#include "cmd.h"
#include "../util/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
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

/* What diff was asked: one mode (-1: the agent's default) and how to show it. */
struct diff_args {
	int mode;
	bool stat, json, colour;
};

/* diff's options into *d: 0, or 2 for two modes or --color with --stat or --json. */
static int diff_parse(const struct cmd_ctx *ctx, struct diff_args *d)
{
	static const struct {
		const char *name;
		int mode;
	} modes[] = {
		{"wip", DIFF_WIP},       {"branch", DIFF_BRANCH},     {"commits", DIFF_COMMITS},
		{"staged", DIFF_STAGED}, {"unstaged", DIFF_UNSTAGED},
	};
	*d = (struct diff_args){.mode = -1,
				.stat = cmd_given(ctx, "stat"),
				.json = cmd_given(ctx, "json"),
				.colour = cmd_given(ctx, "color")};
	for (size_t i = 0; i < WRX_ARRAY_LEN(modes); i++) {
		if (!cmd_given(ctx, modes[i].name))
			continue;
		if (d->mode >= 0)
			return 2;
		d->mode = modes[i].mode;
	}
	return d->colour && (d->stat || d->json) ? 2 : 0;
}

/* The diff written to fd, shown as asked: a stat, JSON, or coloured lines. */
static void diff_show(int fd, const struct agent_rec *a, const struct diff_args *d,
		      const char *base)
{
	if (d->stat || d->json) {
		struct diff_reader r = {0};
		each_line(fd, read_one, &r);
		if (d->json) {
			json_object *o = stat_json(a, (enum diff_mode)d->mode, base, &r);
			printf("%s\n", json_object_to_json_string_ext(
					       o, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		} else {
			print_stat(&r);
		}
		diff_reader_free(&r);
		return;
	}
	struct show sh = {0};
	each_line(fd, show_one, &sh);
	fwrite(sh.out.data ? sh.out.data : "", 1, sh.out.len, stdout);
	buf_free(&sh.out);
	diff_reader_free(&sh.d);
}

/* The agent diff shows: its mode settled, a server's WIP refused, a sandbox's work imported. */
static int diff_agent(struct cmd_ctx *ctx, const char *name, struct diff_args *d,
		      struct agent_rec *a)
{
	int rc = cmd_which_agent(ctx, "diff", name, a);
	if (rc)
		return rc;
	if (d->mode < 0)
		d->mode = a->remote ? DIFF_BRANCH : DIFF_WIP;
	if ((d->mode == DIFF_WIP || d->mode == DIFF_UNSTAGED || d->mode == DIFF_STAGED) &&
	    a->remote)
		rc = cmd_fail("diff",
			      "%s runs on %s: its uncommitted work is there "
			      "(--branch shows what it committed, fetched back)",
			      a->handle, a->remote);
	else if (a->branch && cmd_import_sandbox(ctx, "diff", a) < 0)
		rc = 1;
	if (rc)
		agent_rec_free(a);
	return rc;
}

int cmd_diff(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct diff_args d;
	if (diff_parse(ctx, &d))
		return cmd_usage(ctx->self);
	struct agent_rec a;
	int rc = diff_agent(ctx, cmd_arg(ctx, 0), &d, &a);
	if (rc)
		return rc;
	char *main = a.base ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	const char *base = a.base ? a.base : main;
	struct diff_target t = {
		.worktree = a.remote ? NULL : a.path, .branch = a.branch, .base = base};
	/*
	 * Straight to stdout for a pipe (the review view): it reads as git
	 * writes. Coloured for a terminal, or with --color (review.pager's
	 * input, as git gives its diffFilter).
	 */
	bool plain = !d.stat && !d.json && !d.colour && !isatty(STDOUT_FILENO);
	int fd = plain ? STDOUT_FILENO : memfd_create("workrex-diff", MFD_CLOEXEC);
	char *cause = NULL;
	fflush(stdout);
	if (fd < 0)
		rc = cmd_fail("diff", "a memory file: %s", strerror(errno));
	else if (diff_write(ctx->repo, &t, (enum diff_mode)d.mode, fd, &cause) < 0)
		rc = cmd_fail("diff", "%s: %s", a.handle, cause);
	/* An agent of several repositories: the others' too, each under its name (not the index's). */
	else if (a.repos && d.mode != DIFF_STAGED && d.mode != DIFF_UNSTAGED &&
		 cmd_workspace_diff(&a, (enum diff_mode)d.mode, fd, &cause) < 0)
		rc = cmd_fail("diff", "%s: %s", a.handle, cause);
	if (rc == 0 && !plain)
		diff_show(fd, &a, &d, base);
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
		struct diff_range rg;
		if (k == DL_HUNK && ours && diff_hunk_range(s, n, &rg) == 0) {
			h->at = rg.new_start;
			h->end =
				rg.new_start + WRX_MAX(rg.new_count, 1); /* a deletion: its place */
			buf_add(&h->cur, s, n);
		}
		return;
	}
	if (h->cur.len)
		buf_add(&h->cur, s, n);
}

/* ... and whether file is among a's changes at all (*in_diff), when in_diff. */
/* file's hunk holding line in one of the agent's diffs (mode); *in_diff: file is in it. */
static char *hunk_in(struct cmd_ctx *ctx, const struct diff_target *t, int mode, const char *file,
		     int line, bool *in_diff)
{
	int fd = memfd_create("workrex-diff", MFD_CLOEXEC);
	char *cause = NULL;
	if (fd < 0 || diff_write(ctx->repo, t, mode, fd, &cause) < 0) {
		free(cause);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct hunk_find h = {.file = file, .line = line};
	each_line(fd, find_one, &h);
	if (h.found == NULL && h.cur.len && line >= h.at && line < h.end)
		h.found = xstrdup(h.cur.data);
	for (int i = 0; i < h.d.nfiles; i++)
		*in_diff = *in_diff || strcmp(h.d.files[i].path, file) == 0;
	close(fd);
	buf_free(&h.cur);
	diff_reader_free(&h.d);
	return h.found;
}

/*
 * The hunk a comment is on: in what the agent has not committed, else in
 * its branch's commits (what the review view's two modes show).
 */
static char *hunk_of(struct cmd_ctx *ctx, const struct agent_rec *a, const char *base,
		     const char *file, int line, bool *in_diff)
{
	struct diff_target t = {
		.worktree = a->remote ? NULL : a->path, .branch = a->branch, .base = base};
	char *found = a->remote ? NULL : hunk_in(ctx, &t, DIFF_WIP, file, line, in_diff);
	if (found == NULL && !*in_diff)
		found = hunk_in(ctx, &t, DIFF_BRANCH, file, line, in_diff);
	return found;
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

/*
 * review --delete N, --edit N TEXT: a waiting comment (numbered as the
 * list numbers them) gone or said again; a running dashboard counts anew.
 */
static int change_comment(struct cmd_ctx *ctx, const struct agent_rec *a, const char *num,
			  const char *text)
{
	char *end = NULL;
	long which = strtol(num, &end, 10);
	if (end == num || *end || which <= 0 || which > INT32_MAX)
		return cmd_fail("review",
				"'%s' is no comment number (workrex review %s lists them)", num,
				a->handle);
	if (text && *text == '\0')
		return cmd_fail("review", "an empty comment: --delete %ld removes it", which);
	int left = comments_change(repo_root(ctx->repo), a->handle, (int)which, text);
	if (left == -ENOENT)
		return cmd_fail("review",
				"%s has no comment %ld waiting (workrex review %s lists them)",
				a->handle, which, a->handle);
	if (left < 0)
		return cmd_fail("review", "%s: comment %ld not changed: %s", a->handle, which,
				strerror(-left));
	if (cmd_dashboard_runs(ctx)) {
		json_object *req = cmd_agent_request("comments-changed", a), *r = NULL;
		cmd_dashboard(ctx, "review", req, &r);
		json_object_put(r);
		json_object_put(req);
	}
	printf("%s comment %ld; ", text ? "changed" : "deleted", which);
	print_waiting(a->handle, left);
	return 0;
}

/*
 * review --comment FILE[:LINE] TEXT: the comment, placed in a's changes
 * (its hunk, or the file as a whole). 0, or 1 (said): a comment the
 * agent could not place is refused.
 */
static int comment_place(struct cmd_ctx *ctx, const struct agent_rec *a, const char *where,
			 char *text, struct review_comment *c)
{
	const char *colon = strrchr(where, ':');
	char *end = NULL;
	long line = colon ? strtol(colon + 1, &end, 10) : 0;
	bool numbered = colon && end && *end == '\0' && end != colon + 1 && line > 0;
	c->file = numbered ? xstrndup(where, (size_t)(colon - where)) : xstrdup(where);
	c->line = numbered ? (int)line : 0;
	c->text = text;
	char *main = a->base ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	bool in_diff = false;
	c->hunk = hunk_of(ctx, a, a->base ? a->base : main, c->file, c->line, &in_diff);
	free(main);
	if (!in_diff)
		return cmd_fail("review",
				"%s is not among %s's changes (workrex diff %s --stat lists them)",
				c->file, a->handle, a->handle);
	if (c->line && c->hunk == NULL)
		return cmd_fail("review",
				"%s:%d is in none of %s's hunks: comment on a changed line, or on "
				"the file (%s alone)",
				c->file, c->line, a->handle, c->file);
	if (c->line == 0) {
		free(c->hunk); /* the file as a whole: no hunk of it */
		c->hunk = NULL;
	}
	return 0;
}

/* review --send, or --comment: to the dashboard; a comment kept for the next one if none runs. */
static int review_tell(struct cmd_ctx *ctx, const struct agent_rec *a,
		       const struct review_comment *c)
{
	json_object *req = cmd_agent_request(c ? "comment" : "review-send", a), *r = NULL, *m;
	if (c) {
		json_object_object_add(req, "file", json_object_new_string(c->file));
		json_object_object_add(req, "line", json_object_new_int(c->line));
		if (c->hunk)
			json_object_object_add(req, "hunk", json_object_new_string(c->hunk));
		json_object_object_add(req, "text", json_object_new_string(c->text));
	}
	int rc = cmd_dashboard(ctx, "review", req, &r);
	json_object_put(req);
	if (rc == 0 && json_object_object_get_ex(r, "message", &m))
		printf("%s\n", json_object_get_string(m));
	json_object_put(r);
	if (rc == -ENOENT && c) {
		/* Nobody runs: kept here for the next dashboard, which counts them. */
		rc = comments_add(repo_root(ctx->repo), a->handle, c);
		if (rc < 0)
			cmd_fail("review", "%s: the comment was not kept: %s", a->handle,
				 strerror(-rc));
		else
			print_waiting(a->handle, comments_count(repo_root(ctx->repo), a->handle));
	} else if (rc == -ENOENT) {
		cmd_fail("review", "%s: nothing runs it here: workrex open %s first", a->handle,
			 a->handle);
		rc = -1;
	}
	return rc < 0 ? 1 : 0;
}

int cmd_review(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	/* One of them at most; --comment and --edit take the TEXT argument after the handle. */
	const char *comment = cmd_value(ctx, "comment"), *edit = cmd_value(ctx, "edit"),
		   *del = cmd_value(ctx, "delete");
	bool send = cmd_given(ctx, "send");
	int modes = cmd_given(ctx, "comment") + cmd_given(ctx, "edit") + cmd_given(ctx, "delete") +
		    send;
	char *text = (char *)cmd_arg(ctx, 1);
	if (modes > 1 || (text != NULL) != (comment || edit))
		return cmd_usage(ctx->self);
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "review", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	struct review_comment c = {0};
	if (modes == 0)
		rc = list_comments(ctx, &a);
	else if (cmd_given(ctx, "delete") || cmd_given(ctx, "edit"))
		rc = change_comment(ctx, &a, del ? del : edit ? edit : "", edit ? text : NULL);
	else if (comment && (rc = comment_place(ctx, &a, comment, text, &c)) == 0)
		rc = review_tell(ctx, &a, &c);
	else if (send)
		rc = review_tell(ctx, &a, NULL);
	free(c.file);
	free(c.hunk);
	agent_rec_free(&a);
	return rc;
}

/* ---- pull requests (gh) ---- */

/* gh with args in the project's root: its exit status, its stdout and stderr gathered. */
static int gh(struct cmd_ctx *ctx, const char *const *args, struct buf *out, struct buf *err)
{
	size_t n = 0;
	while (args[n])
		n++;
	const char **av = xcalloc(n + 2, sizeof *av);
	av[0] = "gh";
	memcpy(av + 1, args, n * sizeof *av);
	char *env[] = {"GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.dir = repo_root(ctx->repo);
	o.env = env;
	int rc = proc_capture((char *const *)av, &o, NULL, 0, out, err, 60000);
	free(av);
	return rc;
}

/*
 * Why gh failed, once said: a command that asks it of each agent (list
 * --pr, remove --gone) says it once, asks no more, and tells its caller
 * that it could not tell, never that there was nothing to find.
 */
static char *gh_broken;

static char *gh_why(int rc, const struct buf *err)
{
	if (rc == 127)
		return xstrdup("gh is not installed: the GitHub CLI (Debian: apt install gh)");
	const char *e = err->data ? err->data : "";
	return xasprintf("gh exited %d: %.*s", rc, (int)strcspn(e, "\n"), e);
}

const char *cmd_gh_broken(void)
{
	return gh_broken;
}

static int gh_failed(const char *what, int rc, const struct buf *err)
{
	char *why = gh_why(rc, err);
	int r = cmd_fail(what, "%s", why);
	free(why);
	return r;
}

struct pr_info {
	int number; /* 0: none */
	char state[16];
	const char *checks; /* ✓ ✗ ◌, or - for none */
	char *url;          /* owned */
};

/* The checks in one mark: any failed ✗, else any pending ◌, else ✓; none -. */
static const char *checks_mark(json_object *rollup)
{
	static const char *const bad[] = {"FAILURE",   "ERROR",           "CANCELLED",
					  "TIMED_OUT", "ACTION_REQUIRED", "STARTUP_FAILURE"};
	size_t n = rollup ? json_object_array_length(rollup) : 0;
	bool pending = false, failed = false;
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(rollup, i), *v;
		const char *conclusion = json_object_object_get_ex(c, "conclusion", &v)
						 ? json_object_get_string(v)
						 : "";
		const char *state =
			json_object_object_get_ex(c, "state", &v) ? json_object_get_string(v) : "";
		const char *status =
			json_object_object_get_ex(c, "status", &v) ? json_object_get_string(v) : "";
		const char *verdict = conclusion && *conclusion ? conclusion : state ? state : "";
		for (size_t k = 0; k < WRX_ARRAY_LEN(bad); k++)
			failed = failed || strcmp(verdict, bad[k]) == 0;
		pending = pending || strcmp(verdict, "PENDING") == 0 ||
			  (status && *status && strcmp(status, "COMPLETED") != 0) || !*verdict;
	}
	return n == 0 ? "-" : failed ? "\u2717" : pending ? "\u25cc" : "\u2713";
}

/*
 * ref's PR (a branch, a number or a URL): 0 with *pr, 1 for none, or -1
 * having said why (gh failed: said once, and not asked again).
 */
static int pr_view(struct cmd_ctx *ctx, const char *what, const char *ref, struct pr_info *pr)
{
	memset(pr, 0, sizeof *pr);
	pr->checks = "-";
	if (gh_broken)
		return -1;
	const char *args[] = {"pr", "view", ref, "--json", "number,state,url,statusCheckRollup",
			      NULL};
	struct buf out = {0}, err = {0};
	int rc = gh(ctx, args, &out, &err);
	json_object *o = rc == 0 && out.data ? json_tokener_parse(out.data) : NULL, *v;
	if (rc == 0 && o) {
		pr->number =
			json_object_object_get_ex(o, "number", &v) ? json_object_get_int(v) : 0;
		snprintf(pr->state, sizeof pr->state, "%s",
			 json_object_object_get_ex(o, "state", &v) ? json_object_get_string(v)
								   : "?");
		pr->url = json_object_object_get_ex(o, "url", &v)
				  ? xstrdup(json_object_get_string(v))
				  : NULL;
		pr->checks = checks_mark(
			json_object_object_get_ex(o, "statusCheckRollup", &v) ? v : NULL);
	}
	bool none = rc == 1 && err.data && strstr(err.data, "no pull requests found");
	if (rc != 0 && !none) {
		gh_broken = gh_why(rc, &err);
		cmd_fail(what, "%s", gh_broken);
	}
	json_object_put(o);
	buf_free(&out);
	buf_free(&err);
	return rc == 0 && o ? 0 : none ? 1 : -1;
}

int cmd_list_pr(struct cmd_ctx *ctx, bool json)
{
	struct agent_rec *as;
	size_t n;
	int rc = cmd_agents(ctx, "list", &as, &n);
	if (rc)
		return rc;
	json_object *arr = json_object_new_array();
	if (!json)
		printf("%-16s %-20s %-6s %-8s %-6s %s\n", "HANDLE", "BRANCH", "PR", "STATE",
		       "CHECKS", "URL");
	for (size_t i = 0; i < n; i++) {
		struct pr_info pr = {.checks = "-"};
		int got = as[i].branch ? pr_view(ctx, "list", as[i].branch, &pr) : 1;
		if (got < 0)
			rc = 1;
		if (json) {
			json_object *o = json_object_new_object(), *p = NULL;
			json_object_object_add(o, "handle", json_object_new_string(as[i].handle));
			if (as[i].branch)
				json_object_object_add(o, "branch",
						       json_object_new_string(as[i].branch));
			if (got == 0) {
				p = json_object_new_object();
				json_object_object_add(p, "number", json_object_new_int(pr.number));
				json_object_object_add(p, "state",
						       json_object_new_string(pr.state));
				json_object_object_add(p, "checks",
						       json_object_new_string(pr.checks));
				if (pr.url)
					json_object_object_add(p, "url",
							       json_object_new_string(pr.url));
			}
			json_object_object_add(o, "pr", p);
			json_object_array_add(arr, o);
		} else {
			/* ?: gh could not say (said once, above); -: no PR. */
			char num[16] = "-";
			if (got == 0)
				snprintf(num, sizeof num, "#%d", pr.number);
			else if (got < 0)
				snprintf(num, sizeof num, "?");
			printf("%-16s %-20s %-6s %-8s %-6s %s\n", as[i].handle,
			       as[i].branch ? as[i].branch : "-", num,
			       got == 0  ? pr.state
			       : got < 0 ? "?"
					 : "-",
			       got < 0 ? "?" : pr.checks, pr.url ? pr.url : "");
		}
		free(pr.url);
		agent_rec_free(&as[i]);
	}
	free(as);
	if (json)
		printf("%s\n",
		       json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return rc;
}

void cmd_pr_track(struct cmd_ctx *ctx, const char *handle, int number)
{
	if (number <= 0)
		return;
	review_pr_set(repo_root(ctx->repo), handle, number);
	if (!cmd_dashboard_runs(ctx))
		return; /* the next one reads it */
	json_object *req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("pr-track"));
	json_object_object_add(req, "handle", json_object_new_string(handle));
	json_object_object_add(req, "number", json_object_new_int(number));
	cmd_dashboard(ctx, "pr", req, NULL);
	json_object_put(req);
}

/* pr --status: the agent's PR as one JSON object (the dashboard's child asks so). */
static int pr_status(struct cmd_ctx *ctx, const struct agent_rec *a)
{
	struct pr_info pr;
	int n = review_pr_get(repo_root(ctx->repo), a->handle);
	char num[16];
	snprintf(num, sizeof num, "%d", n);
	int got = n > 0 || a->branch ? pr_view(ctx, "pr", n > 0 ? num : a->branch, &pr) : 1;
	if (got == 1)
		return cmd_fail("pr", "%s has no pull request", a->handle);
	if (got < 0)
		return 1;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "number", json_object_new_int(pr.number));
	json_object_object_add(o, "state", json_object_new_string(pr.state));
	json_object_object_add(o, "checks", json_object_new_string(pr.checks));
	if (pr.url)
		json_object_object_add(o, "url", json_object_new_string(pr.url));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	free(pr.url);
	return 0;
}

/* The PR's title and body: the prompt's first line and the prompt, then the commits. */
static void pr_text(struct cmd_ctx *ctx, const struct agent_rec *a, const char *base, char **title,
		    char **body)
{
	char *rel = xasprintf(".workrex/PROMPT-%s.md", a->handle), *prompt = NULL;
	if (a->remote == NULL)
		beneath_read(a->path, rel, 1u << 20,
			     &prompt); /* the agent's: never through a link */
	free(rel);
	char *range = xasprintf("%s..%s", base, a->branch);
	const char *log[] = {"log", "--reverse", "--format=- %s", range, "--", NULL};
	struct buf commits = {0};
	git_run(repo_root(ctx->repo), log, &commits, NULL, true);
	free(range);
	const char *p = prompt ? prompt + strspn(prompt, " \t\n#") : "";
	const char *first = commits.data ? commits.data + 2 : a->branch;
	*title = *p ? xstrndup(p, strcspn(p, "\n")) : xstrndup(first, strcspn(first, "\n"));
	struct buf b = {0};
	if (prompt && *p)
		buf_addf(&b, "%s\n\n", prompt);
	buf_addf(&b, "Commits:\n%s", commits.data ? commits.data : "(none)\n");
	/* Started from an issue (add --issue): GitHub closes it when this lands. */
	if (a->issue > 0)
		buf_addf(&b, "\nCloses #%d\n", a->issue);
	*body = b.data;
	buf_free(&commits);
	free(prompt);
}

int cmd_pr(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool draft = cmd_given(ctx, "draft"), status = cmd_given(ctx, "status");
	if (draft && status)
		return cmd_usage(ctx->self);
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "pr", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	if (status) {
		rc = pr_status(ctx, &a);
		agent_rec_free(&a);
		return rc;
	}
	if (a.branch == NULL || cmd_import_sandbox(ctx, "pr", &a) < 0) {
		rc = a.branch ? 1 : cmd_fail("pr", "%s has no branch", a.handle);
		agent_rec_free(&a);
		return rc;
	}
	const char *remote = ctx->cfg.review_remote;
	char *main = a.base ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	const char *base = a.base ? a.base : main;
	/* The base as the remote knows it: origin/main is main there. */
	size_t rl = strlen(remote);
	const char *base_there =
		strncmp(base, remote, rl) == 0 && base[rl] == '/' ? base + rl + 1 : base;
	/* gh there first: a push whose PR cannot be opened is a push nobody asked for. */
	const char *version[] = {"--version", NULL};
	struct buf vout = {0}, verr = {0};
	int g = gh(ctx, version, &vout, &verr);
	buf_free(&vout);
	if (g == 127) {
		char *why = gh_why(g, &verr);
		rc = cmd_fail("pr", "%s; nothing pushed", why);
		free(why);
		buf_free(&verr);
		free(main);
		agent_rec_free(&a);
		return rc;
	}
	buf_free(&verr);
	char *spec = xasprintf("refs/heads/%s:refs/heads/%s", a.branch, a.branch);
	/* (after "--": a remote git would read as an option, --receive-pack=, runs nothing) */
	const char *push[] = {"push", "--quiet", "--set-upstream", "--", remote, spec, NULL};
	struct buf err = {0};
	/* A sandboxed agent's worktree could hold what a pre-push hook runs: hooks off. */
	if (git_run(repo_root(ctx->repo), push, NULL, &err, cmd_sandboxed(ctx, &a)) != 0) {
		const char *e = err.data ? err.data : "";
		rc = cmd_fail("pr", "git push %s %s failed: %.*s", remote, a.branch,
			      (int)strcspn(e, "\n"), e);
	} else {
		char *title, *body;
		pr_text(ctx, &a, base, &title, &body);
		const char *create[] = {"pr",
					"create",
					"--head",
					a.branch,
					"--base",
					base_there,
					"--title",
					title,
					"--body",
					body,
					draft ? "--draft" : NULL,
					NULL};
		struct buf out = {0};
		err.len = 0;
		g = gh(ctx, create, &out, &err);
		if (g != 0) {
			char *why = gh_why(g, &err);
			rc = cmd_fail("pr",
				      "pushed %s to %s (its upstream set), but the PR was not "
				      "opened: %s",
				      a.branch, remote, why);
			free(why);
		} else {
			printf("%s: pushed to %s, %s%s", a.handle, remote, draft ? "draft " : "",
			       out.data ? out.data : "PR created\n");
			/* gh prints its URL, .../pull/N: the dashboard follows N. */
			const char *n = out.data ? strstr(out.data, "/pull/") : NULL;
			if (n)
				cmd_pr_track(ctx, a.handle, atoi(n + strlen("/pull/")));
		}
		buf_free(&out);
		free(title);
		free(body);
	}
	buf_free(&err);
	free(spec);
	free(main);
	agent_rec_free(&a);
	return rc ? 1 : 0;
}

/* add --pr NUM|URL: its head branch fetched from review.remote; the branch to add. */
char *cmd_pr_branch(struct cmd_ctx *ctx, const char *ref, int *number)
{
	const char *args[] = {"pr", "view", ref, "--json", "headRefName,number", NULL};
	struct buf out = {0}, err = {0};
	int rc = gh(ctx, args, &out, &err);
	json_object *o = rc == 0 && out.data ? json_tokener_parse(out.data) : NULL, *v;
	const char *head = o && json_object_object_get_ex(o, "headRefName", &v)
				   ? json_object_get_string(v)
				   : NULL;
	char *branch = NULL;
	*number = o && json_object_object_get_ex(o, "number", &v) ? json_object_get_int(v) : 0;
	if (head == NULL) {
		if (rc != 0)
			gh_failed("add", rc, &err);
		else
			cmd_fail("add", "gh said no head branch for %s", ref);
	} else if (!repo_branch_name_valid(head)) {
		cmd_fail("add", "the PR's head branch is not a name git takes: %s", head);
	} else {
		const char *remote = ctx->cfg.review_remote;
		char *spec = xasprintf("+refs/heads/%s:refs/remotes/%s/%s", head, remote, head);
		const char *fetch[] = {"fetch", "--quiet", "--", remote, spec, NULL};
		err.len = 0;
		if (git_run(repo_root(ctx->repo), fetch, NULL, &err, true) != 0)
			cmd_fail("add", "git fetch %s %s failed: %s", remote, head,
				 err.data ? err.data : "");
		else
			branch = xasprintf("%s/%s", remote, head);
		free(spec);
	}
	json_object_put(o);
	buf_free(&out);
	buf_free(&err);
	return branch;
}

void gh_issue_free(struct gh_issue *i)
{
	free(i->title);
	free(i->body);
	free(i->url);
	*i = (struct gh_issue){0};
}

int cmd_issue(struct cmd_ctx *ctx, const char *ref, struct gh_issue *out)
{
	*out = (struct gh_issue){0};
	const char *args[] = {"issue", "view", ref, "--json", "number,title,body,url", NULL};
	struct buf o = {0}, err = {0};
	int rc = gh(ctx, args, &o, &err);
	json_object *j = rc == 0 && o.data ? json_tokener_parse(o.data) : NULL, *v;
	if (json_object_object_get_ex(j, "number", &v))
		out->number = json_object_get_int(v);
	const char *t = json_str(j, "title"), *b = json_str(j, "body"), *u = json_str(j, "url");
	out->title = t ? xstrdup(t) : NULL;
	out->body = b ? xstrdup(b) : NULL;
	out->url = u ? xstrdup(u) : NULL;
	json_object_put(j);
	buf_free(&o);
	if (rc != 0) {
		char *why = gh_why(rc, &err);
		cmd_fail("add", "--issue %s: %s", ref, why);
		free(why);
	} else if (out->number <= 0 || out->title == NULL) {
		cmd_fail("add", "--issue %s: gh gave no issue's number and title", ref);
		rc = -1;
	}
	buf_free(&err);
	if (rc != 0)
		gh_issue_free(out);
	return rc != 0;
}

/*
 * remove --gone: is a's work gone upstream? Its PR merged or closed, or
 * the branch it pushed deleted there. *why says which (caller frees). 1
 * gone, 0 not, -1: gh could not say (said once) and nothing else did.
 */
int cmd_pr_gone(struct cmd_ctx *ctx, const struct agent_rec *a, char **why)
{
	*why = NULL;
	if (a->branch == NULL)
		return 0;
	struct pr_info pr;
	int got = pr_view(ctx, "remove", a->branch, &pr);
	if (got == 0 && (strcmp(pr.state, "MERGED") == 0 || strcmp(pr.state, "CLOSED") == 0))
		*why = xasprintf("its PR #%d is %s", pr.number,
				 strcmp(pr.state, "MERGED") == 0 ? "merged" : "closed");
	free(pr.url);
	if (*why)
		return 1;
	/* Pushed once (an upstream set), and the remote has it no more. */
	char *key = xasprintf("branch.%s.remote", a->branch);
	char *remote = repo_config_get(ctx->repo, key);
	free(key);
	if (remote == NULL)
		return got < 0 ? -1 : 0;
	char *ref = xasprintf("refs/heads/%s", a->branch);
	const char *ls[] = {"ls-remote", "--exit-code", "--heads", "--", remote, ref, NULL};
	int rc = git_run(repo_root(ctx->repo), ls, NULL, NULL, true);
	if (rc == 2)
		*why = xasprintf("its branch is gone from %s", remote);
	free(ref);
	free(remote);
	return *why ? 1 : got < 0 ? -1 : 0;
}
