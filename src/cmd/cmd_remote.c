/*
 * cmd_remote.c - agents on servers (remote.hosts), from the command line:
 * `add --remote HOST`, bringing a remote agent's branch back (list,
 * merge, remove), removing it there, and the two steps the dashboard
 * runs as children so that its loop never waits on ssh:
 *
 *   workrex __remote-up HOST [--rpc SOCK] [--kill PANE]...
 *       the link up, the project's keepers there listed and forwarded
 *       here, the RPC bridge forwarded there; one JSON line at the end
 *   workrex __remote-start HOST [--rpc SOCK]   (the pane's spec on stdin)
 *       a keeper started there for a pane and forwarded here; JSON too
 *   workrex __remote-paste HOST HANDLE         (an image on stdin)
 *       the image staged in the agent's worktree there: {"path"}
 *
 * An agent there is recorded here like any other (worktree.h), with
 * .remote naming the host; its branch here holds what was last fetched
 * back, which git verifies object by object (transfer.fsckObjects): the
 * server is the user's, but nothing an agent there wrote reaches this
 * repository unhashed, and git work done here for it runs no hook.
 */
#include "cmd.h"

#include "../git/private.h"
#include "../remote/link.h"
#include "../remote/provision.h"
#include "../remote/server.h"
#include "../rpc/proto.h"
#include "../util/image.h"
#include "../util/json.h"
#include "../util/ports.h"
#include "../util/proc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Exit status of __remote-up and __remote-start when the host cannot be reached. */
#define UNREACHABLE 3

/* The link to name for ctx's project, up. 0, or -errno with *cause. */
static int link_open(struct cmd_ctx *ctx, const char *name, struct remote_link *l, char **cause)
{
	const struct remote_host *h = link_host(&ctx->cfg, name, cause);
	if (h == NULL)
		return -ENOENT;
	int rc = link_init(l, h, repo_root(ctx->repo), cause);
	if (rc == 0 && (rc = link_up(l, cause)) < 0)
		link_free(l);
	return rc;
}

/* git with GIT_SSH_COMMAND through the link's master, in the project. */
static int git_link(struct cmd_ctx *ctx, const struct remote_link *l, const char *const *argv,
		    char **cause, const char *what)
{
	char *env[] = {link_git_env(l), NULL};
	struct buf err = {0};
	int st = git_run_env(repo_root(ctx->repo), argv, env, NULL, &err, true);
	if (st != 0)
		*cause = git_error_line(&err, what);
	buf_free(&err);
	free(env[0]);
	return st == 0 ? 0 : -EIO;
}

static int update_ref(struct cmd_ctx *ctx, const char *ref, const char *to, const char *from)
{
	const char *argv[] = {"update-ref", "-m", "workrex: from the agent's server", "--", ref, to,
			      from,         NULL};
	if (from == NULL)
		argv[6] = NULL;
	return git_run(repo_root(ctx->repo), argv, NULL, NULL, true) == 0 ? 0 : -EIO;
}

static char *synced_ref(const char *handle)
{
	return xasprintf("refs/workrex/remote/%s", handle);
}

static json_object *call(struct remote_link *l, const char *op, json_object *req, char **cause);

/* import there: a sandboxed agent's private git dir onto its branch in the clone. */
static int remote_box_import(struct remote_link *l, const struct agent_rec *a, char **cause)
{
	json_object *req = json_object_new_object();
	json_object_object_add(req, "path", json_object_new_string(l->host->path));
	json_object_object_add(req, "handle", json_object_new_string(a->handle));
	if (a->branch)
		json_object_object_add(req, "branch", json_object_new_string(a->branch));
	json_object_object_add(req, "cwd", json_object_new_string(a->path));
	json_object *r = call(l, "import", req, cause);
	const char *note = json_str(r, "note");
	if (note)
		fprintf(stderr, "workrex: %s: %s\n", a->handle, note);
	int rc = r ? 0 : -1;
	json_object_put(r);
	return rc;
}

/*
 * The agent's branch fetched back from its server, every object hashed,
 * then moved here only from where it was last fetched (the branch here
 * moved too: the server's commits wait under refs/workrex/fetch/).
 * connect: make the link if none is up (list does not: it shows the last).
 */
int cmd_remote_import(struct cmd_ctx *ctx, const char *what, const struct agent_rec *a,
		      bool connect)
{
	struct remote_link l;
	char *cause = NULL;
	const struct remote_host *h = link_host(&ctx->cfg, a->remote, &cause);
	int rc = h ? link_init(&l, h, repo_root(ctx->repo), &cause) : -ENOENT;
	if (rc == 0 && !connect && !link_alive(&l)) {
		link_free(&l);
		return 0;
	}
	if (rc == 0 && (rc = link_up(&l, &cause)) < 0)
		link_free(&l);
	if (rc < 0) {
		cmd_fail(what, "%s: %s", a->handle, cause);
		free(cause);
		return -1;
	}
	/* Sandboxed there: its commits onto its branch in the clone first, verified there. */
	if (cmd_sandboxed(ctx, a) && remote_box_import(&l, a, &cause) < 0) {
		cmd_fail(what, "%s: importing what its sandbox on %s committed: %s", a->handle,
			 a->remote, cause);
		free(cause);
		link_free(&l);
		return -1;
	}
	char *fetched = xasprintf("refs/workrex/fetch/%s", a->handle),
	     *synced = synced_ref(a->handle);
	char *spec = xasprintf("+refs/heads/%s:%s", a->branch, fetched), *url = link_git_url(&l);
	char *env[] = {link_git_env(&l), NULL};
	struct buf err = {0};
	rc = repo_fetch_verified(ctx->repo, url, spec, env, &err) == 0 ? 0 : -EIO;
	if (rc < 0)
		cause = git_error_line(&err, "git fetch failed");
	buf_free(&err);
	free(env[0]);
	char *tip = rc == 0 ? git_rev(repo_root(ctx->repo), fetched) : NULL,
	     *was = git_rev(repo_root(ctx->repo), synced);
	char *branch = xasprintf("refs/heads/%s", a->branch);
	if (rc < 0) {
		cmd_fail(what, "%s: fetching %s from %s: %s", a->handle, a->branch, a->remote,
			 cause);
	} else if (tip && (was == NULL || strcmp(tip, was) != 0)) {
		if (update_ref(ctx, branch, tip, was) < 0)
			fprintf(stderr,
				"workrex: %s: %s moved here while its agent committed on %s; "
				"those commits are kept as %s\n",
				what, a->branch, a->remote, fetched);
		else
			update_ref(ctx, synced, tip, NULL);
	}
	free(branch);
	free(tip);
	free(was);
	free(url);
	free(spec);
	free(fetched);
	free(synced);
	free(cause);
	link_free(&l);
	return rc < 0 ? -1 : 0;
}

/* ---- the worktree there, for remove and merge (worktree.h) ---- */

struct place_arg {
	struct cmd_ctx *ctx;
	struct remote_link l;
	bool up;
};

static int place_link(struct place_arg *p, const struct agent_rec *a, char **cause)
{
	if (p->up)
		return 0;
	int rc = link_open(p->ctx, a->remote, &p->l, cause);
	p->up = rc == 0;
	return rc;
}

static int place_dirty(void *arg, const struct agent_rec *a, bool *dirty, char **cause)
{
	struct place_arg *p = arg;
	int rc = place_link(p, a, cause);
	if (rc < 0)
		return rc;
	json_object *req = json_object_new_object(), *r, *v;
	json_object_object_add(req, "op", json_object_new_string("status"));
	json_object_object_add(req, "cwd", json_object_new_string(a->path));
	if ((rc = link_call(&p->l, req, &r, cause)) < 0)
		return rc;
	*dirty = json_object_object_get_ex(r, "dirty", &v) && json_object_get_boolean(v);
	json_object_put(r);
	return 0;
}

static json_object *strings_json(const struct strlist *l)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < l->n; i++)
		json_object_array_add(a, json_object_new_string(l->v[i]));
	return a;
}

static int place_remove(void *arg, const struct agent_rec *a, bool run_hooks, char **cause)
{
	struct place_arg *p = arg;
	int rc = place_link(p, a, cause);
	if (rc < 0)
		return rc;
	json_object *req = json_object_new_object(), *r;
	json_object_object_add(req, "op", json_object_new_string("remove"));
	json_object_object_add(req, "path", json_object_new_string(p->l.host->path));
	json_object_object_add(req, "handle", json_object_new_string(a->handle));
	json_object_object_add(req, "run_hooks", json_object_new_boolean(run_hooks));
	json_object_object_add(req, "pre_remove", strings_json(&p->ctx->cfg.pre_remove));
	if ((rc = link_call(&p->l, req, &r, cause)) < 0)
		return rc;
	json_object_put(r);
	char *synced = synced_ref(a->handle),
	     *fetched = xasprintf("refs/workrex/fetch/%s", a->handle);
	const char *d1[] = {"update-ref", "-d", "--", synced, NULL};
	const char *d2[] = {"update-ref", "-d", "--", fetched, NULL};
	git_run(repo_root(p->ctx->repo), d1, NULL, NULL, true);
	git_run(repo_root(p->ctx->repo), d2, NULL, NULL, true);
	free(synced);
	free(fetched);
	return 0;
}

const struct worktree_place *cmd_remote_place(struct cmd_ctx *ctx, const struct agent_rec *a)
{
	static struct place_arg arg;
	static const struct worktree_place place = {place_dirty, place_remove, &arg};
	if (a->remote == NULL)
		return NULL;
	if (arg.up)
		link_free(&arg.l);
	memset(&arg, 0, sizeof arg);
	arg.ctx = ctx;
	return &place;
}

/* The link's master told to exit: the host is about to go from under it. */
static void link_exit(struct cmd_ctx *ctx, const struct remote_host *h)
{
	struct remote_link l;
	char *cause = NULL;
	if (link_init(&l, h, repo_root(ctx->repo), &cause) == 0) {
		struct strlist a = {0};
		link_exit_argv(&l, &a);
		char **argv = strlist_argv(&a);
		struct proc_opts o = PROC_OPTS_DEFAULT;
		o.out = o.err = PROC_NULL;
		(void)proc_run(argv, &o);
		free(argv);
		strlist_free(&a);
		link_free(&l);
	}
	free(cause);
}

static json_object *hello(struct remote_link *l, char **cause);

int cmd_remote_idle(struct cmd_ctx *ctx, const char *host)
{
	char *cause = NULL;
	const struct remote_host *h = link_host(&ctx->cfg, host, &cause);
	if (h == NULL || !provision_used(h) || h->provision[PROVISION_STOP].n == 0) {
		free(cause);
		return 0;
	}
	/* A pane closed a moment ago may still be ending there: 5 s for its keeper to go. */
	struct remote_link l;
	int running = -1;
	if (link_open(ctx, host, &l, &cause) == 0) {
		for (int i = 0; i < 50 && running != 0; i++) {
			json_object *r = hello(&l, &cause), *ks;
			running = r && json_object_object_get_ex(r, "keepers", &ks)
					  ? (int)json_object_array_length(ks)
					  : -1;
			json_object_put(r);
			if (running < 0)
				break;
			if (running)
				usleep(100 * 1000);
		}
		link_free(&l);
	}
	int rc = 0;
	if (running == 0) {
		link_exit(ctx, h);
		rc = provision_stop(h, repo_root(ctx->repo), &cause);
		if (rc > 0)
			printf("remote %s: no agent of this project runs there now; stopped (the "
			       "next open starts it)\n",
			       host);
	}
	if (rc < 0 || running < 0)
		fprintf(stderr, "workrex: remote %s: not stopped: %s\n", host,
			cause ? cause : "it did not say what runs there");
	free(cause);
	return rc;
}

void cmd_remote_gone(struct cmd_ctx *ctx, const char *host)
{
	char *cause = NULL;
	const struct remote_host *h = link_host(&ctx->cfg, host, &cause);
	struct agent_rec *as = NULL;
	size_t n = 0;
	if (h == NULL || !provision_used(h) || agent_list(ctx->repo, &as, &n, &cause) < 0) {
		free(cause);
		return;
	}
	bool others = false;
	for (size_t i = 0; i < n; i++) {
		others |= as[i].remote && !strcmp(as[i].remote, host);
		agent_rec_free(&as[i]);
	}
	free(as);
	if (others)
		return;
	/* Its last agent went: the master first (the host goes from under it), then the host. */
	link_exit(ctx, h);
	if (provision_down(h, repo_root(ctx->repo), &cause) < 0) {
		cmd_fail("remove",
			 "%s; it stays recorded: the next remove of an agent there, or "
			 "provision.destroy by hand, ends it",
			 cause);
		free(cause);
	} else {
		printf("remote %s: its last agent went; destroyed\n", host);
	}
}

/* ---- add --remote ---- */

/* Push the agent's branch (tip) there, and its base for the agent to compare with. */
static int push(struct cmd_ctx *ctx, struct remote_link *l, const char *branch, const char *tip,
		const char *base, char **cause)
{
	char *url = link_git_url(l), *spec = xasprintf("%s:refs/heads/%s", tip, branch);
	char *bspec = base && repo_branch_exists(ctx->repo, base)
			      ? xasprintf("+refs/heads/%s:refs/remotes/workrex/%s", base, base)
			      : NULL;
	const char *argv[] = {"push", "--quiet", "--no-verify", "--", url, spec, bspec, NULL};
	int rc = git_link(ctx, l, argv, cause, "git push failed");
	if (rc < 0) {
		char *why = *cause;
		*cause = xasprintf("pushing %s to %s: %s%s", branch, l->host->name, why,
				   strstr(why, "rejected") ? " (the clone there has that branch "
							     "already, with other commits)"
							   : "");
		free(why);
	}
	free(url);
	free(spec);
	free(bspec);
	return rc;
}

static json_object *call(struct remote_link *l, const char *op, json_object *req, char **cause)
{
	json_object *r = NULL;
	json_object_object_add(req, "op", json_object_new_string(op));
	return link_call(l, req, &r, cause) == 0 ? r : NULL;
}

/* Why add --remote cannot make this agent on host: 1 (said), else 0. */
static int remote_add_refused(struct cmd_ctx *ctx, const struct add_opts *o, const char *host,
			      const char *handle, bool new_only)
{
	char *cause = NULL;
	struct agent_rec old;
	const struct remote_host *rh = link_host(&ctx->cfg, host, &cause);
	int rc = 0;
	if (rh == NULL)
		rc = cmd_fail("add", "%s", cause);
	else if (!repo_branch_name_valid(o->branch))
		rc = cmd_fail("add", "'%s' is not a valid branch name", o->branch);
	else if (handle == NULL || !handle_valid(handle))
		rc = cmd_fail("add", "'%s' cannot be a worktree name (--name)", o->branch);
	else if (agent_find(ctx->repo, handle, ctx->cwd, &old, &cause) == 0 ||
		 agent_find(ctx->repo, o->branch, ctx->cwd, &old, &cause) == 0) {
		rc = cmd_fail("add", "an agent named '%s' exists already (%s%s%s)", old.handle,
			      old.remote ? old.remote : "", old.remote ? ":" : "", old.path);
		agent_rec_free(&old);
	} else if (new_only && repo_branch_exists(ctx->repo, o->branch)) {
		rc = cmd_fail("add", "'%s' exists; an agent may only spawn on a new branch",
			      o->branch);
	} else if ((o->sandbox == 1 || (o->sandbox == -1 && ctx->cfg.sandbox.enabled)) &&
		   strcmp(ctx->cfg.sandbox.backend, "container") != 0) {
		rc = cmd_fail("add",
			      "a sandbox on a server is a container there (podman or docker); "
			      "sandbox.backend is %s: add --no-sandbox, or set it to container",
			      ctx->cfg.sandbox.backend);
	}
	free(cause);
	return rc;
}

/*
 * There: the clone made if it is not there yet, the branch's commits
 * pushed (from tip), the worktree added. The server's reply, or NULL
 * with *cause.
 */
static json_object *remote_make(struct cmd_ctx *ctx, struct remote_link *l,
				const struct add_opts *o, const char *handle, const char *base,
				const char *tip, char **cause)
{
	json_object *req = json_object_new_object();
	json_object_object_add(req, "path", json_object_new_string(l->host->path));
	json_object *r = call(l, "prepare", req, cause);
	json_object_put(r);
	if (*cause == NULL)
		push(ctx, l, o->branch, tip, base, cause);
	if (*cause)
		return NULL;
	req = json_object_new_object();
	json_object_object_add(req, "path", json_object_new_string(l->host->path));
	json_object_object_add(req, "branch", json_object_new_string(o->branch));
	json_object_object_add(req, "handle", json_object_new_string(handle));
	if (base)
		json_object_object_add(req, "base", json_object_new_string(base));
	if (o->prompt)
		json_object_object_add(req, "prompt", json_object_new_string(o->prompt));
	if (o->agent)
		json_object_object_add(req, "agent", json_object_new_string(o->agent));
	json_object_object_add(req, "post_create", strings_json(&ctx->cfg.post_create));
	return call(l, "add", req, cause);
}

/* Recorded here: its branch (as pushed, when it was new), the path there, the host. */
static void remote_record(struct cmd_ctx *ctx, const struct add_opts *o, const char *host,
			  const char *handle, const char *base, const char *tip, bool exists,
			  json_object *r, struct agent_rec *a)
{
	if (!exists) {
		const char *argv[] = {"branch", "--", o->branch, tip, NULL};
		git_run(repo_root(ctx->repo), argv, NULL, NULL, true);
	}
	char *synced = synced_ref(handle);
	update_ref(ctx, synced, tip, NULL);
	free(synced);
	json_object *v = NULL;
	json_object_object_get_ex(r, "worktree", &v);
	a->handle = xstrdup(handle);
	a->branch = xstrdup(o->branch);
	a->path = xstrdup(json_object_get_string(v));
	a->agent = o->agent ? xstrdup(o->agent) : NULL;
	a->base = base ? xstrdup(base) : NULL;
	a->created = (long)time(NULL);
	a->sandbox = o->sandbox; /* sandboxed there, or not, as here */
	a->remote = xstrdup(host);
	/*
	 * Its ports (config ports), held here as a local agent's are, by a
	 * directory here kept as long as its record (its worktree is there).
	 */
	char *owner =
		ctx->cfg.ports > 0 ? private_agent_dir(repo_root(ctx->repo), handle, true) : NULL;
	int ports[PORTS_MAX], n = (int)WRX_MIN(ctx->cfg.ports, PORTS_MAX);
	if (owner && ports_take(owner, n, ports) == 0)
		a->ports = ports_join(ports, n);
	else if (ctx->cfg.ports > 0)
		fprintf(stderr, "workrex: add: %s: no %d free ports in %d-%d; it has none\n",
			handle, n, PORTS_FIRST, PORTS_LAST);
	free(owner);
	agent_record_remote(ctx->repo, a);
}

/* A running dashboard opens its panes (its keepers there); else the next one lists it. */
static int remote_announce(struct cmd_ctx *ctx, const struct agent_rec *a, const struct add_opts *o,
			   bool background)
{
	json_object *req = cmd_agent_request("open", a);
	json_object_object_add(req, "prompt", json_object_new_boolean(o->prompt != NULL));
	json_object_object_add(req, "focus", json_object_new_boolean(!background));
	int drc = cmd_dashboard(ctx, "add", req, NULL);
	json_object_put(req);
	printf("created %s (%s) on %s at %s%s\n", a->handle, a->branch, a->remote, a->path,
	       drc == -ENOENT ? "; no dashboard runs, the next one lists it" : "");
	return drc < 0 && drc != -ENOENT ? 1 : 0;
}

int cmd_remote_add(struct cmd_ctx *ctx, const struct add_opts *o, const char *host, bool background,
		   bool new_only)
{
	char *handle = o->handle ? xstrdup(o->handle) : handle_from_branch(o->branch);
	int rc = remote_add_refused(ctx, o, host, handle, new_only);
	struct remote_link l;
	char *cause = NULL;
	if (rc == 0) {
		printf("connecting to %s\n", host);
		fflush(stdout);
	}
	if (rc == 0 && link_open(ctx, host, &l, &cause) < 0) {
		rc = cmd_fail("add", "%s", cause);
		free(cause);
	}
	if (rc) {
		free(handle);
		return rc;
	}
	/* The branch's commits: its own if it exists here, else the base's. */
	char *base = o->base ? xstrdup(o->base)
			     : repo_branch_at(ctx->repo, o->cwd ? o->cwd : repo_root(ctx->repo));
	if (base == NULL)
		base = repo_head_branch(ctx->repo);
	bool exists = repo_branch_exists(ctx->repo, o->branch);
	char *tip = git_rev(repo_root(ctx->repo), exists ? o->branch : base ? base : "HEAD");
	json_object *r = NULL, *v;
	struct agent_rec a = {0};
	if (tip == NULL)
		cause = xasprintf("no commit '%s' to start from", exists ? o->branch : base);
	else
		r = remote_make(ctx, &l, o, handle, base, tip, &cause);
	if (cause) {
		rc = cmd_fail("add", "%s", cause);
	} else {
		remote_record(ctx, o, host, handle, base, tip, exists, r, &a);
		if (json_object_object_get_ex(r, "failed", &v))
			rc = cmd_fail("add",
				      "%s: %s (the worktree %s was created there; `workrex rm %s` "
				      "removes it)",
				      host, json_object_get_string(v), a.path, a.handle);
		else
			rc = remote_announce(ctx, &a, o, background);
	}
	free(cause);
	json_object_put(r);
	agent_rec_free(&a);
	free(tip);
	free(base);
	free(handle);
	link_free(&l);
	return rc;
}

/* ---- sandbox doctor ---- */

int cmd_remote_doctor(struct cmd_ctx *ctx)
{
	int problems = 0;
	for (size_t i = 0; i < ctx->cfg.nhosts; i++) {
		const struct remote_host *h = &ctx->cfg.hosts[i];
		struct remote_link l;
		char *cause = NULL;
		json_object *r = NULL, *v;
		if (link_open(ctx, h->name, &l, &cause) < 0) {
			printf("FAIL  remote %s: %s\n", h->name, cause);
			problems++;
			free(cause);
			continue;
		}
		printf("ok    remote %s: ssh %s, one master connection (%s)\n", h->name, l.dest,
		       l.ctl);
		if ((r = hello(&l, &cause)) == NULL) {
			printf("FAIL  remote %s: %s\n", h->name, cause);
			problems++;
		} else {
			bool git = json_object_object_get_ex(r, "git", &v) &&
				   json_object_get_boolean(v);
			bool clone = json_object_object_get_ex(r, "clone", &v) &&
				     json_object_get_boolean(v);
			size_t nk = json_object_object_get_ex(r, "keepers", &v)
					    ? json_object_array_length(v)
					    : 0;
			printf("ok    remote %s: this workrex runs there (build %s)\n", h->name,
			       l.build);
			printf("%s  remote %s: git %s\n", git ? "ok  " : "FAIL", h->name,
			       git ? "there" : "is not installed there");
			printf("ok    remote %s: %s %s; %zu pane%s of this project run there\n",
			       h->name, clone ? "the clone is at" : "no clone yet at", h->path, nk,
			       nk == 1 ? "" : "s");
			problems += !git;
		}
		json_object_put(r);
		free(cause);
		link_free(&l);
	}
	return problems ? 1 : 0;
}

/* ---- attach, watch, shutdown: the keepers there ---- */

char *cmd_remote_pane(struct cmd_ctx *ctx, const struct agent_rec *a, char **cause)
{
	struct remote_link l;
	if (link_open(ctx, a->remote, &l, cause) < 0)
		return NULL;
	json_object *h = hello(&l, cause), *ks = NULL;
	const char *there = NULL;
	int pane = 0;
	if (h && json_object_object_get_ex(h, "keepers", &ks))
		for (size_t i = 0; i < json_object_array_length(ks); i++) {
			json_object *k = json_object_array_get_idx(ks, i);
			const char *handle = json_str(k, "handle");
			int id = json_int(k, "pane", 0);
			/* Its first pane: the lowest id. */
			if (handle && !strcmp(handle, a->handle) && json_str(k, "socket") &&
			    id > 0 && (pane == 0 || id < pane)) {
				pane = id;
				there = json_str(k, "socket");
			}
		}
	char *here = h && there ? link_keeper_path(&l, pane) : NULL;
	if (h && there == NULL)
		*cause = xasprintf("no pane of '%s' runs on %s (workrex open %s starts it)",
				   a->handle, a->remote, a->handle);
	if (here && link_forward(&l, false, here, there, cause) < 0) {
		free(here);
		here = NULL;
	}
	json_object_put(h);
	link_free(&l);
	return here;
}

/* The hosts of ctx's agents on servers, each once. */
static void agent_hosts(struct cmd_ctx *ctx, struct strlist *out)
{
	struct agent_rec *as = NULL;
	size_t n = 0;
	char *cause = NULL;
	if (agent_list(ctx->repo, &as, &n, &cause) < 0)
		free(cause);
	for (size_t i = 0; i < n; i++) {
		bool seen = as[i].remote == NULL;
		for (size_t k = 0; k < out->n && !seen; k++)
			seen = !strcmp(out->v[k], as[i].remote);
		if (!seen)
			strlist_add(out, as[i].remote);
		agent_rec_free(&as[i]);
	}
	free(as);
}

int cmd_remote_keepers(struct cmd_ctx *ctx, json_object *out)
{
	struct strlist hosts = {0};
	agent_hosts(ctx, &hosts);
	int n = 0;
	for (size_t i = 0; i < hosts.n; i++) {
		struct remote_link l;
		char *cause = NULL;
		bool open = link_open(ctx, hosts.v[i], &l, &cause) == 0;
		json_object *h = open ? hello(&l, &cause) : NULL, *ks,
			    *panes = json_object_new_array();
		if (h && json_object_object_get_ex(h, "keepers", &ks))
			for (size_t k = 0; k < json_object_array_length(ks); k++) {
				int pane = json_int(json_object_array_get_idx(ks, k), "pane", 0);
				if (pane > 0)
					json_object_array_add(panes, json_object_new_int(pane));
			}
		if (h == NULL)
			fprintf(stderr, "workrex: %s\n", cause);
		if (open)
			link_free(&l);
		n += (int)json_object_array_length(panes);
		json_object_object_add(out, hosts.v[i], panes);
		json_object_put(h);
		free(cause);
	}
	strlist_free(&hosts);
	return n;
}

int cmd_remote_end(struct cmd_ctx *ctx, json_object *which)
{
	int ended = 0;
	json_object_object_foreach(which, host, panes)
	{
		struct remote_link l;
		char *cause = NULL;
		if (json_object_array_length(panes) == 0)
			continue;
		if (link_open(ctx, host, &l, &cause) == 0) {
			json_object *req = json_object_new_object();
			json_object_object_add(req, "path", json_object_new_string(l.host->path));
			json_object_object_add(req, "panes", json_object_get(panes));
			json_object *r = call(&l, "kill", req, &cause);
			ended += json_int(r, "ended", 0);
			json_object_put(r);
			link_free(&l);
		}
		if (cause)
			fprintf(stderr, "workrex: %s\n", cause);
		free(cause);
	}
	return ended;
}

/* ---- the dashboard's children ---- */

/* The outcome for the dashboard: one JSON line, last. */
static int answer(json_object *r)
{
	printf("%s\n", json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
	json_object_put(r);
	return 0;
}

static int child_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int child_fail(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	printf("workrex: %s\n", msg);
	free(msg);
	return status;
}

/* The link's children (the dashboard's, never a user's): their words, as a row's. */
static const struct cmd link_child = {
	"__remote",
	NULL,
	"__remote-up|__remote-start|__remote-paste HOST [--rpc SOCK] [--kill PANE]...",
	"a server's link, for the dashboard",
	NULL,
	NULL,
	CMD_OPTS({"rpc", 0, OPT_VALUE}, {"kill", 0, OPT_VALUE}),
	1,
	1,
};

/* HOST [--rpc SOCK] [--kill PANE]...: parsed into the link (up) and the rest. */
static int child_link(struct cmd_ctx *ctx, int argc, char **argv, struct remote_link *l,
		      const char **rpc, json_object *kill)
{
	const struct strlist *k = NULL;
	if (cmd_args_begin(ctx, &link_child, argc, argv) != 0 ||
	    (rpc == NULL && cmd_given(ctx, "rpc")) || (kill == NULL && cmd_given(ctx, "kill")))
		return child_fail(2, "usage: workrex %s HOST [--rpc SOCK] [--kill PANE]...",
				  argv[0]);
	if (rpc)
		*rpc = cmd_value(ctx, "rpc");
	k = cmd_values(ctx, "kill");
	for (size_t i = 0; kill && i < k->n; i++)
		json_object_array_add(kill, json_object_new_int(atoi(k->v[i])));
	if (cmd_open_repo(ctx, argv[0]) != 0)
		return 1;
	char *cause = NULL;
	if (link_open(ctx, cmd_arg(ctx, 0), l, &cause) < 0) {
		int rc = child_fail(UNREACHABLE, "%s", cause);
		free(cause);
		return rc;
	}
	return 0;
}

/*
 * The ports of this project's agents on the host (config ports), each
 * forwarded from here to the same port there, for their dev servers.
 * One that cannot be (something here holds it) is said; the rest go on.
 */
static void forward_ports(struct cmd_ctx *ctx, const struct remote_link *l)
{
	struct agent_rec *as = NULL;
	size_t n = 0;
	char *cause = NULL;
	if (agent_list(ctx->repo, &as, &n, &cause) < 0) {
		free(cause);
		return;
	}
	int *ports = xcalloc(n * PORTS_MAX + 1, sizeof *ports);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (as[i].remote && strcmp(as[i].remote, l->host->name) == 0)
			k += ports_split(as[i].ports, ports + k, PORTS_MAX);
	if (link_forward_ports(l, ports, k, &cause) < 0)
		fprintf(stderr, "workrex: %s\n", cause);
	free(cause);
	free(ports);
	for (size_t i = 0; i < n; i++)
		agent_rec_free(&as[i]);
	free(as);
}

/* A sandboxed agent's RPC directory there: the bridge forwarded into it (its container mounts it). */
static int forward_box(struct remote_link *l, const char *sock, const char *dir, char **cause)
{
	char *there = xasprintf("%s/rpc.sock", dir);
	int rc = link_forward(l, true, sock, there, cause);
	free(there);
	return rc;
}

/*
 * The link's RPC bridge there, forwarded to sock here (hello says where
 * there is), and into each sandboxed agent's directory there.
 */
static int forward_rpc(struct remote_link *l, const char *sock, json_object *hello, char **cause)
{
	json_object *v, *ks;
	if (sock == NULL || !json_object_object_get_ex(hello, "rpc_socket", &v))
		return 0;
	int rc = link_forward(l, true, sock, json_object_get_string(v), cause);
	size_t n = json_object_object_get_ex(hello, "keepers", &ks) && ks
			   ? json_object_array_length(ks)
			   : 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const char *dir = json_str(json_object_array_get_idx(ks, i), "rpc_dir");
		if (dir)
			rc = forward_box(l, sock, dir, cause);
	}
	return rc;
}

static json_object *hello(struct remote_link *l, char **cause)
{
	json_object *req = json_object_new_object();
	json_object_object_add(req, "path", json_object_new_string(l->host->path));
	json_object_object_add(req, "id", json_object_new_string(l->id));
	return call(l, "hello", req, cause);
}

int cmd_remote_idle_child(int argc, char **argv)
{
	struct cmd_ctx ctx = {.cwd = getcwd(NULL, 0)};
	int rc = 2;
	if (argc != 2 || ctx.cwd == NULL)
		fprintf(stderr, "usage: workrex __remote-idle HOST\n");
	else if ((rc = cmd_open_repo(&ctx, argv[0])) == 0) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "stopped",
				       json_object_new_boolean(cmd_remote_idle(&ctx, argv[1]) > 0));
		rc = answer(r);
	}
	cmd_ctx_free(&ctx);
	return rc;
}

int cmd_remote_up(int argc, char **argv)
{
	struct cmd_ctx ctx = {.cwd = getcwd(NULL, 0)};
	struct remote_link l;
	const char *rpc = NULL;
	json_object *kill = json_object_new_array();
	int rc = ctx.cwd ? child_link(&ctx, argc, argv, &l, &rpc, kill) : 1;
	if (rc) {
		json_object_put(kill);
		cmd_ctx_free(&ctx);
		return rc;
	}
	char *cause = NULL;
	json_object *h = NULL, *ks, *out = json_object_new_array();
	if (json_object_array_length(kill)) {
		json_object *req = json_object_new_object(), *r;
		json_object_object_add(req, "path", json_object_new_string(l.host->path));
		json_object_object_add(req, "panes", json_object_get(kill));
		r = call(&l, "kill", req, &cause);
		json_object_put(r);
		free(cause);
		cause = NULL;
	}
	if ((h = hello(&l, &cause)) == NULL || forward_rpc(&l, rpc, h, &cause) < 0) {
		rc = child_fail(UNREACHABLE, "%s", cause);
		goto out;
	}
	json_object_object_get_ex(h, "keepers", &ks);
	size_t nk = ks ? json_object_array_length(ks) : 0, k = 0;
	const char **here = xcalloc(nk + 1, sizeof *here), **there = xcalloc(nk + 1, sizeof *there);
	json_object **which = xcalloc(nk + 1, sizeof *which);
	for (size_t i = 0; i < nk; i++) {
		json_object *e = json_object_array_get_idx(ks, i);
		int pane = json_int(e, "pane", 0);
		if (pane <= 0 || json_str(e, "socket") == NULL)
			continue;
		here[k] = link_keeper_path(&l, pane);
		there[k] = json_str(e, "socket");
		which[k++] = e;
	}
	bool *ok = xcalloc(k + 1, sizeof *ok);
	if (link_forward_all(&l, false, k, here, there, ok, &cause) < 0)
		fprintf(stderr, "workrex: %s\n", cause);
	for (size_t i = 0; i < k; i++) {
		if (ok[i]) {
			json_object_object_add(which[i], "local", json_object_new_string(here[i]));
			json_object_object_del(which[i], "socket");
			json_object_array_add(out, json_object_get(which[i]));
		}
		free((char *)here[i]);
	}
	free(ok);
	free(here);
	free(there);
	free(which);
	forward_ports(&ctx, &l);
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	json_object_object_add(r, "keepers", out);
	out = NULL;
	rc = answer(r);
out:
	json_object_put(out);
	json_object_put(h);
	json_object_put(kill);
	free(cause);
	link_free(&l);
	cmd_ctx_free(&ctx);
	return rc;
}

int cmd_remote_start(int argc, char **argv)
{
	struct cmd_ctx ctx = {.cwd = getcwd(NULL, 0)};
	struct remote_link l;
	const char *rpc = NULL;
	int rc = ctx.cwd ? child_link(&ctx, argc, argv, &l, &rpc, NULL) : 1;
	if (rc) {
		cmd_ctx_free(&ctx);
		return rc;
	}
	char *text = NULL, *cause = NULL;
	json_object *spec = NULL, *h = NULL, *r = NULL, *v;
	if (file_read("-", 4u << 20, &text, &cause) < 0 ||
	    (spec = json_tokener_parse(text)) == NULL) {
		rc = child_fail(1, "%s: no pane spec on stdin", argv[0]);
		goto out;
	}
	/* The master may be new (it dropped since): the bridge is forwarded again. */
	if (rpc && ((h = hello(&l, &cause)) == NULL || forward_rpc(&l, rpc, h, &cause) < 0)) {
		rc = child_fail(UNREACHABLE, "%s", cause);
		goto out;
	}
	json_object_object_add(spec, "path", json_object_new_string(l.host->path));
	json_object_object_add(spec, "id", json_object_new_string(l.id));
	int pane = json_object_object_get_ex(spec, "pane", &v) ? json_object_get_int(v) : 0;
	r = call(&l, "start", json_object_get(spec), &cause);
	if (r == NULL) {
		rc = child_fail(1, "%s", cause);
		goto out;
	}
	/* A sandboxed pane's container reaches the bridge in its own directory there. */
	const char *box = json_str(r, "rpc_dir");
	if (box && rpc && forward_box(&l, rpc, box, &cause) < 0) {
		rc = child_fail(UNREACHABLE, "%s", cause);
		goto out;
	}
	json_object_object_get_ex(r, "socket", &v);
	char *here = link_keeper_path(&l, pane);
	if (link_forward(&l, false, here, json_object_get_string(v), &cause) < 0) {
		free(here);
		rc = child_fail(UNREACHABLE, "%s", cause);
		goto out;
	}
	forward_ports(&ctx, &l);
	json_object *a = json_object_new_object();
	json_object_object_add(a, "ok", json_object_new_boolean(1));
	json_object_object_add(a, "local", json_object_new_string(here));
	free(here);
	rc = answer(a);
out:
	json_object_put(r);
	json_object_put(h);
	json_object_put(spec);
	free(text);
	free(cause);
	link_free(&l);
	cmd_ctx_free(&ctx);
	return rc;
}

int cmd_remote_paste(int argc, char **argv)
{
	if (argc != 3)
		return child_fail(2, "usage: workrex %s HOST HANDLE (the image on stdin)", argv[0]);
	struct cmd_ctx ctx = {.cwd = getcwd(NULL, 0)};
	struct remote_link l;
	char *data = NULL, *cause = NULL;
	size_t len = 0;
	int rc = file_read_len("-", IMAGE_MAX, &data, &len, &cause) < 0 ? child_fail(1, "%s", cause)
		 : ctx.cwd ? child_link(&ctx, 2, argv, &l, NULL, NULL)
			   : 1;
	if (rc == 0) {
		json_object *req = json_object_new_object(), *r = NULL;
		json_object_object_add(req, "op", json_object_new_string("paste"));
		json_object_object_add(req, "path", json_object_new_string(l.host->path));
		json_object_object_add(req, "handle", json_object_new_string(argv[2]));
		if (link_call_data(&l, req, data, len, &r, &cause) < 0) {
			rc = child_fail(1, "%s", cause);
		} else {
			const char *path = json_str(r, "path");
			json_object *a = json_object_new_object();
			json_object_object_add(a, "path", json_object_new_string(path ? path : ""));
			rc = answer(a);
		}
		json_object_put(r);
		link_free(&l);
	}
	free(data);
	free(cause);
	cmd_ctx_free(&ctx);
	return rc;
}

int cmd_remote_serve(void)
{
	return remote_serve();
}
