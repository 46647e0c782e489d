/*
 * cmd_agent.c - path, rename, rebase and sync-files: what is done to one
 * agent's worktree and branch between its start and its merge.
 *
 * As in cmd_worktree.c the git and file work runs in this process; a running
 * dashboard is asked first when the agent's panes must not be running.
 */
#include "cmd.h"

#include <errno.h>
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
	(void)argc, (void)argv;
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "path", cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	printf("%s\n", a.path);
	agent_rec_free(&a);
	return 0;
}

int cmd_rename(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *branch = cmd_value(ctx, "branch"), *to = cmd_arg(ctx, 1);
	bool keep_branch = cmd_given(ctx, "keep-branch");
	if (branch && keep_branch)
		return cmd_usage(ctx->self);
	struct agent_rec a, now;
	int rc = cmd_which_agent(ctx, "rename", cmd_arg(ctx, 0), &a);
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
	(void)argc, (void)argv;
	const char *onto = cmd_value(ctx, "onto");
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, "rebase", cmd_arg(ctx, 0), &a);
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
	(void)argc, (void)argv;
	bool all = cmd_given(ctx, "all");
	int nargs = cmd_nargs(ctx);
	if (all && nargs)
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
		n = nargs ? (size_t)nargs : 1;
		as = xcalloc(n, sizeof *as);
		for (size_t i = 0; i < n; i++)
			if ((rc = cmd_which_agent(ctx, "sync-files", cmd_arg(ctx, (int)i),
						  &as[i])) != 0)
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
