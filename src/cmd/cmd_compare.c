/*
 * cmd_compare.c - the candidates of one group side by side (SPEC §11):
 * `workrex compare GROUP [--json]`, its check run (`--check [HANDLE]`),
 * and the best one merged with the others removed (`--merge HANDLE`).
 *
 * A candidate's check is the project's `check` command, run in its
 * worktree; a sandboxed candidate's inside a sandbox of its own with the
 * agent's mounts (as `sandbox shell` makes one), never on the host. Its
 * outcome is kept (git/checks.h) with what it checked, the HEAD and the
 * worktree's changes: --if-changed (the dashboard's, when a candidate
 * reaches done) runs nothing when that is what the last check saw.
 */
#include "cmd.h"

#include "../core/compare.h"
#include "../git/checks.h"
#include "../util/proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A check's time, at most; then it failed. */
#define CHECK_TIMEOUT_MS (30 * 60 * 1000)

/* The group's agents, in the order add made them (their numbers). */
static int group_agents(struct cmd_ctx *ctx, const char *group, struct agent_rec **out, size_t *n)
{
	struct agent_rec *as;
	size_t all;
	int rc = cmd_agents(ctx, "compare", &as, &all);
	if (rc)
		return rc;
	*n = 0;
	*out = xcalloc(all ? all : 1, sizeof **out);
	for (size_t i = 0; i < all; i++) {
		if (as[i].group && !strcmp(as[i].group, group))
			(*out)[(*n)++] = as[i];
		else
			agent_rec_free(&as[i]);
	}
	free(as);
	for (size_t i = 1; i < *n; i++)
		for (size_t k = i; k > 0 && (*out)[k].number < (*out)[k - 1].number; k--) {
			struct agent_rec t = (*out)[k];
			(*out)[k] = (*out)[k - 1];
			(*out)[k - 1] = t;
		}
	if (*n == 0) {
		free(*out);
		return cmd_fail("compare", "no group '%s' (add -n, -a twice or --foreach make one)",
				group);
	}
	return 0;
}

static void agents_free(struct agent_rec *as, size_t n)
{
	for (size_t i = 0; i < n; i++)
		agent_rec_free(&as[i]);
	free(as);
}

/* What a check of a's worktree now would check (git/checks.h). */
static char *state_key(const struct agent_rec *a)
{
	return check_state_key(a->path);
}

/* The argv that runs the check for a: here, or in its sandbox. NULL with a message said. */
static char **check_argv(struct cmd_ctx *ctx, const struct agent_rec *a, bool *sandboxed,
			 struct strlist *hold)
{
	*sandboxed = cmd_sandboxed(ctx, a);
	char *sh[] = {"/bin/sh", "-c", ctx->cfg.check, NULL};
	if (!*sandboxed) {
		for (char **p = sh; *p; p++)
			strlist_add(hold, *p);
		return strlist_argv(hold);
	}
	char *cause = NULL;
	if (cmd_sandbox_argv(ctx, a->handle, sh, hold, &cause) < 0) {
		cmd_fail("compare", "%s: its check cannot run in its sandbox: %s", a->handle,
			 cause);
		free(cause);
		return NULL;
	}
	return strlist_argv(hold);
}

int cmd_check(struct cmd_ctx *ctx, const struct agent_rec *a, bool if_changed)
{
	const char *root = repo_root(ctx->repo);
	char *key = state_key(a);
	struct check_result last;
	bool have = check_load(root, a->handle, &last) == 0;
	bool same = have && last.key && !strcmp(last.key, key) && strcmp(last.state, "running");
	bool passed = have && !strcmp(last.state, "passed");
	if (have)
		check_result_free(&last);
	if (if_changed && same) {
		free(key);
		return passed ? 0 : 1;
	}
	bool sandboxed;
	struct strlist hold = {0};
	char **argv = check_argv(ctx, a, &sandboxed, &hold);
	if (argv == NULL) {
		strlist_free(&hold);
		free(key);
		return 1;
	}
	struct check_result r = {.state = "running",
				 .key = key,
				 .where = sandboxed ? "sandbox" : "host",
				 .started = (long)time(NULL)};
	check_save(root, a->handle, &r);
	struct buf out = {0};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.dir = a->path;
	fflush(stdout);
	int st = proc_capture(argv, &o, NULL, 0, &out, &out, CHECK_TIMEOUT_MS);
	r.code = st < 0 ? 127 : st;
	r.state = r.code == 0 ? "passed" : "failed";
	r.ended = (long)time(NULL);
	if (out.len > CHECK_OUTPUT_MAX)
		buf_consume(&out, out.len - CHECK_OUTPUT_MAX);
	buf_addch(&out, '\0');
	r.output = out.data;
	int rc = check_save(root, a->handle, &r);
	if (rc < 0)
		cmd_fail("compare", "%s: its check's outcome was not kept: %s", a->handle,
			 strerror(-rc));
	printf("%s: check %s (exit %d, %lds, %s)\n", a->handle, r.state, r.code,
	       r.ended - r.started, r.where);
	buf_free(&out);
	free(argv);
	strlist_free(&hold);
	free(key);
	return r.code == 0 ? 0 : 1;
}

/* One candidate as compare shows it. */
static json_object *candidate(struct cmd_ctx *ctx, const struct agent_rec *a, json_object *live,
			      const char *main)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "handle", json_object_new_string(a->handle));
	json_object_object_add(o, "branch", a->branch ? json_object_new_string(a->branch) : NULL);
	json_object_object_add(o, "agent", a->agent ? json_object_new_string(a->agent) : NULL);
	json_object_object_add(o, "sandboxed", json_object_new_boolean(cmd_sandboxed(ctx, a)));
	json_object *st = cmd_live_agent(live, a->handle, "status");
	json_object *since = cmd_live_agent(live, a->handle, "since_ms");
	const char *status = st ? json_object_get_string(st) : NULL;
	json_object_object_add(o, "status", status ? json_object_new_string(status) : NULL);
	/* Its time: to its last done (or failed), else so far. */
	long now = (long)time(NULL), end = now;
	if (status && (!strcmp(status, "done") || !strcmp(status, "failed")) && since)
		end = now - (long)(json_object_get_int64(since) / 1000);
	if (a->created > 0)
		json_object_object_add(o, "seconds", json_object_new_int64(end - a->created));
	cmd_usage_fields(o, cmd_live_agent(live, a->handle, "usage"));
	json_object *refused = cmd_live_agent(live, a->handle, "egress_refused");
	json_object_object_add(o, "egress_refused",
			       json_object_new_int(refused ? json_object_get_int(refused) : 0));
	const char *into = a->base && repo_branch_exists(ctx->repo, a->base) ? a->base : main;
	if (a->branch && into) {
		struct branch_changes ch;
		cmd_branch_changes(ctx->repo, a->branch, into, &ch);
		json_object_object_add(o, "files", json_object_new_int(ch.files));
		json_object_object_add(o, "added", json_object_new_int(ch.added));
		json_object_object_add(o, "deleted", json_object_new_int(ch.deleted));
		json_object *runs = json_object_new_array();
		for (char *p = ch.runs; p && *p;) {
			size_t n = strcspn(p, ",");
			json_object_array_add(runs, json_object_new_string_len(p, (int)n));
			p += n;
			p += strspn(p, ", ");
		}
		json_object_object_add(o, "host_runs", runs);
		branch_changes_free(&ch);
	}
	struct check_result r;
	if (check_load(repo_root(ctx->repo), a->handle, &r) == 0) {
		json_object *c = json_object_new_object();
		char *key = state_key(a);
		json_object_object_add(c, "state", json_object_new_string(r.state));
		json_object_object_add(c, "code", json_object_new_int(r.code));
		json_object_object_add(c, "where", json_object_new_string(r.where ? r.where : "?"));
		json_object_object_add(c, "seconds",
				       json_object_new_int64(r.ended ? r.ended - r.started : 0));
		/* It saw this worktree as it is now, or an earlier one. */
		json_object_object_add(c, "current",
				       json_object_new_boolean(r.key && !strcmp(r.key, key)));
		json_object_object_add(c, "output",
				       json_object_new_string(r.output ? r.output : ""));
		json_object_object_add(o, "check", c);
		free(key);
		check_result_free(&r);
	} else {
		json_object_object_add(o, "check", NULL);
	}
	return o;
}

static void print_table(json_object *arr)
{
	printf("%s\n", compare_header());
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		char *row = compare_row(json_object_array_get_idx(arr, i));
		printf("%s\n", row);
		free(row);
	}
	cmd_usage_total(arr); /* what the group used */
}

/* The others go, after one question (yes: asked already). 0 or 1; *gone: who went. */
static int remove_others(struct cmd_ctx *ctx, struct agent_rec *as, size_t n, const char *keep,
			 bool yes, struct buf *gone)
{
	struct buf names = {0};
	for (size_t i = 0; i < n; i++)
		if (strcmp(as[i].handle, keep))
			buf_addf(&names, "%s%s", names.len ? ", " : "", as[i].handle);
	if (names.len == 0)
		return 0;
	if (!yes) {
		if (!isatty(STDIN_FILENO)) {
			/* The merge is done: not a failure; the others wait for the user. */
			fprintf(stderr,
				"workrex: compare: no terminal to ask: the others (%s) stay (-y "
				"removes them without asking)\n",
				names.data);
			buf_free(&names);
			return 0;
		}
		printf("remove the others, their work with them: %s? (y/n) ", names.data);
		fflush(stdout);
		char line[16] = "";
		if (fgets(line, sizeof line, stdin) == NULL || (line[0] != 'y' && line[0] != 'Y')) {
			printf("kept: %s\n", names.data);
			buf_free(&names);
			return 0;
		}
	}
	buf_free(&names);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(as[i].handle, keep))
			continue;
		char *argv[] = {"remove", "-f", as[i].handle, NULL};
		int r = cmd_exec(ctx, cmd_find("remove"), 3, argv);
		if (r == 0)
			buf_addf(gone, "%s%s", gone->len ? ", " : "", as[i].handle);
		rc |= r;
	}
	return rc ? 1 : 0;
}

/* compare --merge: the check if required, the merge, then the others. */
static int merge_best(struct cmd_ctx *ctx, struct agent_rec *as, size_t n, const char *best,
		      bool keep, bool yes, bool ignore_uncommitted)
{
	const struct agent_rec *a = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(as[i].handle, best) || (as[i].branch && !strcmp(as[i].branch, best)))
			a = &as[i];
	if (a == NULL)
		return cmd_fail("compare", "'%s' is not one of the group", best);
	if (ctx->cfg.check_required) {
		struct check_result r;
		bool have = check_load(repo_root(ctx->repo), a->handle, &r) == 0;
		char *key = state_key(a);
		const char *why = !have                          ? "its check did not run"
				  : strcmp(r.state, "passed")    ? "its check did not pass"
				  : !r.key || strcmp(r.key, key) ? "its check saw an earlier state"
								 : NULL;
		free(key);
		if (have)
			check_result_free(&r);
		if (why)
			return cmd_fail(
				"compare",
				"%s: %s, and check_required is true (compare %s --check %s)",
				a->handle, why, a->group, a->handle);
	}
	char *handle = xstrdup(a->handle);
	char *argv[] = {"merge", ignore_uncommitted ? "--ignore-uncommitted" : handle,
			ignore_uncommitted ? handle : NULL, NULL};
	int rc = cmd_exec(ctx, cmd_find("merge"), ignore_uncommitted ? 3 : 2, argv);
	struct buf gone = {0};
	if (rc == 0 && !keep)
		rc = remove_others(ctx, as, n, handle, yes, &gone);
	/* The outcome on one last line: the dashboard's status line says it. */
	if (rc == 0)
		printf("merged %s%s%s\n", handle, gone.len ? "; removed " : "",
		       gone.len ? gone.data : "");
	buf_free(&gone);
	free(handle);
	return rc;
}

int cmd_compare(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool json = cmd_given(ctx, "json"), check = cmd_given(ctx, "check"),
	     if_changed = cmd_given(ctx, "if-changed"), keep = cmd_given(ctx, "keep"),
	     yes = cmd_given(ctx, "yes"), ignore_uncommitted = cmd_given(ctx, "ignore-uncommitted");
	const char *merge = cmd_value(ctx, "merge");
	/* GROUP, and with --check one HANDLE of it at most. */
	if (cmd_nargs(ctx) > (check ? 2 : 1) || (merge && (check || json)) ||
	    (ignore_uncommitted && !merge))
		return cmd_usage(ctx->self);
	int rc = cmd_open_repo(ctx, "compare");
	if (rc)
		return rc;
	struct agent_rec *as;
	size_t n;
	if ((rc = group_agents(ctx, cmd_arg(ctx, 0), &as, &n)) != 0)
		return rc;
	if (merge) {
		rc = merge_best(ctx, as, n, merge, keep, yes, ignore_uncommitted);
	} else if (check) {
		const char *one = cmd_arg(ctx, 1);
		bool found = one == NULL;
		if (ctx->cfg.check == NULL) {
			rc = cmd_fail("compare", "no check: set check (e.g. check: make test) in "
						 "workrex.yaml");
			found = true;
		}
		/* Every candidate's check runs; one that failed makes the exit 1. */
		int failed = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (one && strcmp(one, as[i].handle))
				continue;
			found = true;
			failed |= cmd_check(ctx, &as[i], if_changed);
		}
		rc = rc ? rc : failed;
		if (!found)
			rc = cmd_fail("compare", "'%s' is not one of the group", one);
	} else {
		json_object *live, *live_agents;
		cmd_live_agents(ctx, "compare", &live, &live_agents);
		char *main = repo_main_branch(ctx->repo, ctx->cfg.main_branch);
		json_object *arr = json_object_new_array();
		for (size_t i = 0; i < n; i++) {
			cmd_import_sandbox(ctx, "compare", &as[i]);
			json_object_array_add(arr, candidate(ctx, &as[i], live_agents, main));
		}
		if (json)
			printf("%s\n", json_object_to_json_string_ext(
					       arr, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
		else
			print_table(arr);
		json_object_put(arr);
		json_object_put(live);
		free(main);
	}
	agents_free(as, n);
	return rc;
}
