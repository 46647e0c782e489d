/*
 * cmd_worktree.c - add, list, status, merge and remove from the command line
 * (the dashboard-control commands are cmd_control.c).
 *
 * The git and file work happens here, in the command's own process, never in
 * the dashboard's loop; a running dashboard is told afterwards (control
 * socket) to open or close the agent's panes.
 */
#include "../git/adopted.h"
#include "cmd.h"

#include "../backends/backend.h"
#include "../core/agentcmd.h"
#include "../config/kinds.h"
#include "../git/private.h"
#include "../rpc/proto.h"
#include "../term/width.h"
#include "../util/ports.h"
#include "../util/json.h"
#include "../util/proc.h"
#include "../util/template.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * add -p for an agent that exists already: the prompt goes into its
 * running agent, as send delivers it (submitted, or "not submitted").
 * -ENOENT when there is no such agent: add goes on to make it.
 */
static int prompt_running(struct cmd_ctx *ctx, const struct add_opts *o)
{
	char *handle = o->handle ? xstrdup(o->handle) : handle_from_branch(o->branch);
	struct agent_rec a;
	char *cause = NULL;
	int found = handle ? agent_find(ctx->repo, handle, ctx->cwd, &a, &cause) : -1;
	free(cause);
	free(handle);
	if (found < 0)
		return -ENOENT;
	json_object *req = cmd_agent_request("send", &a);
	json_object_object_add(req, "text", json_object_new_string(o->prompt));
	json_object_object_add(req, "enter", json_object_new_boolean(1));
	int rc = cmd_dashboard(ctx, "add", req, NULL);
	json_object_put(req);
	if (rc == 0)
		printf("%s runs already: the prompt was sent to it\n", a.handle);
	else if (rc == -ENOENT)
		cmd_fail("add", "an agent named '%s' exists already (%s), and nothing runs it",
			 a.handle, a.path);
	agent_rec_free(&a);
	return rc < 0 ? 1 : 0;
}

/*
 * add --fork: the agent it continues, the one whose pane or worktree this
 * is, else the one focused in the dashboard; and its session: --fork's,
 * else the one the dashboard knows, else the one kept for a reboot.
 */
static int fork_source(struct cmd_ctx *ctx, const char *id, struct agent_rec *src, char **session)
{
	const char *pane = getenv("WORKREX_HANDLE");
	char *cause = NULL, *here = realpath(ctx->cwd, NULL);
	json_object *reply = NULL, *agents = NULL;
	int live = cmd_live_agents(ctx, "add", &reply, &agents), rc = -ENOENT;
	if (pane)
		rc = agent_get(ctx->repo, pane, src, &cause);
	if (rc < 0 && here) {
		free(cause);
		cause = NULL;
		rc = agent_find(ctx->repo, NULL, here, src, &cause);
	}
	for (size_t i = 0; rc < 0 && live == 0 && i < json_object_array_length(agents); i++) {
		json_object *a = json_object_array_get_idx(agents, i);
		if (json_flag(a, "focused") && json_str(a, "handle")) {
			free(cause);
			cause = NULL;
			rc = agent_get(ctx->repo, json_str(a, "handle"), src, &cause);
		}
	}
	free(here);
	free(cause);
	cause = NULL;
	if (rc < 0) {
		json_object_put(reply);
		cmd_fail("add", "--fork: of which agent? Run it in the agent's pane or worktree, "
				"or with the agent focused in the dashboard");
		return -1;
	}
	const char *name = src->agent ? src->agent : agentcmd_default(&ctx->cfg);
	if (!agentcmd_forks(&ctx->cfg, name)) {
		json_object_put(reply);
		cmd_fail("add", "--fork: %s cannot fork a session (workrex agents: FORK)",
			 name ? name : "the shell");
		return -1;
	}
	*session = NULL;
	if (id) {
		*session = rpc_session_wellformed(id) ? xstrdup(id) : NULL;
	} else if (live == 0 && cmd_live_agent(agents, src->handle, "session")) {
		*session = xstrdup(
			json_object_get_string(cmd_live_agent(agents, src->handle, "session")));
	} else {
		char *dir = private_agent_dir(repo_root(ctx->repo), src->handle, false),
		     *text = NULL;
		char *f = dir ? xasprintf("%s/kept", dir) : NULL;
		if (f && file_read(f, 4096, &text, &cause) == 0) {
			text[strcspn(text, "\n")] = '\0';
			*session = rpc_session_wellformed(text) ? xstrdup(text) : NULL;
		}
		free(cause);
		free(text);
		free(f);
		free(dir);
	}
	json_object_put(reply);
	if (*session == NULL) {
		cmd_fail("add", "--fork: %s",
			 id ? "that is no session id"
			    : "the agent has reported no session yet (its hooks: workrex setup); "
			      "--fork=SESSION names one");
		return -1;
	}
	return 0;
}

#define AUTO_NAME_SECONDS 30
#define AUTO_NAME_ASK                                                                              \
	"Reply with a short git branch name for the task below, and nothing else: two to "         \
	"five lowercase words joined by hyphens."

/* A branch name the user types, when the namer gave none: NULL without a terminal. */
static char *ask_branch(const char *why)
{
	if (!isatty(0) || !isatty(1)) {
		cmd_fail("add", "-A: %s; name it yourself (add BRANCH)", why);
		return NULL;
	}
	printf("add -A: %s. Branch name: ", why);
	fflush(stdout);
	char line[256];
	if (fgets(line, sizeof line, stdin) == NULL)
		return NULL;
	char *slug = tpl_slugify(line);
	if (slug == NULL || !handle_valid(slug)) {
		cmd_fail("add", "'%s' is no branch name", line);
		free(slug);
		return NULL;
	}
	return slug;
}

/*
 * add -A: the branch from the prompt, through auto_name.command, else the
 * agent kind's cheap model; its first line, slugified, checked. A namer
 * that fails or names badly: the user is asked.
 */
static char *auto_branch(struct cmd_ctx *ctx, const char *prompt, const char *agent)
{
	if (prompt == NULL || *prompt == '\0') {
		cmd_fail("add", "-A names the branch from the prompt: give -p or -P");
		return NULL;
	}
	const struct agent_kind *k =
		kind_of(&ctx->cfg, agent ? agent : agentcmd_default(&ctx->cfg));
	const char *cmd = ctx->cfg.auto_name_command ? ctx->cfg.auto_name_command
			  : k                        ? k->auto_name
						     : NULL;
	if (cmd == NULL)
		return ask_branch("no command to name it (auto_name.command, or an agent kind "
				  "with one)");
	char *in = xasprintf("%s\n\n%s\n", AUTO_NAME_ASK, prompt);
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	struct proc_opts po = PROC_OPTS_DEFAULT;
	po.dir = repo_root(ctx->repo);
	struct buf out = {0};
	/* A cheap model answers in seconds; one that cannot be reached retries for minutes. */
	if (isatty(2))
		fprintf(stderr, "workrex: add -A: naming the branch with %s (%d s at most)\n", cmd,
			AUTO_NAME_SECONDS);
	int rc = proc_capture(argv, &po, in, strlen(in), &out, NULL, AUTO_NAME_SECONDS * 1000);
	free(in);
	char *slug = NULL, *why = NULL;
	if (rc == 128 + 9) {
		why = xasprintf("%s gave no name in %d s", cmd, AUTO_NAME_SECONDS);
	} else if (rc != 0) {
		why = xasprintf("%s failed (%d)", cmd, rc);
	} else {
		/* Its first line with words in it, quotes and all, made a branch name. */
		for (char *l = out.data ? strtok(out.data, "\n") : NULL; l && !slug;
		     l = strtok(NULL, "\n"))
			slug = tpl_slugify(l);
		if (slug && strlen(slug) > 48)
			slug[48] = '\0';
		while (slug && *slug && slug[strlen(slug) - 1] == '-')
			slug[strlen(slug) - 1] = '\0';
		if (slug == NULL || !handle_valid(slug))
			why = xasprintf("%s named nothing usable", cmd);
		else if (repo_branch_exists(ctx->repo, slug))
			why = xasprintf("%s named '%s', which exists", cmd, slug);
	}
	buf_free(&out);
	if (why) {
		free(slug);
		slug = ask_branch(why);
		free(why);
	} else {
		printf("named it %s\n", slug);
	}
	return slug;
}

/*
 * -a NAME names a profile, or a command the host can run: checked before
 * a branch or a worktree is made, not found by the agent's exit 127. A
 * sandbox's command is its image's, which the host cannot see.
 */
static int agent_runnable(struct cmd_ctx *ctx, const char *name, bool sandboxed)
{
	const struct agent_def *def = config_agent(&ctx->cfg, name);
	const char *cmd = def ? def->command : name;
	char *word = xstrndup(cmd, strcspn(cmd, " \t"));
	bool ok = sandboxed || !strcmp(word, "<agent>") ||
		  (strchr(word, '/') ? access(word, X_OK) == 0 : path_has(word));
	int rc = 0;
	if (!ok && def)
		rc = cmd_fail("add", "-a %s: its profile's command %s is not on PATH", name, word);
	else if (!ok)
		rc = cmd_fail("add",
			      "-a %s: no profile of that name, and no command %s on PATH (`workrex "
			      "agents` lists the CLIs it knows)",
			      name, word);
	free(word);
	return rc;
}

static bool add_boxed(const struct cmd_ctx *ctx, const struct add_opts *o)
{
	return o->setup_inside || o->sandbox == 1 || (o->sandbox == -1 && ctx->cfg.sandbox.enabled);
}

/* add for a group: each -a checked as one agent's is, before any of them is made. */
static int add_group_run(struct cmd_ctx *ctx, struct add_plan *p)
{
	struct add_group *g = &p->g;
	g->base_name = p->branch;
	g->prompt = p->from_stdin && p->prompt == NULL ? "{{ input }}" : p->prompt;
	g->remote = p->remote;
	g->background = p->background;
	g->o = p->o;
	int rc = cmd_open_repo(ctx, "add");
	for (size_t i = 0; rc == 0 && !p->remote && i < g->agents.n; i++)
		rc = agent_runnable(ctx, g->agents.v[i], add_boxed(ctx, &p->o));
	return rc ? rc : cmd_add_group(ctx, g);
}

/* add --fork: from the agent it continues, its base, kind, sandbox and files. 0 or 1 (said). */
static int add_fork(struct cmd_ctx *ctx, struct add_plan *p)
{
	if (fork_source(ctx, p->fork_session, &p->src, &p->session) < 0)
		return 1;
	/* A sandboxed agent's conversation and files are its own: its fork is sandboxed too. */
	if (p->src.sandbox == 1 && p->o.sandbox == 0)
		return cmd_fail("add",
				"--fork of %s, which runs sandboxed: its fork does too (not "
				"--no-sandbox)",
				p->src.handle);
	if (p->src.sandbox == 1)
		p->o.sandbox = 1;
	p->o.fork = p->session;
	p->o.agent = p->src.agent;
	if (p->o.base == NULL)
		p->o.base = p->src.branch;
	p->carry = (struct carry){.from = p->src.path, .untracked = true};
	return 0;
}

/* add -w: the main worktree's changes move; asked from there, not an agent's. */
static int add_moving(struct cmd_ctx *ctx, struct add_plan *p)
{
	char *here = realpath(ctx->cwd, NULL), *why = NULL;
	struct agent_rec in = {0};
	bool in_agent = here && agent_find(ctx->repo, NULL, here, &in, &why) == 0;
	free(why);
	agent_rec_free(&in);
	free(here);
	if (in_agent)
		return cmd_fail("add", "-w moves the main worktree's changes: run it there");
	p->carry.from = repo_root(ctx->repo);
	p->carry.move = true;
	return 0;
}

/* An issue's title as a branch's words: "Fix the login!" -> fix-the-login (40 at most). */
static void slug_onto(struct buf *b, const char *title)
{
	size_t start = b->len;
	for (const char *c = title; *c && b->len - start < 40; c++) {
		bool word = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
		if (*c >= 'A' && *c <= 'Z')
			buf_addch(b, (char)(*c - 'A' + 'a'));
		else if (word)
			buf_addch(b, *c);
		else if (b->len > start && b->data[b->len - 1] != '-')
			buf_addch(b, '-');
	}
	while (b->len > start && b->data[b->len - 1] == '-')
		b->data[--b->len] = '\0';
}

/*
 * add --issue N: the issue's branch (N-its-title, as gh issue develop
 * names one; the argument if given) and its prompt: its title, where it
 * is, its body, then -p's text. 0 or 1 (said).
 */
static int add_issue(struct cmd_ctx *ctx, struct add_plan *p)
{
	struct gh_issue is;
	if (cmd_issue(ctx, p->issue, &is) != 0)
		return 1;
	p->o.issue = is.number;
	if (p->branch == NULL) {
		struct buf b = {0};
		buf_addf(&b, "%d-", is.number);
		slug_onto(&b, is.title);
		if (b.data[b.len - 1] == '-')
			b.data[--b.len] = '\0';
		p->named = b.data;
		p->o.branch = p->named;
	}
	struct buf pr = {0};
	buf_addf(&pr, "# %s\n\nGitHub issue #%d%s%s.", is.title, is.number, is.url ? ": " : "",
		 is.url ? is.url : "");
	if (is.body && *is.body)
		buf_addf(&pr, "\n\n%s", is.body);
	if (p->prompt)
		buf_addf(&pr, "\n\n%s", p->prompt);
	p->issue_prompt = pr.data;
	p->o.prompt = p->issue_prompt;
	gh_issue_free(&is);
	return 0;
}

/*
 * The branch: -A's name, --pr's head branch (fetched, as add
 * origin/feature takes it), --issue's, else the argument. 0 or 1 (said).
 */
static int add_branch(struct cmd_ctx *ctx, struct add_plan *p)
{
	p->o.branch = p->pr || p->auto_name ? NULL : p->branch;
	if (p->auto_name && (p->named = auto_branch(ctx, p->prompt, p->o.agent)) == NULL)
		return 1;
	if (p->named)
		p->o.branch = p->named;
	if (p->pr && (p->pr_branch = cmd_pr_branch(ctx, p->pr, &p->pr_number)) == NULL)
		return 1;
	if (p->pr_branch)
		p->o.branch = p->pr_branch;
	if (p->issue && add_issue(ctx, p) != 0)
		return 1;
	return 0;
}

/*
 * add origin/feature: the local branch feature, from origin/feature
 * (tracking it, as git checkout guesses), not a local branch named
 * "origin/feature".
 */
static int add_local_branch(struct cmd_ctx *ctx, struct add_opts *o)
{
	if (repo_branch_exists(ctx->repo, o->branch) ||
	    !repo_remote_branch_exists(ctx->repo, o->branch) || !strchr(o->branch, '/'))
		return 0;
	const char *local = strchr(o->branch, '/') + 1;
	if (repo_branch_exists(ctx->repo, local))
		return cmd_fail(
			"add",
			"'%s' is a remote branch, and a local '%s' exists: `workrex add %s` "
			"checks that out",
			o->branch, local, local);
	if (o->base == NULL)
		o->base = o->branch;
	o->branch = local;
	return 0;
}

/*
 * Asked from inside a sandbox: sandboxed too, a new branch from the base
 * (never one the sandbox may have crafted), post_create inside.
 */
static int add_inside(struct cmd_ctx *ctx, struct add_plan *p)
{
	p->o.sandbox = 1;
	p->o.base = p->main_branch = repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	if (repo_branch_exists(ctx->repo, p->o.branch))
		return cmd_fail("add",
				"'%s' exists; an agent in a sandbox may only spawn on a new branch",
				p->o.branch);
	return 0;
}

/* Was o's agent made here (its record there)? */
static bool workspace_made(struct cmd_ctx *ctx, const struct add_opts *o)
{
	struct agent_rec a;
	char *cause = NULL, *h = o->handle ? xstrdup(o->handle) : handle_from_branch(o->branch);
	bool made = h && agent_find(ctx->repo, h, NULL, &a, &cause) == 0;
	if (made)
		agent_rec_free(&a);
	free(cause);
	free(h);
	return made;
}

/* add for one agent: resolved step by step, then made (here, or on a server). */
static int add_one(struct cmd_ctx *ctx, struct add_plan *p)
{
	struct add_opts *o = &p->o;
	o->prompt = p->prompt;
	int rc = cmd_open_repo(ctx, "add");
	if (rc)
		return rc;
	if (o->layout && config_layout(&ctx->cfg, o->layout) == NULL)
		return cmd_fail("add", "-l %s: no such layout (layouts: in the config)", o->layout);
	if (o->agent && !p->remote && (rc = agent_runnable(ctx, o->agent, add_boxed(ctx, o))))
		return rc;
	if ((p->forking && (rc = add_fork(ctx, p))) ||
	    (p->with_changes && (rc = add_moving(ctx, p))))
		return rc;
	if ((rc = add_branch(ctx, p)))
		return rc;
	/*
	 * Recorded as it is now, so that the agent comes back as what it was
	 * after a reboot, whatever the config says then; on a server, no guess
	 * from this machine's PATH.
	 */
	if (o->agent == NULL)
		o->agent = p->remote ? ctx->cfg.agent : agentcmd_default(&ctx->cfg);
	if (p->prompt && !p->new_only && !o->setup_inside &&
	    (rc = prompt_running(ctx, o)) != -ENOENT)
		return rc;
	if ((rc = add_local_branch(ctx, o)))
		return rc;
	if (p->remote)
		return cmd_remote_add(ctx, o, p->remote, p->background, p->new_only);
	if (o->setup_inside && (rc = add_inside(ctx, p)))
		return rc;
	if (p->repos) {
		if ((rc = cmd_workspace_add(ctx, o, p->repos, &p->home, &p->repos_rec)))
			return rc;
		o->home = p->home;
		o->repos = p->repos_rec;
	}
	rc = cmd_add_made(ctx, o, p->background, p->pr_number, p->carry.from ? &p->carry : NULL);
	/* Not made here: nor there. */
	if (rc && p->home && !workspace_made(ctx, o)) {
		char *h = o->handle ? xstrdup(o->handle) : handle_from_branch(o->branch);
		cmd_workspace_undo(ctx, p->home, p->repos_rec, h);
		free(h);
	}
	return rc;
}

int cmd_add(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct add_plan p = {.o = {.cwd = ctx->cwd, .sandbox = -1}, .g = {.count = 1}};
	char *why = NULL;
	(void)argc, (void)argv;
	int rc = add_plan_fill(ctx, &p);
	if (rc == 0)
		rc = add_plan_check(&p, &why);
	if (why)
		cmd_fail("add", "%s", why);
	free(why);
	if (rc == 0 && !add_plan_group(&p)) {
		rc = add_one(ctx, &p);
		add_plan_free(&p);
		return rc;
	}
	if (rc == 0)
		rc = add_group_run(ctx, &p);
	add_plan_free(&p);
	return rc == 2 ? cmd_usage(ctx->self) : rc < 0 ? 0 : rc;
}

/* An agent removed: what it held past its worktree goes too (its server, its volumes). */
static void agent_gone(struct cmd_ctx *ctx, const struct agent_rec *a)
{
	if (a->remote)
		cmd_remote_gone(ctx, a->remote);
	else if (strcmp(ctx->cfg.sandbox.backend, "devcontainer") == 0)
		cmd_devc_gone(ctx, a->handle);
}

int cmd_add_made(struct cmd_ctx *ctx, const struct add_opts *o, bool background, int pr_number,
		 const struct carry *carry)
{
	struct agent_rec a;
	char *cause = NULL;
	int rc;
	/* A dev container: read, built and checked before anything is made. */
	json_object *devc = NULL;
	bool sandboxed = o->sandbox == 1 || (o->sandbox == -1 && ctx->cfg.sandbox.enabled);
	if (sandboxed && strcmp(ctx->cfg.sandbox.backend, "devcontainer") == 0 &&
	    (rc = cmd_devc_prepare(ctx, o->handle ? o->handle : o->branch, &devc)) != 0)
		return rc;
	if (worktree_add(ctx->repo, &ctx->cfg, o, &a, &cause) < 0) {
		json_object_put(devc);
		if (a.path)
			rc = cmd_fail("add",
				      "%s (the worktree %s was created; `workrex rm %s` removes "
				      "it)",
				      cause, a.path, a.handle);
		else
			rc = cmd_fail("add", "%s", cause);
		free(cause);
		agent_rec_free(&a);
		return rc;
	}
	/*
	 * A sandboxed agent's private git dir, made here rather than on the
	 * dashboard's loop, which then finds it ready (reads, no writes). A
	 * failure is the dashboard's to report when it opens the pane.
	 */
	bool git_ready = false;
	if (devc) {
		cmd_devc_keep(ctx, a.handle, devc); /* else its pane says it has none */
		json_object_put(devc);
	}
	if (cmd_sandboxed(ctx, &a)) {
		struct backend_git git;
		char *why = NULL;
		git_ready = backend_git_prepare(repo_root(ctx->repo), a.handle, a.branch, &git,
						&why) == 0;
		if (git_ready)
			backend_git_free(&git);
		free(why);
	}
	/* Before its agent starts: the work it carries. Not all there: said, nothing lost. */
	int carried = 0;
	char *why = NULL;
	if (carry && cmd_carry(carry, a.path, &why) < 0) {
		carried = cmd_fail("add", "%s: %s", a.handle, why);
		free(why);
	}
	/* A running dashboard opens the panes at once; else the next one lists it. */
	json_object *req = cmd_agent_request("open", &a);
	if (o->fork)
		json_object_object_add(req, "fork", json_object_new_string(o->fork));
	json_object_object_add(req, "focus", json_object_new_boolean(!background));
	json_object_object_add(req, "git_ready", json_object_new_boolean(git_ready));
	bool dashboard = cmd_dashboard_runs(ctx);
	int drc = cmd_dashboard(ctx, "add", req, NULL);
	json_object_put(req);
	/* Its panes are up once the answer came (actions_started): or they did not start. */
	bool started = drc < 0 || a.queued || a.remote || cmd_agent_keepers(ctx, a.handle) > 0;
	printf("created %s (%s) at %s%s\n", a.handle, a.branch, a.path,
	       a.queued         ? "; it waits for its group's slot (--max-concurrent)"
	       : drc == -ENOENT ? "; no dashboard runs, the next one lists it"
	       : !started       ? "; its agent did not start (workrex open tries again)"
	       : dashboard      ? ""
				: "; no dashboard runs; its agent does (workrex shows it)");
	if (pr_number) /* once the dashboard knows the agent */
		cmd_pr_track(ctx, a.handle, pr_number);
	agent_rec_free(&a);
	return (drc < 0 && drc != -ENOENT) || carried || !started ? 1 : 0;
}

static void age(long created, char *out, size_t n)
{
	if (created <= 0) {
		snprintf(out, n, "-");
		return;
	}
	long s = (long)time(NULL) - created;
	if (s < 60)
		snprintf(out, n, "%lds", s < 0 ? 0 : s);
	else if (s < 3600)
		snprintf(out, n, "%ldm", s / 60);
	else if (s < 86400)
		snprintf(out, n, "%ldh", s / 3600);
	else
		snprintf(out, n, "%ldd", s / 86400);
}

/* A path for a table: relative to the project's parent directory, or with ~. Caller frees. */
static char *short_path(const char *path, const char *root)
{
	char *parent = xstrdup(root);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	size_t n = strlen(parent);
	const char *home = getenv("HOME");
	size_t h = home ? strlen(home) : 0;
	char *out;
	if (n > 1 && !strncmp(path, parent, n) && path[n] == '/')
		out = xstrdup(path + n + 1);
	else if (h > 1 && !strncmp(path, home, h) && path[h] == '/')
		out = xasprintf("~%s", path + h);
	else
		out = xstrdup(path);
	free(parent);
	return out;
}

static const char *field(json_object *o, const char *key, const char *none)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : none;
}

/*
 * What its session used, as its hooks last said (the dashboard's usage
 * {in, out, cost_micro}): "usage" as SPEC §12 names it (rpc_usage_public).
 */
void cmd_usage_fields(json_object *o, json_object *u)
{
	if (u == NULL)
		return;
	struct rpc_usage used = {.in = json_long(u, "in", 0),
				 .out = json_long(u, "out", 0),
				 .cost_micro = json_long(u, "cost_micro", -1)};
	json_object_object_add(o, "usage", rpc_usage_public(&used));
}

/* Where the agent runs: host, the sandbox's backend, ssh:HOST (/container when boxed there). */
static char *backend_of(const struct cmd_ctx *ctx, const struct agent_rec *a)
{
	if (a->remote)
		return xasprintf("ssh:%s%s", a->remote, cmd_sandboxed(ctx, a) ? "/container" : "");
	return xstrdup(cmd_sandboxed(ctx, a) ? ctx->cfg.sandbox.backend : "host");
}

/* The project's total, under the table, once any agent's CLI said what it used. */
void cmd_usage_total(json_object *arr)
{
	struct rpc_usage t = {0};
	int n = 0, costed = 0;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct rpc_usage u;
		if (!rpc_usage_from_public(
			    json_object_object_get(json_object_array_get_idx(arr, i), "usage"), &u))
			continue;
		n++;
		t.in += u.in;
		t.out += u.out;
		if (u.cost_micro >= 0) {
			t.cost_micro += u.cost_micro;
			costed++;
		}
	}
	if (n == 0)
		return;
	char cost[32] = "";
	if (costed) {
		struct rpc_usage only = {.cost_micro = t.cost_micro};
		rpc_usage_short(&only, cost, sizeof cost);
	}
	printf("used by %d agent%s: %lld tokens in, %lld out", n, n == 1 ? "" : "s",
	       (long long)t.in, (long long)t.out);
	if (costed == n)
		printf(", %s", cost);
	else if (costed)
		printf(", %s for %d of them (the others' CLIs say no cost)", cost, costed);
	printf("\n");
}

/*
 * The table, each column as wide as its widest cell (as git worktree list
 * and tmux ls size theirs), so that ordinary agents fit 80 columns.
 */
enum { HANDLE, BRANCH, GROUP, STATUS, PANES, BACKEND, AGE, UNMERGED, PORTS, PATH, NCOLS };

/* Its PORTS cell: "30100,30101", or NULL when it has none. */
static char *ports_cell(json_object *o)
{
	json_object *v;
	struct buf b = {0};
	for (size_t k = 0;
	     json_object_object_get_ex(o, "ports", &v) && k < json_object_array_length(v); k++)
		buf_addf(&b, "%s%d", k ? "," : "",
			 json_object_get_int(json_object_array_get_idx(v, k)));
	return b.data;
}

/* One agent's row of list's table, from what list --json says of it. */
static void table_row(json_object *o, char **row, bool status_only, const char *root)
{
	json_object *v;
	row[HANDLE] = xstrdup(field(o, "handle", "?"));
	bool adopted = field(o, "adopted", NULL) != NULL; /* no branch of its own */
	row[BRANCH] = xstrdup(field(o, "branch", adopted ? "-" : "(detached)"));
	row[GROUP] = xstrdup(field(o, "group", "-"));
	row[STATUS] =
		status_only && field(o, "failure", NULL)
			? xasprintf("%s (%s)", field(o, "status", "-"), field(o, "failure", NULL))
			: xstrdup(field(o, "status", "-"));
	if (status_only)
		return;
	int panes = json_object_object_get_ex(o, "panes", &v) ? json_object_get_int(v) : 0;
	int exited = json_object_object_get_ex(o, "exited", &v) ? json_object_get_int(v) : 0;
	/* Its server dropped: its panes still run there, out of reach until it is back. */
	bool gone = json_object_object_get_ex(o, "unreachable", &v) && json_object_get_boolean(v);
	row[PANES] = xstrdup(gone             ? "unreachable"
			     : panes > exited ? "running"
			     : panes          ? "exited"
					      : "-");
	row[BACKEND] = xstrdup(field(o, "backend", "?"));
	char ag[24];
	age(json_object_object_get_ex(o, "created", &v) ? (long)json_object_get_int64(v) : 0, ag,
	    sizeof ag);
	row[AGE] = xstrdup(ag);
	long ahead = json_object_object_get_ex(o, "unmerged", &v) ? json_object_get_int64(v) : -1;
	row[UNMERGED] = adopted ? xstrdup("-") : ahead < 0 ? xstrdup("?") : xasprintf("%ld", ahead);
	char *ports = ports_cell(o);
	row[PORTS] = ports ? ports : xstrdup("-");
	row[PATH] = short_path(field(o, "path", ""), root);
}

static void print_table(json_object *arr, bool status_only, const char *root)
{
	static const char *const head[NCOLS] = {"HANDLE",  "BRANCH", "GROUP",    "STATUS", "PANES",
						"BACKEND", "AGE",    "UNMERGED", "PORTS",  "PATH"};
	bool groups = false, ports = false;
	size_t rows = json_object_array_length(arr), ncols;
	char **cell = xcalloc((rows + 1) * NCOLS, sizeof *cell);
	for (size_t c = 0; c < NCOLS; c++)
		cell[c] = xstrdup(head[c]);
	for (size_t r = 0; r < rows; r++) {
		json_object *o = json_object_array_get_idx(arr, r);
		table_row(o, cell + (r + 1) * NCOLS, status_only, root);
		groups |= field(o, "group", NULL) != NULL;
		ports |= field(o, "ports", NULL) != NULL;
	}
	/*
	 * status: handle and status only. PATH only when it says something: when
	 * every agent lives in one directory under its own handle (the
	 * worktree_dir), the column is that directory repeated (--json has it).
	 */
	bool paths_differ = false;
	for (size_t r = 1; r <= rows && !status_only; r++) {
		const char *p = cell[r * NCOLS + PATH], *first = cell[NCOLS + PATH];
		const char *base = strrchr(p, '/'), *fbase = strrchr(first, '/');
		size_t dir = base ? (size_t)(base - p) : 0,
		       fdir = fbase ? (size_t)(fbase - first) : 0;
		paths_differ |= !base || strcmp(base + 1, cell[r * NCOLS + HANDLE]) != 0 ||
				dir != fdir || strncmp(p, first, dir) != 0;
	}
	/* GROUP, too, only when an agent is in one (add -n, -a twice, --foreach). */
	size_t cols[NCOLS];
	ncols = 0;
	for (size_t c = 0; c < NCOLS; c++)
		if (status_only ? c == HANDLE || c == STATUS
				: (c != GROUP || groups) && (c != PORTS || ports) &&
					  (c != PATH || paths_differ))
			cols[ncols++] = c;
	/* In columns on the screen, not bytes: a branch named in Greek lines up too. */
	int width[NCOLS] = {0};
	for (size_t r = 0; r <= rows; r++)
		for (size_t k = 0; k < ncols; k++)
			width[k] = WRX_MAX(width[k], width_of_utf8(cell[r * NCOLS + cols[k]]));
	for (size_t r = 0; r <= rows; r++) {
		for (size_t k = 0; k + 1 < ncols; k++) {
			const char *t = cell[r * NCOLS + cols[k]];
			printf("%s%*s  ", t, width[k] - width_of_utf8(t), "");
		}
		printf("%s\n", cell[r * NCOLS + cols[ncols - 1]]);
		for (size_t c = 0; c < NCOLS; c++)
			free(cell[r * NCOLS + c]);
	}
	free(cell);
}

/* The dashboard's order: by number (the sidebar's), then by age, then by name. */
static int by_number(const void *x, const void *y)
{
	const struct agent_rec *a = x, *b = y;
	int na = a->number ? a->number : INT32_MAX, nb = b->number ? b->number : INT32_MAX;
	if (na != nb)
		return na < nb ? -1 : 1;
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return strcmp(a->handle, b->handle);
}

/* The rows of sessions adopted from outside workrex (adopt): no branch, their CLI's status. */
static void adopted_rows(json_object *arr, const struct adopted_rec *ad, size_t n,
			 json_object *live, bool status_only, int nfilter, char **filter)
{
	for (size_t i = 0; i < n; i++) {
		bool wanted = nfilter == 0;
		for (int k = 0; k < nfilter && !wanted; k++)
			wanted = !strcmp(filter[k], ad[i].handle);
		if (!wanted)
			continue;
		const char *h = ad[i].handle;
		json_object *o = json_object_new_object(), *v;
		json_object_object_add(o, "handle", json_object_new_string(h));
		json_object_object_add(o, "branch", NULL);
		v = cmd_live_agent(live, h, "status");
		json_object_object_add(o, "status", json_object_get(v));
		if ((v = cmd_live_agent(live, h, "failure")))
			json_object_object_add(o, "failure", json_object_get(v));
		if (cmd_live_agent(live, h, "status") && (v = cmd_live_agent(live, h, "since_ms")))
			json_object_object_add(o, "since_ms", json_object_get(v));
		json_object_object_add(o, "adopted", json_object_new_string(ad[i].id));
		cmd_usage_fields(o, cmd_live_agent(live, h, "usage"));
		if (!status_only) {
			json_object_object_add(o, "panes",
					       json_object_new_int(json_object_get_int(
						       cmd_live_agent(live, h, "panes"))));
			json_object_object_add(o, "exited",
					       json_object_new_int(json_object_get_int(
						       cmd_live_agent(live, h, "exited"))));
			char *backend = xasprintf("adopted:%s", ad[i].kind);
			json_object_object_add(o, "backend", json_object_new_string(backend));
			free(backend);
			json_object_object_add(o, "agent", json_object_new_string(ad[i].kind));
			json_object_object_add(o, "path", json_object_new_string(ad[i].cwd));
		}
		json_object_array_add(arr, o);
	}
}

/* The first of filter that names no agent (by handle or branch) and no adopted session. */
static const char *unknown_name(const struct agent_rec *as, size_t n, const struct adopted_rec *ad,
				size_t nad, int nfilter, char **filter)
{
	for (int k = 0; k < nfilter; k++) {
		bool known = false;
		for (size_t i = 0; i < n && !known; i++)
			known = !strcmp(filter[k], as[i].handle) ||
				(as[i].branch && !strcmp(filter[k], as[i].branch));
		for (size_t i = 0; i < nad && !known; i++)
			known = !strcmp(filter[k], ad[i].handle);
		if (!known)
			return filter[k];
	}
	return NULL;
}

/* Under the table: what the agents used in all, and sessions to adopt. */
static void list_footer(struct cmd_ctx *ctx, json_object *arr)
{
	cmd_usage_total(arr);
	cmd_adoptable_note(ctx);
}

/* What list says of a beyond its status: its panes, where it runs, its record. */
static void list_fields(json_object *o, const struct agent_rec *a, json_object *live_agents,
			const char *backend, long ahead)
{
	json_object *panes = cmd_live_agent(live_agents, a->handle, "panes");
	json_object *exited = cmd_live_agent(live_agents, a->handle, "exited");
	json_object_object_add(o, "panes", json_object_new_int(json_object_get_int(panes)));
	json_object_object_add(o, "exited", json_object_new_int(json_object_get_int(exited)));
	json_object *gone = cmd_live_agent(live_agents, a->handle, "unreachable");
	if (gone && json_object_get_boolean(gone))
		json_object_object_add(o, "unreachable", json_object_new_boolean(1));
	json_object_object_add(o, "backend", json_object_new_string(backend));
	json_object_object_add(o, "host", a->remote ? json_object_new_string(a->remote) : NULL);
	json_object_object_add(o, "created", json_object_new_int64(a->created));
	json_object_object_add(o, "unmerged", json_object_new_int64(ahead));
	json_object_object_add(o, "base", a->base ? json_object_new_string(a->base) : NULL);
	json_object_object_add(o, "agent", a->agent ? json_object_new_string(a->agent) : NULL);
	json_object_object_add(o, "path", json_object_new_string(a->path));
	if (a->repos) {
		json_object *repos = json_object_new_array();
		for (const char *l = a->repos; *l;
		     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
			json_object_array_add(
				repos, json_object_new_string_len(l, (int)strcspn(l, "=\n")));
		json_object_object_add(o, "repos", repos);
		json_object_object_add(o, "home", json_object_new_string(a->home ? a->home : ""));
	}
	if (a->ports) {
		json_object *ports = json_object_new_array();
		int v[PORTS_MAX];
		for (size_t i = 0, n = ports_split(a->ports, v, PORTS_MAX); i < n; i++)
			json_object_array_add(ports, json_object_new_int(v[i]));
		json_object_object_add(o, "ports", ports);
	}
}

static int list_agents(struct cmd_ctx *ctx, const char *name, bool json, bool status_only,
		       int nfilter, char **filter)
{
	int rc = cmd_open_repo(ctx, name);
	if (rc)
		return rc;
	struct agent_rec *as;
	size_t n;
	if ((rc = cmd_agents(ctx, name, &as, &n)) != 0)
		return rc;
	if (n > 1)
		qsort(as, n, sizeof *as, by_number);
	struct adopted_rec *ad;
	size_t nad;
	adopted_list(ctx->repo, &ad, &nad);
	/* Every name asked for must be an agent: an empty answer would say "no status". */
	const char *unknown = unknown_name(as, n, ad, nad, nfilter, filter);
	if (unknown) {
		rc = cmd_fail(name, "no agent '%s' (workrex list shows them)", unknown);
		adopted_list_free(ad, nad);
		for (size_t i = 0; i < n; i++)
			agent_rec_free(&as[i]);
		free(as);
		return rc;
	}
	char *main = repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	json_object *arr = json_object_new_array();
	/* Status lives in the running dashboard; without one there is none. */
	json_object *live, *live_agents;
	cmd_live_agents(ctx, name, &live, &live_agents);
	for (size_t i = 0; i < n; i++) {
		struct agent_rec *a = &as[i];
		bool wanted = nfilter == 0;
		for (int k = 0; k < nfilter && !wanted; k++)
			wanted = !strcmp(filter[k], a->handle) ||
				 (a->branch && !strcmp(filter[k], a->branch));
		if (!wanted)
			continue;
		cmd_import_sandbox(ctx, name, a);
		const char *into =
			a->base && repo_branch_exists(ctx->repo, a->base) ? a->base : main;
		long ahead = a->branch && into ? repo_ahead(ctx->repo, a->branch, into) : -1;
		json_object *st = cmd_live_agent(live_agents, a->handle, "status");
		const char *status = st ? json_object_get_string(st) : NULL;
		char *backend = backend_of(ctx, a);
		{
			json_object *o = json_object_new_object();
			json_object_object_add(o, "handle", json_object_new_string(a->handle));
			json_object_object_add(
				o, "branch", a->branch ? json_object_new_string(a->branch) : NULL);
			if (a->group)
				json_object_object_add(o, "group",
						       json_object_new_string(a->group));
			if (a->issue > 0)
				json_object_object_add(o, "issue", json_object_new_int(a->issue));
			/* Its directory gone is what it is now, whatever it last said. */
			json_object_object_add(o, "status",
					       a->missing ? json_object_new_string("missing")
					       : status   ? json_object_new_string(status)
							  : NULL);
			if (a->missing)
				json_object_object_add(o, "missing", json_object_new_boolean(1));
			json_object *failure = cmd_live_agent(live_agents, a->handle, "failure");
			if (failure)
				json_object_object_add(o, "failure", json_object_get(failure));
			json_object *since = cmd_live_agent(live_agents, a->handle, "since_ms");
			if (status && since)
				json_object_object_add(o, "since_ms", json_object_get(since));
			cmd_usage_fields(o, cmd_live_agent(live_agents, a->handle, "usage"));
			if (!status_only)
				list_fields(o, a, live_agents, backend, ahead);
			json_object_array_add(arr, o);
		}
		free(backend);
	}
	adopted_rows(arr, ad, nad, live_agents, status_only, nfilter, filter);
	adopted_list_free(ad, nad);
	if (json)
		printf("%s\n",
		       json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		print_table(arr, status_only, repo_root(ctx->repo));
	if (!json && !status_only)
		list_footer(ctx, arr);
	json_object_put(arr);
	json_object_put(live);
	for (size_t i = 0; i < n; i++)
		agent_rec_free(&as[i]);
	free(as);
	free(main);
	return 0;
}

/* list -q: the handles alone, for scripts and shell completion; nothing imported. */
static int list_handles(struct cmd_ctx *ctx)
{
	int rc = cmd_open_repo(ctx, "list");
	if (rc)
		return rc;
	struct agent_rec *as;
	size_t n;
	if ((rc = cmd_agents(ctx, "list", &as, &n)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", as[i].handle);
		agent_rec_free(&as[i]);
	}
	free(as);
	return 0;
}

int cmd_list(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool json = cmd_given(ctx, "json"), quiet = cmd_given(ctx, "quiet"),
	     pr = cmd_given(ctx, "pr");
	if (pr && !quiet) {
		int rc = cmd_open_repo(ctx, "list");
		return rc ? rc : cmd_list_pr(ctx, json);
	}
	if (quiet && !json)
		return list_handles(ctx);
	return list_agents(ctx, "list", json, false, 0, NULL);
}

int cmd_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	int n = cmd_nargs(ctx);
	char **names = xcalloc((size_t)n + 1, sizeof *names);
	for (int i = 0; i < n; i++)
		names[i] = (char *)cmd_arg(ctx, i);
	int rc = list_agents(ctx, "status", cmd_given(ctx, "json"), true, n, names);
	free(names);
	return rc;
}

/* The agent stops (its panes close) once a merge or remove is sure to go ahead. */
static void stop_panes(const struct agent_rec *a, void *arg)
{
	cmd_notify(arg, "stop", "close", a, false);
}

/*
 * Paths whose change makes the host run something new: the project config,
 * git hooks and their managers, what a build or an editor runs, CI.
 */
static bool runs_on_host(const char *path, const char *hooks_path)
{
	static const char *const prefixes[] = {
		".workrex.yaml", ".workrex/",       ".husky/",        ".githooks/",
		".git-hooks/",   "lefthook",        ".lefthook",      ".pre-commit-config.yaml",
		".envrc",        ".vscode/",        ".idea/",         ".github/workflows/",
		".gitlab-ci",    ".circleci/",      ".travis.yml",    ".buildkite/",
		"Jenkinsfile",   "azure-pipelines", ".devcontainer/",
	};
	/* Anywhere in the tree: what make, npm, cargo, just, task run. */
	static const char *const names[] = {
		"Makefile", "makefile",    "GNUmakefile", "package.json", "build.rs",
		"justfile", "Justfile",    ".justfile",   "Taskfile.yml", "Taskfile.yaml",
		"setup.py", "conftest.py", ".npmrc",      ".yarnrc.yml",  "CMakeLists.txt",
	};
	for (size_t i = 0; i < WRX_ARRAY_LEN(prefixes); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < WRX_ARRAY_LEN(names); i++)
		if (!strcmp(base, names[i]))
			return true;
	size_t n = hooks_path ? strlen(hooks_path) : 0;
	return n && hooks_path[0] != '/' && !strncmp(path, hooks_path, n) &&
	       (path[n] == '/' || path[n] == '\0');
}

/*
 * merge --preview: what a merge would bring, on one line, for the user's yes
 * to an agent's own merge request (bridge.c): the diffstat, and a warning
 * naming what the host would later run.
 */
static int merge_preview(struct cmd_ctx *ctx, const struct agent_rec *a, const char *into,
			 bool ignore_uncommitted)
{
	char *main = into ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	into = into ? into : main;
	if (a->branch == NULL || into == NULL) {
		free(main);
		return cmd_fail("merge", "'%s' has no branch to merge", a->handle);
	}
	/* Nothing to merge while its agent runs (it asks): refused, as nothing_yet does, unasked. */
	if (repo_ahead(ctx->repo, a->branch, into) == 0) {
		int rc =
			cmd_fail("merge", "'%s' has nothing to merge into %s yet", a->branch, into);
		free(main);
		return rc;
	}
	/*
	 * What the merge would refuse, refused here: no one is asked to allow a
	 * merge that cannot happen. (On a server its merge looks there.)
	 */
	bool dirty = false;
	char *cause = NULL;
	if (!ignore_uncommitted && a->remote == NULL &&
	    worktree_dirty(&ctx->cfg, a, &dirty, &cause) == 0 && dirty) {
		char *why = merge_dirty_refusal(a->branch);
		int rc = cmd_fail("merge", "%s", why);
		free(why);
		free(main);
		return rc;
	}
	free(cause);
	struct branch_changes ch;
	cmd_branch_changes(ctx->repo, a->branch, into, &ch);
	printf("%s into %s: %s%s%s\n", a->branch, into, ch.stat,
	       ch.runs ? "; WARNING, runs on the host: " : "", ch.runs ? ch.runs : "");
	branch_changes_free(&ch);
	free(main);
	return 0;
}

void cmd_branch_changes(const struct repo *r, const char *branch, const char *into,
			struct branch_changes *out)
{
	memset(out, 0, sizeof *out);
	struct repo_diffstat d;
	if (repo_diffstat(r, branch, into, &d) < 0 || d.files == 0) {
		out->stat = xstrdup("no changes");
		repo_diffstat_free(&d);
		return;
	}
	out->files = d.files;
	out->added = d.added;
	out->deleted = d.deleted;
	/* As git diff --shortstat says it: a count that is 0 is left out. */
	struct buf st = {0};
	buf_addf(&st, "%d file%s changed", d.files, d.files == 1 ? "" : "s");
	if (d.added)
		buf_addf(&st, ", %d insertion%s(+)", d.added, d.added == 1 ? "" : "s");
	if (d.deleted)
		buf_addf(&st, ", %d deletion%s(-)", d.deleted, d.deleted == 1 ? "" : "s");
	out->stat = st.data;
	char *hooks = repo_config_get(r, "core.hooksPath");
	struct buf warn = {0};
	for (size_t i = 0; i < d.npaths; i++)
		if (runs_on_host(d.paths[i], hooks))
			buf_addf(&warn, "%s%s", warn.len ? ", " : "", d.paths[i]);
	out->runs = warn.data; /* NULL: none */
	free(hooks);
	repo_diffstat_free(&d);
}

void branch_changes_free(struct branch_changes *c)
{
	free(c->stat);
	free(c->runs);
	memset(c, 0, sizeof *c);
}

/*
 * A merge with nothing to merge removes the agent: right when it is done
 * and its work is in, a surprise while its program still runs (the commit
 * it is about to make would be lost with the worktree). Refused then.
 */
static bool nothing_yet(struct cmd_ctx *ctx, const struct agent_rec *a, const char *into)
{
	if (a->remote || a->branch == NULL)
		return false;
	char *main = into ? NULL : repo_main_branch(ctx->repo, ctx->cfg.main_branch);
	into = into ? into : main;
	bool nothing = into && repo_ahead(ctx->repo, a->branch, into) == 0;
	json_object *r = NULL, *agents = NULL;
	bool runs = false;
	if (nothing && cmd_live_agents(ctx, "merge", &r, &agents) == 0) {
		json_object *p = cmd_live_agent(agents, a->handle, "panes");
		json_object *e = cmd_live_agent(agents, a->handle, "exited");
		runs = p && json_object_get_int(p) > (e ? json_object_get_int(e) : 0);
		json_object_put(r);
	}
	if (nothing && runs)
		cmd_fail("merge",
			 "'%s' has nothing to merge into %s yet, and its agent still runs; "
			 "merging now would remove it (workrex rm %s does that on purpose)",
			 a->branch, into, a->handle);
	free(main);
	return nothing && runs;
}

/*
 * a merged as o says, its panes stopped and the agent forgotten once its
 * worktree is gone (what `merge` does after its checks). 0, or -errno
 * with the reason said, or given in *why (caller frees) when why.
 */
int cmd_merge_agent(struct cmd_ctx *ctx, struct agent_rec *a, struct merge_opts *o, char **why)
{
	char *cause = NULL, *note = NULL;
	int rc = 0;
	/* Git work done for a sandboxed or remote agent runs no git hook (its branch wrote them). */
	o->no_hooks = cmd_sandboxed(ctx, a) || a->remote;
	o->place = cmd_remote_place(ctx, a);
	o->stop = stop_panes;
	o->stop_arg = ctx;
	if (worktree_merge(ctx->repo, &ctx->cfg, a, o, &note, &cause) < 0) {
		rc = -EIO;
		if (why)
			*why = cause;
		else
			cmd_fail("merge", "%s", cause);
		if (why)
			cause = NULL;
		free(cause);
	} else {
		if (!o->keep && (a->remote ? repo_branch_exists(ctx->repo, a->branch) == false
					   : access(a->path, F_OK) != 0))
			cmd_notify(ctx, "merge", "forget", a, false);
		char *main = repo_main_branch(ctx->repo, ctx->cfg.main_branch);
		printf("merged %s into %s%s%s\n", a->branch,
		       o->into ? o->into
		       : main  ? main
			       : "main",
		       note ? ": " : "", note ? note : "");
		free(main);
		if (!o->keep && (a->remote || access(a->path, F_OK) != 0))
			agent_gone(ctx, a);
	}
	free(note);
	return rc;
}

int cmd_merge(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct merge_opts o = {
		.into = cmd_value(ctx, "into"),
		.strategy = cmd_given(ctx, "rebase")   ? "rebase"
			    : cmd_given(ctx, "squash") ? "squash"
						       : NULL,
		.keep = cmd_given(ctx, "keep"),
		.ignore_uncommitted = cmd_given(ctx, "ignore-uncommitted"),
		.no_verify = cmd_given(ctx, "no-verify"),
	};
	bool preview = cmd_given(ctx, "preview");
	if (cmd_given(ctx, "rebase") && cmd_given(ctx, "squash"))
		return cmd_usage(ctx->self);
	int rc = cmd_open_repo(ctx, "merge");
	if (rc)
		return rc;
	if (cmd_given(ctx, "queue"))
		return cmd_queue_add(ctx, cmd_arg(ctx, 0));
	struct agent_rec a;
	char *cause = NULL;
	if (agent_find(ctx->repo, cmd_arg(ctx, 0), ctx->cwd, &a, &cause) < 0) {
		rc = cmd_fail("merge", "%s", cause);
		free(cause);
		return rc;
	}
	if (cmd_import_sandbox(ctx, "merge", &a) < 0) {
		agent_rec_free(&a);
		return 1;
	}
	if (preview) {
		/* An agent of several repositories: all of them, or why none would merge. */
		rc = a.repos && o.into == NULL
			     ? (cmd_workspace_preview(ctx, &a) < 0 ? 1 : 0)
			     : merge_preview(ctx, &a, o.into, o.ignore_uncommitted);
		agent_rec_free(&a);
		return rc;
	}
	/* (An agent of several repositories may have its work in the others only.) */
	if (!o.keep && !a.repos && nothing_yet(ctx, &a, o.into)) {
		agent_rec_free(&a);
		return 1;
	}
	/* An agent of several repositories: each previewed, then each lands. */
	rc = (a.repos ? cmd_workspace_merge(ctx, &a, &o) : cmd_merge_agent(ctx, &a, &o, NULL)) < 0
		     ? 1
		     : 0;
	agent_rec_free(&a);
	return rc;
}

/*
 * remove --gone: the agents whose work is gone upstream (cmd_pr_gone),
 * asked once with the list. Their branches were merged there, not here,
 * so unmerged work does not hold them; uncommitted work does (-f
 * overrides), and says so.
 */
static int gone_agents(struct cmd_ctx *ctx, bool yes, bool dry, struct remove_opts *o,
		       struct agent_rec **out, size_t *nout)
{
	struct agent_rec *as;
	size_t n, k = 0;
	int rc = cmd_agents(ctx, "remove", &as, &n);
	if (rc)
		return rc;
	struct buf list = {0};
	size_t unknown = 0;
	for (size_t i = 0; i < n; i++) {
		char *why = NULL;
		bool dirty = false;
		char *cause = NULL;
		int gone = cmd_pr_gone(ctx, &as[i], &why);
		unknown += gone < 0;
		if (gone <= 0) {
			agent_rec_free(&as[i]);
			continue;
		}
		if (!o->force && as[i].remote == NULL &&
		    worktree_dirty(&ctx->cfg, &as[i], &dirty, &cause) == 0 && dirty) {
			fprintf(stderr,
				"workrex: remove: %s: %s, but its worktree has uncommitted "
				"changes: kept (-f removes it too)\n",
				as[i].handle, why);
			free(why);
			agent_rec_free(&as[i]);
			continue;
		}
		free(cause);
		buf_addf(&list, "  %s: %s\n", as[i].handle, why);
		free(why);
		as[k++] = as[i];
	}
	/* gh could not say (said above): not "none gone", and an exit that says so. */
	if (unknown)
		fprintf(stderr, "workrex: remove: could not tell for %zu of %zu agents (%s)%s\n",
			unknown, n, cmd_gh_broken() ? cmd_gh_broken() : "gh failed",
			k ? "; of the others:" : ": nothing removed");
	if (k == 0) {
		if (!unknown)
			printf("no agent's work is gone upstream\n");
		free(as);
		buf_free(&list);
		*out = NULL;
		*nout = 0;
		return unknown ? 1 : 0;
	}
	printf("%s", list.data);
	buf_free(&list);
	if (dry) { /* the list alone: the overview's R asks with it */
		for (size_t i = 0; i < k; i++)
			agent_rec_free(&as[i]);
		free(as);
		*out = NULL;
		*nout = 0;
		return 0;
	}
	if (!yes) {
		if (k == 1)
			printf("remove it, its worktree and branch? (y/n) ");
		else
			printf("remove these %zu agents, their worktrees and branches? (y/n) ", k);
		fflush(stdout);
		char answer[16] = "";
		bool got = fgets(answer, sizeof answer, stdin) != NULL;
		answer[strcspn(answer, "\n")] = '\0';
		if (!isatty(STDIN_FILENO))
			printf("%s\n", answer); /* what a terminal would have echoed */
		if (!got || (answer[0] != 'y' && answer[0] != 'Y')) {
			printf("nothing removed\n");
			for (size_t i = 0; i < k; i++)
				agent_rec_free(&as[i]);
			free(as);
			*out = NULL;
			*nout = 0;
			return 0;
		}
	}
	o->force = true; /* merged upstream: the unmerged-here check would hold every one */
	*out = as;
	*nout = k;
	return 0;
}

int cmd_remove(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct remove_opts o = {.stop = stop_panes,
				.stop_arg = ctx,
				.run_hooks = true,
				.force = cmd_given(ctx, "force"),
				.keep_branch = cmd_given(ctx, "keep-branch")};
	bool all = cmd_given(ctx, "all"), gone = cmd_given(ctx, "gone"),
	     yes = cmd_given(ctx, "yes"), dry = cmd_given(ctx, "dry-run");
	int nargs = cmd_nargs(ctx);
	if (((all || gone) && nargs > 0) || (dry && !gone))
		return cmd_usage(ctx->self);
	int rc = cmd_open_repo(ctx, "remove");
	if (rc)
		return rc;
	char *cause = NULL;
	struct agent_rec *as = NULL;
	size_t n = 0;
	if (gone) {
		if ((rc = gone_agents(ctx, yes, dry, &o, &as, &n)) != 0)
			return rc;
	} else if (all) {
		if ((rc = cmd_agents(ctx, "remove", &as, &n)) != 0)
			return rc;
	} else {
		int want = nargs ? nargs : 1;
		as = xcalloc((size_t)want, sizeof *as);
		for (int i = 0; i < want; i++) {
			const char *name = cmd_arg(ctx, i);
			if (agent_find(ctx->repo, name, ctx->cwd, &as[n], &cause) < 0) {
				rc = cmd_fail("remove", "%s", cause);
				free(cause);
				cause = NULL;
				continue;
			}
			n++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		/* Unmerged commits made inside count as unmerged: import them first. */
		if (cmd_import_sandbox(ctx, "remove", &as[i]) < 0 && !o.force) {
			rc = 1;
			agent_rec_free(&as[i]);
			continue;
		}
		o.place = cmd_remote_place(ctx, &as[i]);
		char *note = NULL;
		o.note = &note;
		/* An agent of several repositories: theirs go first, or none of it. */
		if (as[i].repos && cmd_workspace_remove(ctx, &as[i], &o) != 0) {
			rc = 1;
			agent_rec_free(&as[i]);
			continue;
		}
		if (worktree_remove(ctx->repo, &ctx->cfg, &as[i], &o, &cause) < 0) {
			rc = cmd_fail("remove", "%s", cause);
			free(cause);
			cause = NULL;
		} else {
			cmd_notify(ctx, "remove", "forget", &as[i], false);
			printf("removed %s%s%s\n", as[i].handle, note ? "; " : "",
			       note ? note : "");
			cmd_workspace_gone(ctx, &as[i]);
			agent_gone(ctx, &as[i]);
		}
		free(note);
		agent_rec_free(&as[i]);
	}
	free(as);
	return rc;
}
