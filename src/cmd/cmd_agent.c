/*
 * cmd_agent.c - path, rename, rebase and sync-files: what is done to one
 * agent's worktree and branch between its start and its merge.
 *
 * As in cmd_worktree.c the git and file work runs in this process; a running
 * dashboard is asked first when the agent's panes must not be running.
 */
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The agent's open panes in the running dashboard: 0 without one, -1 when it cannot say. */
static int open_panes(struct cmd_ctx *ctx, const char *what, const char *handle)
{
	json_object *reply, *agents;
	int rc = cmd_live_agents(ctx, what, &reply, &agents);
	if (rc < 0)
		return rc == -ENOENT ? 0 : -1;
	int panes = json_object_get_int(cmd_live_agent(agents, handle, "panes"));
	json_object_put(reply);
	return panes;
}

int cmd_path(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && argv[1][0] == '-'))
		return cmd_usage(ctx->self);
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "path", argc == 2 ? argv[1] : NULL, &a);
	if (rc)
		return rc;
	printf("%s\n", a.path);
	agent_rec_free(&a);
	return 0;
}

int cmd_rename(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"branch", required_argument, NULL, 'b'},
		{"keep-branch", no_argument, NULL, 'k'},
		{0, 0, 0, 0},
	};
	const char *branch = NULL;
	bool keep_branch = false;
	int c;
	optind = 0;
	while ((c = getopt_exact(argc, argv, "+b:k", opts)) != -1) {
		if (c == 'b')
			branch = optarg;
		else if (c == 'k')
			keep_branch = true;
		else
			return cmd_usage(ctx->self);
	}
	if (argc - optind != 2 || (branch && keep_branch))
		return cmd_usage(ctx->self);
	const char *to = argv[optind + 1];
	struct agent_rec a, now;
	int rc = cmd_which_agent(ctx, "rename", argv[optind], &a);
	if (rc)
		return rc;
	/* A branch named as its handle (add's usual case) is renamed with it. */
	if (!branch && !keep_branch && a.branch && !strcmp(a.branch, a.handle))
		branch = to;
	if (branch && a.branch && !strcmp(branch, a.branch))
		branch = NULL;
	if (cmd_import_sandbox(ctx, "rename", &a) < 0) {
		agent_rec_free(&a);
		return 1;
	}
	/* The dashboard first: it refuses while the agent's programs run. */
	json_object *req = cmd_agent_request("rename", &a);
	char *parent = path_parent(a.path);
	char *to_path = xasprintf("%s/%s", parent, to);
	json_object_object_add(req, "to", json_object_new_string(to));
	json_object_object_add(req, "to_path", json_object_new_string(to_path));
	if (branch)
		json_object_object_add(req, "to_branch", json_object_new_string(branch));
	int drc = cmd_dashboard(ctx, "rename", req, NULL);
	json_object_put(req);
	if (drc < 0 && drc != -ENOENT) {
		rc = 1;
		goto out;
	}
	char *cause = NULL;
	if (worktree_rename(ctx->repo, &a, to, branch, &now, &cause) < 0) {
		rc = cmd_fail("rename", "%s", cause);
		free(cause);
		if (drc == 0) {
			/* Tell the dashboard it was not renamed after all. */
			struct agent_rec back = {
				.handle = (char *)to, .path = to_path, .branch = a.branch};
			json_object *undo = cmd_agent_request("rename", &back);
			json_object_object_add(undo, "to", json_object_new_string(a.handle));
			json_object_object_add(undo, "to_path", json_object_new_string(a.path));
			if (a.branch)
				json_object_object_add(undo, "to_branch",
						       json_object_new_string(a.branch));
			cmd_dashboard(ctx, "rename", undo, NULL);
			json_object_put(undo);
		}
		goto out;
	}
	printf("renamed %s to %s (%s) at %s\n", a.handle, now.handle, now.branch, now.path);
	agent_rec_free(&now);
out:
	free(parent);
	free(to_path);
	agent_rec_free(&a);
	return rc;
}

int cmd_rebase(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"onto", required_argument, NULL, 'o'},
		{0, 0, 0, 0},
	};
	const char *onto = NULL;
	int c;
	optind = 0;
	while ((c = getopt_exact(argc, argv, "+", opts)) != -1) {
		if (c == 'o')
			onto = optarg;
		else
			return cmd_usage(ctx->self);
	}
	if (argc - optind > 1)
		return cmd_usage(ctx->self);
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "rebase", optind < argc ? argv[optind] : NULL, &a);
	if (rc)
		return rc;
	bool boxed = cmd_sandboxed(ctx, &a);
	/*
	 * A running sandbox commits into its own git dir: rewriting the branch
	 * under it would leave it on commits the host no longer has.
	 */
	if (boxed && open_panes(ctx, "rebase", a.handle) != 0) {
		rc = cmd_fail("rebase",
			      "'%s' runs in its sandbox; close its panes first (workrex close %s), "
			      "or let it run git rebase there",
			      a.handle, a.handle);
		goto out;
	}
	if (cmd_import_sandbox(ctx, "rebase", &a) < 0) {
		rc = 1;
		goto out;
	}
	char *note = NULL, *cause = NULL;
	/* The branch may hold hooks a sandbox wrote: none of git's run for it. */
	if (worktree_rebase(ctx->repo, &ctx->cfg, &a, onto, boxed, &note, &cause) < 0) {
		rc = cmd_fail("rebase", "%s", cause);
		free(cause);
	} else {
		printf("%s\n", note);
	}
	free(note);
out:
	agent_rec_free(&a);
	return rc;
}

int cmd_sync_files(struct cmd_ctx *ctx, int argc, char **argv)
{
	bool all = false;
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "--all")) {
		all = true;
		first = 2;
	}
	for (int i = first; i < argc; i++)
		if (argv[i][0] == '-' || all)
			return cmd_usage(ctx->self);
	int rc = cmd_open_repo(ctx, "sync-files");
	if (rc)
		return rc;
	struct agent_rec *as = NULL;
	size_t n = 0;
	char *cause = NULL;
	if (all) {
		if ((rc = cmd_agents(ctx, "sync-files", &as, &n)) != 0)
			return rc;
	} else {
		n = argc > first ? (size_t)(argc - first) : 1;
		as = xcalloc(n, sizeof *as);
		for (size_t i = 0; i < n; i++)
			if ((rc = cmd_which_agent(ctx, "sync-files",
						  argc > first ? argv[first + i] : NULL, &as[i])) !=
			    0)
				goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int done = 0;
		if (worktree_sync_files(ctx->repo, &ctx->cfg, &as[i], &done, &cause) < 0) {
			rc = cmd_fail("sync-files", "%s: %s", as[i].handle, cause);
			free(cause);
			cause = NULL;
			continue;
		}
		printf("%s: %d file%s brought up to date\n", as[i].handle, done,
		       done == 1 ? "" : "s");
	}
out:
	for (size_t i = 0; i < n; i++)
		agent_rec_free(&as[i]);
	free(as);
	return rc;
}
