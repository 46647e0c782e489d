/*
 * actions.c - the verbs (actions.h): one table, and each verb's body.
 *
 * The table says, for each verb, what arguments it takes (checked before
 * it runs), which doors may call it, whose calls wait for the user's yes,
 * whose act on the caller's own agent only, and the rest of its policy
 * (an agent's spawns are counted; a sandbox's spawn is sandboxed). A verb's
 * body finds all of that checked: c->a is its agent, c->confirm says
 * whether to ask, and it ends with one reply (act_ok, act_fail).
 */
#include "actions.h"

#include "../rpc/proto.h"
#include "clipboard.h"
#include "deliver.h"
#include "hostexec.h"
#include "../backends/backend.h"
#include "../config/kinds.h"
#include "../git/adopted.h"
#include "../git/comments.h"
#include "../git/private.h"
#include "../net/proxy.h"
#include "../net/spec.h"
#include "../rpc/control.h"
#include "../util/log.h"
#include "../util/util.h"
#include "agentcmd.h"
#include "run.h"
#include "children.h"
#include "wrx.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An agent may spawn this many agents a minute. */
#define SPAWNS_PER_MINUTE 5
/*
 * Agents made by agents: at most FAMILY_MAX under one agent the user made
 * (its children, theirs, ...), PROJECT_SPAWNED_MAX in a project, and
 * STARTS_PER_MINUTE a minute among all agents: a chain of spawns, each
 * within its own 5 a minute, stops there.
 */
#define FAMILY_MAX 8
#define PROJECT_SPAWNED_MAX 24
#define STARTS_PER_MINUTE 12

enum arg_type { ARG_STR, ARG_BOOL, ARG_INT, ARG_STRV };

struct arg_spec {
	const char *name;
	enum arg_type type;
	bool required;
};

enum {
	VERB_AGENT = 1 << 0,   /* "handle" names an agent of this dashboard: c->a */
	VERB_LEARN = 1 << 1,   /* ...or one it learns from the arguments (c->a NULL) */
	VERB_GONE_OK = 1 << 2, /* ...and none is nothing to do: ok */
	VERB_LIMITED = 1 << 3, /* the agent door: SPAWNS_PER_MINUTE per agent */
	VERB_INHERIT = 1 << 4, /* the agent door: a sandboxed caller's verb is sandboxed */
};

struct act_call;

struct action {
	const char *name;
	const char *rpc; /* the RPC request (proto.h) that calls it, or NULL */
	const struct arg_spec *args;
	unsigned doors;   /* who may call it */
	unsigned confirm; /* whose calls wait for the user's yes */
	unsigned own;     /* whose calls act on the caller's own agent, a worktree, only */
	unsigned flags;
	void (*run)(struct act_call *c);
};

struct act_call {
	struct wrx *w;
	const struct action *act;
	json_object *args; /* owned */
	enum door door;
	int pane;           /* the agent door: the calling pane */
	bool sandboxed;     /* ...which runs in a sandbox */
	const char *remote; /* ...or on this server (remote.hosts), borrowed; NULL: here */
	bool confirm;       /* this call waits for the user's yes */
	bool said;          /* its outcome is on the status line already */
	bool overridden;    /* asked again with the flag that overrides a refusal */
	struct agent *a;
	char *handle; /* owned: a's, kept while the user thinks (a may go) */
	act_reply_fn *reply;
	const struct act_stream *stream; /* the caller takes output as it comes, or NULL */
	void *reply_arg;
	struct strlist argv;           /* a child's arguments after `workrex` */
	struct act_call *next_waiting; /* host commands waiting their agent's turn */
	char *caller;                  /* owned: the agent door's calling agent */
};

/* ---- arguments ---- */

static json_object *arg(const struct act_call *c, const char *key)
{
	json_object *v;
	return c->args && json_object_object_get_ex(c->args, key, &v) ? v : NULL;
}

static const char *str_arg(const struct act_call *c, const char *key)
{
	json_object *v = arg(c, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool bool_arg(const struct act_call *c, const char *key)
{
	json_object *v = arg(c, key);
	return v && json_object_get_boolean(v);
}

/* How the caller names the verb: an agent by its RPC request. */
static const char *verb_name(const struct act_call *c)
{
	return c->door == DOOR_AGENT && c->act->rpc ? c->act->rpc : c->act->name;
}

/* ---- the reply ---- */

static void act_end(struct act_call *c, json_object *r)
{
	if (c->reply)
		c->reply(c->w, r, c->reply_arg);
	else
		json_object_put(r);
	json_object_put(c->args);
	strlist_free(&c->argv);
	free(c->caller);
	free(c->handle);
	free(c);
}

/* Done; fields (taken, or NULL) go into the reply. */
static void act_ok(struct act_call *c, json_object *fields)
{
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	if (fields) {
		json_object_object_foreach(fields, k, v)
			json_object_object_add(r, k, json_object_get(v));
		json_object_put(fields);
	}
	json_object *m;
	if (c->door == DOOR_UI && !c->said && json_object_object_get_ex(r, "message", &m))
		wrx_message(c->w, false, "%s", json_object_get_string(m));
	act_end(c, r);
}

static void act_fail(struct act_call *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void act_fail(struct act_call *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (c->door == DOOR_UI && !c->said)
		wrx_message(c->w, true, "%s", msg);
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(0));
	json_object_object_add(r, "error", json_object_new_string(msg));
	free(msg);
	act_end(c, r);
}

const char *actions_error(json_object *reply)
{
	json_object *e;
	if (reply == NULL || !json_object_object_get_ex(reply, "error", &e))
		return NULL;
	return json_object_get_string(e);
}

/* ---- asking the user ---- */

typedef void then_fn(struct act_call *c);

struct confirm {
	struct act_call *c;
	then_fn *then;
};

static void confirmed(struct wrx *w, bool yes, void *arg)
{
	struct confirm *k = arg;
	struct act_call *c = k->c;
	then_fn *then = k->then;
	free(k);
	if (c->a && session_find_agent(w->s, c->handle) == NULL)
		c->a = NULL;
	if (c->a)
		c->a->box.merge_asked = false;
	/* Its merge, to the merge queue instead (the answer q; asked by the merge's question). */
	if (yes && w->answer && strcmp(w->answer, "q") == 0) {
		if (c->args == NULL)
			c->args = json_object_new_object();
		json_object_object_add(c->args, "queue", json_object_new_boolean(1));
	}
	if (!yes) {
		log_msg("%s: %s: the user declined", c->handle ? c->handle : "-", c->act->name);
		if (c->a && c->door == DOOR_AGENT)
			c->a->box.declined_at = now_ms(); /* not asked again for a while */
		c->said = true;                           /* a no needs no message */
		act_fail(c, "the user declined the %s", c->act->name);
		return;
	}
	then(c);
}

/* Run then(c) once the user says yes. */
static void ask_then(struct act_call *c, const char *question, then_fn *then)
{
	struct wrx *w = c->w;
	if (w->hooks->ask == NULL) {
		act_fail(c, "%s: nobody here to confirm it", c->act->name);
		return;
	}
	struct confirm *k = xcalloc(1, sizeof *k);
	k->c = c;
	k->then = then;
	if (w->hooks->ask(w->ui, question, c->door == DOOR_AGENT ? c->handle : NULL, confirmed, k) <
	    0) {
		free(k);
		if (c->a)
			c->a->box.merge_asked = false;
		act_fail(c, c->door == DOOR_AGENT
				    ? "too many questions wait for the user; ask again later"
				    : "the user is answering another question; ask again later");
	}
}

/* ...when the table says this call must ask. */
static void confirm_then(struct act_call *c, const char *question, then_fn *then)
{
	if (c->confirm)
		ask_then(c, question, then);
	else
		then(c);
}

/* An agent whose request the user declined is not asked again for this long. */
#define DECLINED_QUIET_MS 60000

/* ---- `workrex <verb>` as a child ---- */

static void child_progress(void *arg, const char *line, size_t len)
{
	struct act_call *c = arg;
	if (c->door == DOOR_UI)
		wrx_message(c->w, false, "%s: %.*s", c->act->name, (int)WRX_MIN(len, 200), line);
}

static void run_child(struct act_call *c);

/*
 * Refusals a flag overrides, for verbs asked from the dashboard's keys:
 * the key asks again with the flag, so it can do what the command line
 * does (merge --ignore-uncommitted, remove -f) once the user has read why.
 */
static const struct {
	const char *verb;
	const char *says; /* the refusal names the flag so */
	const char *flag;
	const char *question;
} overrides[] = {
	{"merge", "--ignore-uncommitted", "--ignore-uncommitted",
	 "merge its commits anyway, leaving the uncommitted changes in its worktree? (y/n)"},
	{"compare-merge", "--ignore-uncommitted", "--ignore-uncommitted",
	 "merge its commits anyway, leaving the uncommitted changes in its worktree? (y/n)"},
	{"remove", "--force", "--force",
	 "remove it anyway, losing what is not committed or merged? (y/n)"},
};

static bool offer_override(struct act_call *c, const char *last)
{
	if (c->door != DOOR_UI || c->overridden || c->w->hooks->ask == NULL)
		return false;
	for (size_t i = 0; i < WRX_ARRAY_LEN(overrides); i++) {
		if (strcmp(c->act->name, overrides[i].verb) != 0 ||
		    !strstr(last, overrides[i].says))
			continue;
		/* The same child again, the flag before its "--" (or last, with none). */
		struct strlist again = {0};
		bool put = false;
		for (size_t k = 0; k < c->argv.n; k++) {
			if (strcmp(c->argv.v[k], "--") == 0 && !put) {
				strlist_add(&again, overrides[i].flag);
				put = true;
			}
			strlist_add(&again, c->argv.v[k]);
		}
		if (!put)
			strlist_add(&again, overrides[i].flag);
		strlist_free(&c->argv);
		c->argv = again;
		c->overridden = true;
		char *q = xasprintf("%s - %s", last, overrides[i].question);
		ask_then(c, q, run_child);
		free(q);
		return true;
	}
	return false;
}

static void child_done(void *arg, int status, const char *output, const char *last)
{
	struct act_call *c = arg;
	struct wrx *w = c->w;
	(void)output;
	last = wrx_outcome(last);
	if (status != 0 && !w->quitting && offer_override(c, last))
		return;
	if (*last)
		wrx_message(w, status != 0, "%s", last);
	else if (c->door == DOOR_UI)
		status == 0 ? wrx_message(w, false, "%s: done", c->act->name)
			    : wrx_message(w, true, "failed");
	c->said = true;
	if (status == 0) {
		json_object *f = NULL;
		if (*last) {
			f = json_object_new_object();
			json_object_object_add(f, "message", json_object_new_string(last));
		}
		act_ok(c, f);
	} else {
		act_fail(c, "%s", *last ? last : "failed");
	}
	if (w->hooks->trust && !w->quitting)
		w->hooks->trust(w->ui); /* a merge may have brought a new project config */
}

/* Run `workrex` with c->argv; its outcome is the reply, its last line the message. */
static void run_child(struct act_call *c)
{
	struct wrx *w = c->w;
	char **words = strlist_argv(&c->argv), **argv = child_argv(w, "verb", words);
	free(words);
	struct run_opts o = {.argv = argv,
			     .cwd = w->root,
			     .done = child_done,
			     .progress = child_progress,
			     .arg = c};
	int rc = run_start(w->loop, &o);
	child_argv_free(argv);
	if (rc < 0)
		act_fail(c, "cannot run workrex %s: %s", c->act->name, uv_strerror(rc));
}

/* ---- the verbs ---- */

static void do_ok(struct act_call *c)
{
	act_ok(c, NULL);
}

/* ---- image paste (clipboard.h) ---- */

struct image_paste {
	struct act_call *c;
	int pane; /* by id: it may close while the clipboard is read */
	bool empty;
};

static void image_pasted(struct wrx *w, const char *path, const char *why, void *arg)
{
	struct image_paste *ip = arg;
	struct act_call *c = ip->c;
	struct wpane *wp = session_find_pane(w->s, ip->pane);
	if (wp && path) {
		pane_paste(wp->term, path, strlen(path));
		json_object *f = json_object_new_object();
		json_object_object_add(f, "message",
				       json_object_new_string(strrchr(path, '/') + 1));
		json_object_object_add(f, "path", json_object_new_string(path));
		act_ok(c, f);
	} else if (ip->empty) {
		/* The terminal's empty paste and no image: the program gets the paste as it was. */
		if (wp)
			pane_paste(wp->term, "", 0);
		act_ok(c, NULL);
	} else {
		act_fail(c, "paste-image: %s", wp ? why : "the pane closed");
	}
	free(ip);
}

/*
 * The focused pane (the keys, the terminal's empty paste) or the agent's
 * first (the CLI) gets the clipboard's image as a path.
 */
static void do_paste_image(struct act_call *c)
{
	const char *handle = str_arg(c, "handle");
	struct agent *a = handle ? session_find_agent(c->w->s, handle) : NULL;
	struct wpane *wp =
		handle ? (a ? session_agent_pane(c->w->s, a) : NULL) : session_focus(c->w->s);
	if (wp == NULL) {
		act_fail(c, "paste-image: %s",
			 handle ? "no such agent, or it has no open pane"
				: "no pane to paste into");
		return;
	}
	struct image_paste *ip = xcalloc(1, sizeof *ip);
	ip->c = c;
	ip->pane = wp->id;
	ip->empty = bool_arg(c, "empty");
	clipboard_stage(c->w, wp->agent, image_pasted, ip);
}

/*
 * A sandbox's own image paste (its xclip and wl-paste shims): the host's
 * clipboard, staged under its worktree as for paste-image. Only just after
 * the user pressed a key in the calling pane, so that an agent cannot read
 * the clipboard whenever it likes.
 */
#define CLIPBOARD_KEY_MS 5000

static void clipboard_given(struct wrx *w, const char *path, const char *why, void *arg)
{
	struct act_call *c = arg;
	(void)w;
	if (path == NULL) {
		act_fail(c, "%s", why);
		return;
	}
	/* Its type (the file's extension, from its bytes), for the shims' list of targets. */
	const char *dot = strrchr(path, '.');
	const char *kind = dot ? dot + 1 : "png";
	json_object *f = json_object_new_object();
	json_object_object_add(f, "path", json_object_new_string(path));
	char *mime = xasprintf("image/%s", kind);
	json_object_object_add(f, "mime", json_object_new_string(mime));
	free(mime);
	const char *want = str_arg(c, "mime");
	if (want && *want && strncmp(want, "image/", 6) == 0 && strcmp(want + 6, kind) != 0) {
		json_object_put(f);
		act_fail(c, "the clipboard holds image/%s, not %s", kind, want);
		return;
	}
	act_ok(c, f);
}

static void do_clipboard_read(struct act_call *c)
{
	struct wpane *wp = session_find_pane(c->w->s, c->pane);
	if (c->remote) {
		act_fail(c,
			 "clipboard-read is for sandboxes; paste into an agent on %s with the "
			 "dashboard's paste-image",
			 c->remote);
		return;
	}
	if (wp == NULL || wp->last_key == 0 || now_ms() - wp->last_key > CLIPBOARD_KEY_MS) {
		act_fail(c, "the clipboard is read only right after a key is pressed in this pane");
		return;
	}
	clipboard_stage(c->w, c->a, clipboard_given, c);
}

/* ---- host commands (hostexec.h) ---- */

/* The host command's end: its status, the last thing its caller gets. */
static void exec_exit(struct act_call *c, int code)
{
	json_object *f = json_object_new_object();
	json_object_object_add(f, "exit", json_object_new_int(code));
	act_ok(c, f);
}

/* Not run: why, on its stderr, and the status that says which way. */
static void exec_refuse(struct act_call *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void exec_refuse(struct act_call *c, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	log_msg("host-exec for %s: %s", c->a ? c->a->handle : "?", msg);
	char *line = xasprintf("workrex: host-exec: %s\n", msg);
	if (c->stream)
		c->stream->output(c->reply_arg, 2, line, strlen(line));
	free(line);
	free(msg);
	exec_exit(c, code);
}

static void exec_output(void *arg, int stream, const char *p, size_t n)
{
	struct act_call *c = arg;
	if (c->stream)
		c->stream->output(c->reply_arg, stream, p, n);
}

static long exec_backlog(void *arg)
{
	struct act_call *c = arg;
	return c->stream && c->stream->backlog ? c->stream->backlog(c->reply_arg) : 0;
}

/* A host command under way: its call and the proxy made for it. */
struct hx_run {
	struct act_call *c;
	struct proxy *proxy; /* NULL: no network */
	char *token;
	struct strlist cgroups; /* its own, removed after */
};

static void hx_next(struct wrx *w, const char *handle);

static void exec_done(void *arg, int code)
{
	struct hx_run *r = arg;
	struct wrx *w = r->c->w;
	char *handle = xstrdup(r->c->handle);
	if (r->proxy)
		proxy_close(r->proxy);
	free(r->token);
	hostexec_cgroups_remove(&r->cgroups);
	struct agent *a = session_find_agent(w->s, handle);
	if (a)
		a->box.host_busy = false;
	exec_exit(r->c, code);
	free(r);
	hx_next(w, handle);
	free(handle);
}

static void hx_output(void *arg, int stream, const char *p, size_t n)
{
	exec_output(((struct hx_run *)arg)->c, stream, p, n);
}

static long hx_backlog(void *arg)
{
	return exec_backlog(((struct hx_run *)arg)->c);
}

static void hx_egress(void *arg, const struct proxy_event *ev)
{
	struct act_call *c = arg;
	struct agent *a = session_find_agent(c->w->s, c->handle);
	json_object *o = proxy_event_json(ev);
	if (a)
		wrx_egress(c->w, a, o);
	json_object_put(o);
}

/*
 * The command's own proxy, on a socket only the host reaches (bound into
 * its box): under policy deny the agent's allowed_domains, under allow every
 * public name; never loopback or a private address either way.
 */
static struct proxy *hx_proxy(struct hx_run *r, char **sock)
{
	struct wrx *w = r->c->w;
	char *cause = NULL;
	char *dir = control_dir(&cause);
	if (dir == NULL) {
		log_msg("host-exec: no proxy: %s", cause);
		free(cause);
		return NULL;
	}
	*sock = xasprintf("%s/hx-%s.sock", dir, r->c->handle);
	free(dir);
	r->token = xcalloc(1, RPC_TOKEN_LEN + 1);
	if (rpc_token_new(r->token) < 0) {
		log_msg("host-exec: no proxy: no token");
		return NULL;
	}
	static struct net_policy every = {.any_public = true};
	bool deny = strcmp(w->cfg.sandbox.network.policy, "deny") == 0;
	struct proxy_opts o = {.token = r->token,
			       .policy = deny ? &w->cfg.sandbox.network.allowed : &every,
			       .max_connections = (int)w->cfg.sandbox.network.max_connections,
			       .event = hx_egress,
			       .arg = r->c};
	struct proxy *p = proxy_new(w->loop, &o);
	if (proxy_listen(p, *sock, &cause) < 0) {
		log_msg("host-exec: no proxy: %s", cause);
		free(cause);
		proxy_close(p);
		return NULL;
	}
	return p;
}

static void hx_start(struct act_call *c, char *prog)
{
	struct wrx *w = c->w;
	const struct config *cfg = &w->cfg;
	struct hx_run *r = xcalloc(1, sizeof *r);
	r->c = c;
	json_object *args = arg(c, "args");
	size_t n = args ? json_object_array_length(args) : 0;
	char **argv = xcalloc(n + 1, sizeof *argv);
	for (size_t i = 0; i < n; i++)
		argv[i] = (char *)json_object_get_string(json_object_array_get_idx(args, i));
	bool bwrap = path_has("bwrap");
	struct backend_git git = {0};
	bool have_git = w->gitdir && backend_git_ready(w->root, c->a->handle, &git) == 0;
	char *priv = private_agent_dir(w->root, c->a->handle, true);
	char *layers = priv ? xasprintf("%s/host-caches", priv) : NULL;
	char *sock = NULL;
	if (bwrap) {
		r->proxy = hx_proxy(r, &sock);
		hostexec_cgroups(c->a->handle, cfg->sandbox.host_command_processes,
				 hostexec_size(cfg->sandbox.host_command_memory), &r->cgroups);
	}
	struct hostexec_spec spec = {
		.prog = prog,
		.args = argv,
		.worktree = c->a->path,
		.home = getenv("HOME"),
		.project_root = have_git ? w->root : NULL,
		.git_dir = have_git ? w->gitdir : NULL,
		.snapshot = have_git ? git.snapshot : NULL,
		.private_gitdir = have_git ? git.priv.gitdir : NULL,
		.private_gitfile = have_git ? git.priv.gitfile : NULL,
		.excluded = &cfg->sandbox.container.excluded_files,
		.paths = &cfg->sandbox.host_command_paths,
		.layers = layers,
		.guest = w->guest_bin,
		.proxy = r->proxy ? sock : NULL,
		.uid = (unsigned)getuid(),
		.gid = (unsigned)getgid(),
		.procs = cfg->sandbox.host_command_processes,
		.memory = hostexec_size(cfg->sandbox.host_command_memory),
		.cgroups = &r->cgroups,
		.unsandboxed = !bwrap,
	};
	struct strlist run = {0}, env = {0};
	hostexec_argv(&spec, &run);
	hostexec_env(r->proxy ? r->token : NULL, &env);
	free(argv);
	free(layers);
	free(priv);
	free(sock);
	backend_git_free(&git);
	char **rv = strlist_argv(&run), **ev = strlist_argv(&env);
	struct run_stream rs = {
		.argv = rv,
		.env = ev,
		.cwd = c->a->path,
		.timeout_ms = (int)WRX_MIN(cfg->sandbox.host_command_seconds * 1000, INT32_MAX),
		.output = hx_output,
		.backlog = hx_backlog,
		.exit = exec_done,
		.arg = r};
	c->a->box.host_busy = true;
	int rc = run_stream(w->loop, &rs);
	free(rv);
	free(ev);
	strlist_free(&run);
	strlist_free(&env);
	if (rc < 0) {
		c->a->box.host_busy = false;
		if (r->proxy)
			proxy_close(r->proxy);
		free(r->token);
		hostexec_cgroups_remove(&r->cgroups);
		free(r);
		exec_refuse(c, HOSTEXEC_NO_START, "%s: %s", prog, uv_strerror(rc));
	}
}

/* The next host command an agent asked for while one of its ran, if any. */
static void hx_next(struct wrx *w, const char *handle)
{
	for (struct act_call **p = &w->hx_waiting; *p; p = &(*p)->next_waiting) {
		struct act_call *c = *p;
		if (strcmp(c->handle, handle) != 0)
			continue;
		*p = c->next_waiting;
		c->a = session_find_agent(w->s, handle);
		char *prog = c->a ? path_which(str_arg(c, "command")) : NULL;
		if (prog == NULL)
			exec_refuse(c, HOSTEXEC_NO_START, "the agent or its command went away");
		else
			hx_start(c, prog);
		free(prog);
		return;
	}
}

static void do_host_exec(struct act_call *c)
{
	const struct config *cfg = &c->w->cfg;
	const char *name = str_arg(c, "command");
	if (c->remote) {
		exec_refuse(c, HOSTEXEC_NOT_ALLOWED,
			    "host commands are for sandboxes; an agent on %s runs its commands "
			    "there",
			    c->remote);
		return;
	}
	if (!hostexec_allowed(cfg, name)) {
		exec_refuse(
			c, HOSTEXEC_NOT_ALLOWED,
			hostexec_name_ok(name)
				? "'%s' is not one of sandbox.host_commands"
				: "'%.80s' is not a command name ([A-Za-z0-9][A-Za-z0-9._-]{0,63})",
			name);
		return;
	}
	if (!path_has("bwrap") && !cfg->sandbox.dangerously_allow_unsandboxed_host_exec) {
		exec_refuse(c, HOSTEXEC_NO_START,
			    "bubblewrap (bwrap) is not installed; host commands run only inside it "
			    "(or set sandbox.dangerously_allow_unsandboxed_host_exec)");
		return;
	}
	char *prog = path_which(name);
	if (prog == NULL) {
		exec_refuse(c, HOSTEXEC_NO_START, "'%s' is not installed on the host", name);
		return;
	}
	if (c->a->box.host_busy) {
		/* One at a time: this one waits its turn (in order). */
		struct act_call **p = &c->w->hx_waiting;
		while (*p)
			p = &(*p)->next_waiting;
		*p = c;
		free(prog);
		return;
	}
	hx_start(c, prog);
	free(prog);
}

static void do_list(struct act_call *c)
{
	struct session *s = c->w->s;
	json_object *arr = json_object_new_array();
	uint64_t now = now_ms();
	for (int i = 0; i < session_agent_count(s); i++) {
		struct agent *a = session_agent(s, i);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "handle", json_object_new_string(a->handle));
		json_object_object_add(o, "status",
				       a->status != WRX_STATUS_NONE
					       ? json_object_new_string(status_word(a->status))
					       : NULL);
		json_object_object_add(o, "interrupted",
				       json_object_new_boolean(session_interrupted(s, a, now)));
		json_object_object_add(o, "since_ms",
				       json_object_new_int64((int64_t)agent_status_age(a)));
		if (a->title)
			json_object_object_add(o, "title", json_object_new_string(a->title));
		if (a->failure)
			json_object_object_add(o, "failure", json_object_new_string(a->failure));
		json_object_object_add(o, "panes", json_object_new_int(session_agent_panes(s, a)));
		int exited = 0;
		for (int k = 0; k < session_pane_count(s); k++)
			exited += session_pane(s, k)->agent == a &&
				  pane_exited(session_pane(s, k)->term, NULL);
		json_object_object_add(o, "exited", json_object_new_int(exited));
		if (a->remote.unreachable)
			json_object_object_add(o, "unreachable", json_object_new_boolean(1));
		if (a->has_usage)
			json_object_object_add(o, "usage", rpc_usage_json(&a->usage));
		json_object_object_add(o, "egress_refused",
				       json_object_new_int(a->box.egress_refused));
		if (a->session_id)
			json_object_object_add(o, "session", json_object_new_string(a->session_id));
		struct wpane *fp = session_focus(s);
		if (fp && fp->agent == a)
			json_object_object_add(o, "focused", json_object_new_boolean(1));
		json_object_array_add(arr, o);
	}
	json_object *f = json_object_new_object();
	json_object_object_add(f, "agents", arr);
	act_ok(c, f);
}

/* allow-domain, once the user said yes: into the global config, then read again. */
static void allow_run(struct act_call *c)
{
	struct wrx *w = c->w;
	const char *host = str_arg(c, "host");
	char *path = config_global_path(), *cause = NULL;
	struct strlist warnings = {0};
	if (config_allow_domain(path, host, &cause) < 0 ||
	    wrx_config_reload(w, &warnings, &cause) < 0) {
		act_fail(c, "allow-domain: %s", cause);
		free(cause);
	} else {
		wrx_message(w, false, "%s is in allowed_domains (%s); agents' proxies take it now",
			    host, path);
		c->said = true;
		act_ok(c, NULL);
	}
	strlist_free(&warnings);
	free(path);
}

static void do_allow_domain(struct act_call *c)
{
	char *path = config_global_path();
	char *q = xasprintf("add %s to sandbox.network.allowed_domains in %s? (y/n)",
			    str_arg(c, "host"), path);
	free(path);
	confirm_then(c, q, allow_run);
	free(q);
}

/* answer: a question the dashboard asks, by its id (a web view not the dashboard's). */
static void do_answer(struct act_call *c)
{
	json_object *v = arg(c, "id");
	int64_t id = v ? json_object_get_int64(v) : 0;
	if (c->w->hooks->answer == NULL || id <= 0 || id > UINT32_MAX ||
	    c->w->hooks->answer(c->w->ui, (unsigned)id, bool_arg(c, "yes")) < 0) {
		act_fail(c, "no question %lld waits", (long long)id);
		return;
	}
	act_ok(c, NULL);
}

static void do_reload(struct act_call *c)
{
	struct wrx *w = c->w;
	struct strlist warnings = {0};
	char *cause = NULL;
	if (wrx_config_reload(w, &warnings, &cause) < 0) {
		act_fail(c, "config not reloaded, the old one stays: %s", cause);
		free(cause);
		return;
	}
	json_object *f = json_object_new_object(), *arr = json_object_new_array();
	for (size_t i = 0; i < warnings.n; i++)
		json_object_array_add(arr, json_object_new_string(warnings.v[i]));
	json_object_object_add(f, "warnings", arr);
	if (c->door != DOOR_UI)
		wrx_message(w, false, "config reloaded (workrex %s)", "config reload");
	else if (warnings.n)
		wrx_message(w, true, "config reloaded; %s%s", warnings.v[0],
			    warnings.n > 1 ? " (and more: workrex config check)" : "");
	else
		wrx_message(w, false, "config reloaded");
	c->said = true;
	strlist_free(&warnings);
	enum door door = c->door;
	act_ok(c, f);
	/* A changed project file asks again (the dashboard's own reload asks when it will). */
	if (door != DOOR_UI && w->hooks->trust)
		w->hooks->trust(w->ui);
}

/* An agent `workrex add` made just now: what it sent says all, no git is read. */
static struct agent *learn(struct act_call *c)
{
	struct session *s = c->w->s;
	const char *path = str_arg(c, "path");
	if (path == NULL || path[0] != '/')
		return NULL;
	struct agent *a = session_add_agent(s, str_arg(c, "handle"), path);
	a->git.worktree = true;
	const char *branch = str_arg(c, "branch"), *agent = str_arg(c, "agent");
	a->git.branch = branch ? xstrdup(branch) : NULL;
	a->git.agent = agent ? xstrdup(agent) : NULL;
	json_object *num = arg(c, "number");
	if (num && json_object_is_type(num, json_type_int))
		session_set_agent_num(s, a, json_object_get_int(num));
	json_object *sb = arg(c, "sandbox");
	if (sb && json_object_is_type(sb, json_type_boolean))
		a->box.wanted = json_object_get_boolean(sb);
	const char *remote = str_arg(c, "remote");
	a->remote.host = remote ? xstrdup(remote) : NULL;
	const char *parent = str_arg(c, "parent"), *group = str_arg(c, "group");
	a->git.parent = parent ? xstrdup(parent) : NULL;
	a->git.group = group ? xstrdup(group) : NULL;
	const char *layout = str_arg(c, "layout"), *ports = str_arg(c, "ports");
	a->git.layout = layout ? xstrdup(layout) : NULL;
	a->git.ports = ports ? xstrdup(ports) : NULL;
	const char *home = str_arg(c, "home");
	a->git.home = home && home[0] == '/' ? xstrdup(home) : NULL;
	json_object *limit = arg(c, "max_concurrent");
	if (limit && json_object_is_type(limit, json_type_int))
		a->git.max_concurrent = json_object_get_int(limit);
	a->remote.prompt_waits = bool_arg(c, "prompt");
	return a;
}

static void open_run(struct act_call *c);

/* Yes to writable git metadata in Lima VMs: into the global config, then the panes. */
static void lima_accepted(struct act_call *c)
{
	struct wrx *w = c->w;
	char *path = config_global_path(), *cause = NULL;
	struct strlist warnings = {0};
	if (config_accept_lima(path, &cause) < 0 || wrx_config_reload(w, &warnings, &cause) < 0) {
		act_fail(c, "lima: %s", cause);
		free(cause);
	} else {
		wrx_message(w, false, "writable git metadata in Lima VMs accepted (%s)", path);
		open_run(c);
	}
	strlist_free(&warnings);
	free(path);
}

static void do_open(struct act_call *c)
{
	struct agent *a = c->a ? c->a : learn(c);
	if (a == NULL) {
		act_fail(c, "no agent '%s' in this dashboard", str_arg(c, "handle"));
		return;
	}
	c->a = a;
	if (c->handle == NULL)
		c->handle = xstrdup(a->handle); /* learned: a question checks it is still there */
	/* add --fork: its first start continues that session (learned or read from git). */
	const char *fork = str_arg(c, "fork");
	if (fork && rpc_session_wellformed(fork) && session_agent_panes(c->w->s, a) == 0) {
		free(a->fork_from);
		a->fork_from = xstrdup(fork);
	}
	/* Made to wait for its group's slot: shown, no panes; the queue opens it (queue.c). */
	a->git.queued = bool_arg(c, "queued");
	if (a->git.queued) {
		queue_run(c->w, a->git.group);
		act_ok(c, NULL);
		return;
	}
	/*
	 * Lima shares directories, not files: its VM gets the git metadata
	 * writable. The first sandboxed agent there asks the user to accept
	 * that, once, for every project (sandbox.lima.accept_...).
	 */
	struct wrx *w = c->w;
	if (strcmp(w->cfg.sandbox.backend, "lima") == 0 &&
	    !w->cfg.sandbox.lima.accept_reduced_git_metadata_isolation &&
	    session_agent_panes(w->s, a) == 0 && sandbox_pane_wanted(w, a, true)) {
		if (w->hooks->ask == NULL) {
			act_fail(c, "Lima VMs get the git metadata writable: an agent there can "
				    "change hooks and config the host runs; accept it with "
				    "sandbox.lima.accept_reduced_git_metadata_isolation: true");
			return;
		}
		ask_then(c,
			 "Lima VMs get the git metadata writable: an agent there can change "
			 "hooks and config this host runs. Accept, for every project? (y/n)",
			 lima_accepted);
		return;
	}
	open_run(c);
}

static void open_run(struct act_call *c)
{
	struct agent *a = c->a;
	if (a == NULL) {
		act_fail(c, "the agent went while the user was asked");
		return;
	}
	/* add made its sandbox's git dir a moment ago: its first pane need not. */
	if (bool_arg(c, "git_ready"))
		a->git.ready = true;
	/* One that failed, opened again, starts anew: no longer failed. */
	if (a->status == WRX_STATUS_FAILED && session_agent_panes(c->w->s, a) == 0)
		session_set_status(c->w->s, a, WRX_STATUS_NONE);
	char *cause = NULL;
	if (agents_open(c->w, a, bool_arg(c, "focus"), bool_arg(c, "continue"), &cause) < 0) {
		act_fail(c, "%s", cause);
		free(cause);
		return;
	}
	act_ok(c, NULL);
}

/* Close every pane of the agent: the one way it is done. */
static void do_close(struct act_call *c)
{
	struct wrx *w = c->w;
	struct agent *a = c->a;
	/* Answer first: closing ends an agent caller's own connection. */
	act_ok(c, NULL);
	struct wpane *wp;
	while ((wp = session_agent_pane(w->s, a)) != NULL)
		session_close_pane(w->s, wp);
	wrx_relayout(w);
}

/* adopt: a session started outside workrex, recorded by the command, shown as a row. */
static void do_adopt(struct act_call *c)
{
	const char *cwd = str_arg(c, "cwd");
	struct adopted_rec ad = {
		.handle = (char *)str_arg(c, "handle"),
		.id = (char *)str_arg(c, "id"),
		.session = (char *)str_arg(c, "session"),
		.cwd = (char *)cwd,
		.kind = (char *)str_arg(c, "kind"),
		.attach = bool_arg(c, "attach"),
	};
	if (cwd[0] != '/' || kind_find(ad.kind) == NULL ||
	    (ad.session && !rpc_session_wellformed(ad.session))) {
		act_fail(c, "adopt needs a directory, a kind workrex knows and a session id");
		return;
	}
	struct agent *a = agents_adopt(c->w, &ad);
	if (a == NULL) {
		act_fail(c, "an agent named '%s' is in the dashboard already", ad.handle);
		return;
	}
	char *cause = NULL;
	if (ad.attach && agents_open(c->w, a, false, false, &cause) < 0) {
		wrx_message(c->w, true, "%s: %s", a->handle, cause);
		free(cause);
	}
	registry_rescan(c->w); /* what its CLI's registry said of it before it was ours */
	wrx_relayout(c->w);
	act_ok(c, NULL);
}

static void do_forget(struct act_call *c)
{
	session_remove_agent(c->w->s, c->a);
	wrx_relayout(c->w);
	act_ok(c, NULL);
}

static void do_rename(struct act_call *c)
{
	struct session *s = c->w->s;
	const char *to = str_arg(c, "to"), *path = str_arg(c, "to_path");
	if (path[0] != '/') {
		act_fail(c, "rename needs \"to\" and \"to_path\"");
		return;
	}
	/* Its programs run in the old directory, its sandbox has it mounted. */
	if (session_agent_panes(s, c->a) > 0) {
		act_fail(c, "'%s' has open panes; close them first (workrex close %s)", c->handle,
			 c->handle);
		return;
	}
	if (session_find_agent(s, to)) {
		act_fail(c, "an agent named '%s' is in the dashboard already", to);
		return;
	}
	session_rename_agent(s, c->a, to, path, str_arg(c, "to_branch"));
	wrx_relayout(c->w);
	act_ok(c, NULL);
}

/* The agent's pane, or NULL having replied. */
static struct wpane *open_pane_or_fail(struct act_call *c)
{
	struct wpane *wp = session_agent_pane(c->w->s, c->a);
	if (wp == NULL)
		act_fail(c, "'%s' has no open pane", c->handle);
	return wp;
}

static void sent(struct wrx *w, const char *why, void *arg)
{
	struct act_call *c = arg;
	(void)w;
	if (why) {
		act_fail(c, "%s: %s", c->handle, why);
		return;
	}
	json_object *f = NULL;
	if (c->door == DOOR_UI) { /* the review view's c, asking the agent: said it took it */
		char *m = xasprintf("%s: sent, and it took it", c->handle);
		f = json_object_new_object();
		json_object_object_add(f, "message", json_object_new_string(m));
		free(m);
	}
	act_ok(c, f);
}

/* ---- review comments (git/comments.h) ---- */

/* comment: kept for the agent until they are sent, all in one message. */
static void do_comment(struct act_call *c)
{
	json_object *line = arg(c, "line");
	struct review_comment rc = {.file = (char *)str_arg(c, "file"),
				    .line = line ? json_object_get_int(line) : 0,
				    .hunk = (char *)str_arg(c, "hunk"),
				    .text = (char *)str_arg(c, "text")};
	if (rc.text[0] == '\0') {
		act_fail(c, "%s: an empty comment", c->handle);
		return;
	}
	int rc_add = comments_add(c->w->root, c->handle, &rc);
	if (rc_add < 0) {
		act_fail(c, "%s: the comment was not kept: %s", c->handle, strerror(-rc_add));
		return;
	}
	session_set_comments(c->w->s, c->a, comments_count(c->w->root, c->handle));
	json_object *f = json_object_new_object();
	char *m = xasprintf("%s: %d comment%s wait%s for it (S sends them)", c->handle,
			    c->a->comments, c->a->comments == 1 ? "" : "s",
			    c->a->comments == 1 ? "s" : "");
	json_object_object_add(f, "message", json_object_new_string(m));
	json_object_object_add(f, "comments", json_object_new_int(c->a->comments));
	free(m);
	act_ok(c, f);
}

/* review --edit or --delete changed the file: counted anew. */
static void do_comments_changed(struct act_call *c)
{
	session_set_comments(c->w->s, c->a, comments_count(c->w->root, c->handle));
	act_ok(c, NULL);
}

/* What a review's delivery finds its call by, and how many comments it carries. */
struct review_send {
	struct act_call *c;
	int n;
};

static void review_sent(struct wrx *w, const char *why, void *arg)
{
	struct review_send *rs = arg;
	struct act_call *c = rs->c;
	int n = rs->n;
	free(rs);
	if (why) {
		act_fail(c, "%s: the comments did not go (they are kept): %s", c->handle, why);
		return;
	}
	int left = comments_drop(w->root, c->handle, n);
	struct agent *a = session_find_agent(w->s, c->handle);
	if (a)
		session_set_comments(w->s, a, left);
	json_object *f = json_object_new_object();
	char *m = xasprintf("%s: %d comment%s sent as one message, and it took it", c->handle, n,
			    n == 1 ? "" : "s");
	json_object_object_add(f, "message", json_object_new_string(m));
	json_object_object_add(f, "sent", json_object_new_int(n));
	free(m);
	act_ok(c, f);
}

/* pr-track: workrex pr or add --pr made or found its PR: the sidebar follows it. */
static void do_pr_track(struct act_call *c)
{
	json_object *n = arg(c, "number");
	if (n == NULL || json_object_get_int(n) <= 0) {
		act_fail(c, "pr-track needs the PR's number");
		return;
	}
	prs_track(c->w, c->a, json_object_get_int(n));
	act_ok(c, NULL);
}

/* review-send: the comments waiting, as one message typed into the agent and verified. */
static void do_review_send(struct act_call *c)
{
	struct review_comment *rc;
	int n = comments_load(c->w->root, c->handle, &rc);
	if (n <= 0) {
		if (n < 0)
			act_fail(c, "%s: its comments cannot be read: %s", c->handle, strerror(-n));
		else
			act_fail(c, "%s: no comment waits (o adds one in the review view)",
				 c->handle);
		return;
	}
	struct wpane *wp = open_pane_or_fail(c);
	if (wp) {
		char *msg = comments_message(rc, n);
		struct review_send *rs = xcalloc(1, sizeof *rs);
		*rs = (struct review_send){.c = c, .n = n};
		deliver_start(c->w, wp, msg, true, false, review_sent, rs);
		free(msg);
	}
	comments_free(rc, n);
}

/* A key by the name send-keys takes: 0 with *key (a WRX_KEY_*) or *ch (a character), or -1. */
static int key_named(const char *name, int *key, uint32_t *ch)
{
	static const struct {
		const char *name;
		int key;
	} keys[] = {
		{"escape", WRX_KEY_ESCAPE},       {"enter", WRX_KEY_ENTER}, {"tab", WRX_KEY_TAB},
		{"backspace", WRX_KEY_BACKSPACE}, {"up", WRX_KEY_UP},       {"down", WRX_KEY_DOWN},
		{"left", WRX_KEY_LEFT},           {"right", WRX_KEY_RIGHT},
	};
	*key = 0;
	*ch = 0;
	for (size_t i = 0; i < WRX_ARRAY_LEN(keys); i++)
		if (!strcasecmp(name, keys[i].name)) {
			*key = keys[i].key;
			return 0;
		}
	if (name[0] > 0x20 && name[0] < 0x7f && name[1] == '\0') {
		*ch = (uint32_t)name[0];
		return 0;
	}
	return -1;
}

/*
 * The reply waits until the program took the text, and Enter did something
 * (deliver.h); a key (send-keys) is pressed at once.
 */
static void do_send(struct act_call *c)
{
	const char *name = str_arg(c, "key");
	int key;
	uint32_t ch;
	if (name && key_named(name, &key, &ch) < 0) {
		act_fail(c,
			 "send-keys: no key '%s' (Escape, Enter, Tab, Backspace, Up, Down, "
			 "Left, Right, or one character)",
			 name);
		return;
	}
	struct wpane *wp = open_pane_or_fail(c);
	if (wp == NULL)
		return;
	if (name == NULL) {
		deliver_start(c->w, wp, str_arg(c, "text"), bool_arg(c, "enter"), false, sent, c);
		return;
	}
	if (key)
		pane_key(wp->term, key, 0);
	else
		pane_char(wp->term, ch, 0);
	act_ok(c, NULL);
}

/* queue-add: the agent into the merge queue (merge --queue, a child): not a merge yet. */
static void do_queue_add(struct act_call *c)
{
	strlist_add(&c->argv, "merge");
	strlist_add(&c->argv, "--queue");
	strlist_add(&c->argv, "--");
	strlist_add(&c->argv, c->handle);
	run_child(c);
}

/* queue-kick: the merge queue has something to land (lander.c). */
static void do_queue_kick(struct act_call *c)
{
	lander_kick(c->w, NULL);
	act_ok(c, NULL);
}

/*
 * queue-notes: where each agent in the merge queue is (its place, its
 * step), under its row: handle, text, handle, text...
 */
static void do_queue_notes(struct act_call *c)
{
	json_object *v = arg(c, "notes");
	size_t n = v ? json_object_array_length(v) : 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		const char *h = json_object_get_string(json_object_array_get_idx(v, i));
		struct agent *a = session_find_agent(c->w->s, h);
		if (a == NULL)
			continue;
		/* A place in a queue is no news to ring for; kept, as its other notes are. */
		session_note(c->w->s, a,
			     json_object_get_string(json_object_array_get_idx(v, i + 1)));
		keep_meta(c->w, a);
	}
	act_ok(c, NULL);
}

/*
 * queue-return: the merge queue gave the agent its branch back (a
 * conflict, a failing check): it works again, told why in its pane, and
 * says so under its row.
 */
static void do_queue_return(struct act_call *c)
{
	struct wpane *wp = open_pane_or_fail(c);
	if (wp == NULL)
		return;
	const char *why = str_arg(c, "why");
	/* Said first: the working below keeps the agent's meta, this note in it. */
	char *note = xasprintf("queue: %s", why ? why : "given back");
	session_notify(c->w->s, c->a, note);
	free(note);
	/*
	 * Unstamped: hooks are ordered by their processes' starts, which the
	 * kernel's whole-second boot time puts up to a second off the wall
	 * clock; stamped now, the agent's own done that follows could be late.
	 */
	agent_status_heard(c->w, c->a, WRX_STATUS_WORKING, 0, NULL, "queue");
	keep_meta(c->w, c->a);
	deliver_start(c->w, wp, str_arg(c, "text"), true, false, sent, c);
}

/* egress: the connections through the agent's proxy (policy: deny), the latest last. */
static void do_egress(struct act_call *c)
{
	struct agent *a = c->a;
	struct buf b = {0};
	buf_addf(&b, "%s: %d allowed, %d refused through its proxy since this dashboard started\n",
		 a->handle, a->box.egress_ok, a->box.egress_refused);
	/* Connections counted or listed say a proxy ran, whatever this dashboard holds now. */
	if (a->box.proxy_token == NULL && a->box.negress == 0 &&
	    a->box.egress_ok + a->box.egress_refused == 0)
		buf_addstr(
			&b,
			"(no proxy: sandbox.network.policy is not deny, or it is not sandboxed)\n");
	for (size_t i = 0; i < a->box.negress; i++)
		buf_addf(&b, "%s\n", a->box.egress[i]);
	json_object *f = json_object_new_object();
	json_object_object_add(f, "data", json_object_new_string(b.data));
	buf_free(&b);
	act_ok(c, f);
}

/*
 * capture: the history and the screen, trailing blank rows off; with
 * colour, as SGR, a row of background colour counting as shown. screen:
 * exactly the rows the pane shows, with the colours the dashboard's
 * terminal shows them in.
 */
static void capture_now(struct act_call *c, struct wpane *wp);

/* A capture of a pane not shown waits for its keeper's answer: its screen as it is. */
struct fresh_wait {
	uv_timer_t timer;
	struct act_call *c;
	int pane;
	uint64_t fresh, since;
};
#define FRESH_TICK_MS 5
#define FRESH_WAIT_MS 1000 /* a keeper too old to answer: its updates were never held */

static void fresh_closed(uv_handle_t *h)
{
	free(h->data);
}

static void fresh_tick(uv_timer_t *t)
{
	struct fresh_wait *f = t->data;
	struct act_call *c = f->c;
	struct wpane *wp = session_find_pane(c->w->s, f->pane);
	bool there = wp && pane_fresh(wp->term) > f->fresh;
	if (wp && !there && !pane_exited(wp->term, NULL) && now_ms() - f->since < FRESH_WAIT_MS)
		return;
	uv_timer_stop(t);
	uv_close((uv_handle_t *)t, fresh_closed);
	if (wp)
		session_pane_want(wp, false);
	c->a = session_find_agent(c->w->s, c->handle);
	wp = c->a ? open_pane_or_fail(c) : NULL;
	if (c->a == NULL)
		act_fail(c, "'%s' went away", c->handle);
	else if (wp)
		capture_now(c, wp);
}

static void do_capture(struct act_call *c)
{
	struct wpane *wp = open_pane_or_fail(c);
	if (wp == NULL)
		return;
	if (!pane_is_mirror(wp->term) || pane_exited(wp->term, NULL) ||
	    (pane_viewed(wp->term) && !pane_held(wp->term))) {
		capture_now(c, wp);
		return;
	}
	struct fresh_wait *f = xcalloc(1, sizeof *f);
	f->c = c;
	f->pane = wp->id;
	f->fresh = pane_fresh(wp->term);
	f->since = now_ms();
	session_pane_want(wp, true);
	uv_timer_init(c->w->loop, &f->timer);
	f->timer.data = f;
	uv_timer_start(&f->timer, fresh_tick, FRESH_TICK_MS, FRESH_TICK_MS);
}

static void capture_now(struct act_call *c, struct wpane *wp)
{
	json_object *v = arg(c, "lines");
	int lines = v ? json_object_get_int(v) : -1;
	int hist = (int)pane_history(wp->term), rows = pane_rows(wp->term);
	bool colour = bool_arg(c, "colour"), screen = bool_arg(c, "screen");
	int from = -hist, last = rows - 1;
	if (screen)
		from = 0;
	else
		while (last >= 0 && pane_line_blank(wp->term, last, colour))
			last--;
	if (!screen && lines >= 0 && last + 1 - lines > from)
		from = last + 1 - lines;
	struct buf b = {0};
	for (int l = from; l <= last; l++) {
		if (colour || screen)
			pane_line_append_sgr(wp->term, l, screen ? c->w->display_colours : 0, &b);
		else
			pane_line_append(wp->term, l, 0, 4095, &b);
		buf_addch(&b, '\n');
	}
	json_object *f = json_object_new_object();
	json_object_object_add(f, "data", json_object_new_string(b.data ? b.data : ""));
	buf_free(&b);
	act_ok(c, f);
}

struct agent *agent_by_session(struct wrx *w, const char *id, int *n)
{
	struct agent *found = NULL;
	*n = 0;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		if (a->session_id && strcmp(a->session_id, id) == 0) {
			found = a;
			++*n;
		}
	}
	return *n == 1 ? found : NULL;
}

/*
 * A daemon's session no agent has yet: the daemon's own metadata says
 * where it works. Only an agent of a kind whose session we cannot name
 * at start (kinds.h session_flag), with no session yet, whose worktree is
 * exactly that directory, and only one such: never a guess between two.
 */
static struct agent *agent_unbound_at(struct wrx *w, const char *dir)
{
	struct agent *found = NULL;
	const char *dflt = agentcmd_default(&w->cfg); /* a look along PATH: once */
	int n = 0;
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		const char *name = a->git.agent ? a->git.agent : dflt;
		const struct agent_kind *k = kind_of(&w->cfg, name);
		if (a->session_id || !a->git.worktree || a->remote.host || k == NULL ||
		    k->session_flag || k->hooks == KIND_HOOKS_NONE || strcmp(a->path, dir) != 0)
			continue;
		found = a;
		n++;
	}
	return n == 1 ? found : NULL;
}

/*
 * session-status: a hook without the pane's environment (a CLI's
 * background host or shared daemon), by its session id.
 */
static void do_session_status(struct act_call *c)
{
	struct wrx *w = c->w;
	enum wrx_status st = WRX_STATUS_NONE;
	const char *id = str_arg(c, "session"), *dir = str_arg(c, "dir");
	if (status_parse(str_arg(c, "status"), &st) < 0 || !rpc_session_wellformed(id)) {
		act_fail(c, "session-status needs a status (%s) and a session id",
			 status_choices());
		return;
	}
	int n;
	struct agent *a = agent_by_session(w, id, &n);
	if (a == NULL && n == 0 && dir)
		a = agent_unbound_at(w, dir);
	if (a == NULL) {
		log_msg("a hook of session %s (in %s) is no agent's%s: refused", id,
			dir ? dir : "?", n > 1 ? " alone" : "");
		act_fail(c, "session %s is no agent's here%s; nothing changed", id,
			 n > 1 ? " alone" : "");
		return;
	}
	session_set_status(w->s, a, st);
	kept_session(w, a, id);
	keep_meta(w, a);
	act_ok(c, NULL);
}

/*
 * The one agent here (no sandbox, no server) whose worktree a hook ran in
 * (dir, or below it: the deepest), of a kind with hooks; or NULL.
 */
static struct agent *agent_at(struct wrx *w, const char *dir)
{
	struct agent *found = NULL;
	size_t best = 0;
	const char *dflt = agentcmd_default(&w->cfg);
	for (int i = 0; i < session_agent_count(w->s); i++) {
		struct agent *a = session_agent(w->s, i);
		const struct agent_kind *k = kind_of(&w->cfg, a->git.agent ? a->git.agent : dflt);
		struct wpane *wp = session_agent_pane(w->s, a);
		size_t n = strlen(a->path);
		if (!a->git.worktree || a->remote.host || k == NULL ||
		    k->hooks == KIND_HOOKS_NONE || (wp && wp->sandboxed) ||
		    strncmp(dir, a->path, n) != 0 || (dir[n] != '\0' && dir[n] != '/'))
			continue;
		if (n > best)
			found = a, best = n;
		else if (n == best)
			found = NULL; /* two at one place: never a guess */
	}
	return found;
}

/*
 * Who a status is from. Its token names the pane that called, but an agent
 * CLI's shared daemon (Codex's app-server, one per user) runs every
 * session's hooks with the environment of the pane that started it: that
 * pane's token, whichever session it serves. So the session the hook
 * names says who it is, else the worktree it ran in; the token only when
 * neither names another agent. Never from a sandbox, or for one: a
 * sandbox's daemon is its own, and its agent speaks for no other.
 */
static struct agent *status_speaker(struct act_call *c, const char *id, const char *dir)
{
	struct wpane *wp = session_agent_pane(c->w->s, c->a);
	if (c->sandboxed || c->remote || (wp && wp->sandboxed))
		return c->a;
	int n = 0;
	struct agent *by = id ? agent_by_session(c->w, id, &n) : NULL;
	if (by == NULL && n == 0 && dir && strcmp(dir, c->a->path) != 0)
		by = agent_at(c->w, dir);
	if (by == NULL || by == c->a)
		return c->a;
	struct wpane *bp = session_agent_pane(c->w->s, by);
	if (by->remote.host || (bp && bp->sandboxed))
		return c->a;
	log_msg("a hook with %s's token, of %s %s: %s's", c->a->handle, id ? "session" : "dir",
		id ? id : dir, by->handle);
	return by;
}

bool agent_status_heard(struct wrx *w, struct agent *a, enum wrx_status st, uint64_t at,
			const char *why, const char *from)
{
	/* One that started before the one that set its status, arriving after: not news. */
	if (status_late(at, a->hook_at, st, a->status)) {
		if (st != a->status) /* the same again, late, is no news to log either */
			log_msg("%s: a %s %s older than its %s arrived late: not applied",
				a->handle, status_word(st), from, status_word(a->status));
		return false;
	}
	if (at)
		a->hook_at = at;
	session_set_status(w->s, a, st);
	/* Moving again, its quota is back: those of its kind that wait may open. */
	if (st != WRX_STATUS_WAITING && a->quota) {
		a->quota = false;
		queue_run(w, NULL);
	}
	/* Waiting for a reason its CLI gave (a rate limit's reset): said under its row. */
	if (st == WRX_STATUS_WAITING && why && *why)
		session_notify(w->s, a, why);
	/* Its turn died (an API error): why, in its own words, as a program's end says it. */
	if (st == WRX_STATUS_FAILED) {
		free(a->failure);
		a->failure = xstrdup(why && *why ? why : "it said it failed");
	}
	return true;
}

static void do_set_status(struct act_call *c)
{
	enum wrx_status st = WRX_STATUS_NONE;
	if (status_parse(str_arg(c, "status"), &st) < 0) {
		act_fail(c, "status must be %s", status_choices());
		return;
	}
	const char *id = str_arg(c, "session"), *dir = str_arg(c, "dir");
	if (id && !rpc_session_wellformed(id)) {
		act_fail(c, "session is not a session id");
		return;
	}
	struct agent *a = status_speaker(c, id, dir && *dir == '/' ? dir : NULL);
	json_object *atv = arg(c, "at");
	uint64_t at = atv ? (uint64_t)WRX_MAX(json_object_get_int64(atv), 0) : 0;
	/* Its kind's hooks are heard from (agents and setup say when), late or not. */
	const struct agent_kind *kind =
		kind_of(&c->w->cfg, a->git.agent ? a->git.agent : agentcmd_default(&c->w->cfg));
	if (kind)
		kind_heard_note(kind, wall_ms());
	if (!agent_status_heard(c->w, a, st, at, str_arg(c, "why"), "hook")) {
		act_ok(c, NULL);
		return;
	}
	/* Its CLI's quota ran out: new agents of its kind wait until it moves again. */
	bool quota = st == WRX_STATUS_WAITING && bool_arg(c, "quota");
	if (a->quota != quota) {
		a->quota = quota;
		if (!quota)
			queue_run(c->w, NULL);
	}
	/* What its session used so far, as its CLI wrote it (the hook read its transcript). */
	json_object *tin = arg(c, "tokens_in"), *tout = arg(c, "tokens_out"),
		    *cost = arg(c, "cost_micro");
	if (tin && tout) {
		a->usage.in = WRX_MAX(json_object_get_int64(tin), 0);
		a->usage.out = WRX_MAX(json_object_get_int64(tout), 0);
		a->usage.cost_micro = cost ? WRX_MAX(json_object_get_int64(cost), 0) : -1;
		a->has_usage = true;
	}
	/* Another agent's session is not this one's to claim: its status stays its own. */
	int n = 0;
	struct agent *holder = id ? agent_by_session(c->w, id, &n) : NULL;
	if ((holder && holder != a) || n > 1)
		log_msg("%s reported the session %s of another agent: not recorded", a->handle, id);
	else if (id)
		kept_session(c->w, a, id);
	keep_meta(c->w, a);
	act_ok(c, NULL);
}

static void do_set_title(struct act_call *c)
{
	session_set_title(c->w->s, c->a, str_arg(c, "title"));
	keep_meta(c->w, c->a);
	act_ok(c, NULL);
}

static void do_notify(struct act_call *c)
{
	const char *text = str_arg(c, "text");
	session_notify(c->w->s, c->a, text);
	keep_meta(c->w, c->a);
	wrx_message(c->w, false, "%s: %s", c->a->handle, text && *text ? text : "notification");
	act_ok(c, NULL);
}

/*
 * add-issue: the user's new agent from a GitHub issue (add --issue, a
 * child: gh runs there). The user's only: an agent's spawn names a branch.
 */
static void do_add_issue(struct act_call *c)
{
	const char *n = str_arg(c, "issue");
	if (!c->w->in_repo || n == NULL || n[0] == '\0' || strspn(n, "0123456789") != strlen(n)) {
		act_fail(c, "%s: an issue is its number", verb_name(c));
		return;
	}
	strlist_add(&c->argv, "add");
	strlist_add(&c->argv, "--issue");
	strlist_add(&c->argv, n);
	run_child(c);
}

static void do_add(struct act_call *c)
{
	struct wrx *w = c->w;
	const char *branch = str_arg(c, "branch"), *prompt = str_arg(c, "prompt");
	if (!w->in_repo) {
		act_fail(c, "%s: %s is not a git repository", verb_name(c), w->root);
		return;
	}
	if (branch[0] == '-' || branch[0] == '\0') {
		act_fail(c, "%s: '%s' is not a branch name", verb_name(c), branch);
		return;
	}
	strlist_add(&c->argv, "add");
	/* From a sandbox: sandboxed too, a new branch from the base, post_create inside. */
	if (c->sandboxed && (c->act->flags & VERB_INHERIT))
		strlist_add(&c->argv, "--from-sandbox");
	/* An agent makes a new agent; it never types into one that exists; it is its family's. */
	if (c->door == DOOR_AGENT) {
		strlist_add(&c->argv, "--new-only");
		strlist_add(&c->argv, "--parent");
		strlist_add(&c->argv, c->caller);
	}
	/* From a server: on the same server; from a sandbox there, in one there too. */
	if (c->remote && (c->act->flags & VERB_INHERIT)) {
		strlist_add(&c->argv, "--remote");
		strlist_add(&c->argv, c->remote);
		struct agent *by = c->caller ? session_find_agent(w->s, c->caller) : NULL;
		if (by && sandbox_there(w, by))
			strlist_add(&c->argv, "-S");
	}
	if (prompt && *prompt) {
		strlist_add(&c->argv, "-p");
		strlist_add(&c->argv, prompt);
	}
	if (bool_arg(c, "background"))
		strlist_add(&c->argv, "-b");
	strlist_add(&c->argv, "--");
	strlist_add(&c->argv, branch);
	run_child(c);
}

static void merge_run(struct act_call *c)
{
	strlist_add(&c->argv, "merge");
	if (bool_arg(c, "queue")) {
		strlist_add(&c->argv, "--queue");
		strlist_add(&c->argv, "--");
		strlist_add(&c->argv, c->handle);
		run_child(c);
		return;
	}
	/* Hooks off for an agent: the sandbox could have written the project's pre_merge. */
	if (c->door == DOOR_AGENT)
		strlist_add(&c->argv, "--no-verify");
	if (bool_arg(c, "rebase"))
		strlist_add(&c->argv, "--rebase");
	if (bool_arg(c, "squash"))
		strlist_add(&c->argv, "--squash");
	if (bool_arg(c, "keep"))
		strlist_add(&c->argv, "-k");
	if (bool_arg(c, "ignore_uncommitted"))
		strlist_add(&c->argv, "--ignore-uncommitted");
	strlist_add(&c->argv, "--");
	strlist_add(&c->argv, c->handle);
	run_child(c);
}

/*
 * An agent's own merge: nothing happens before the user says yes, to a
 * question that shows what the merge brings (merge --preview: its
 * diffstat, and a warning when it changes what the host runs). One
 * question per agent at a time, and never over a question the user is
 * answering already: an agent cannot bury the user in prompts or swap
 * the one they are typing into.
 */
static void merge_previewed(void *arg, int status, const char *output, const char *last)
{
	struct act_call *c = arg;
	struct wrx *w = c->w;
	(void)output;
	last = wrx_outcome(last);
	c->a = session_find_agent(w->s, c->handle); /* NULL too once the core closed */
	if (status != 0 || w->quitting || c->a == NULL) {
		if (c->a)
			c->a->box.merge_asked = false;
		if (status != 0 || w->quitting)
			act_fail(c, "%s", *last ? last : "merge: no preview");
		else
			act_fail(c, "the agent is gone");
		return;
	}
	char *q = xasprintf("%s asks to merge %s - allow? (y/n)", c->handle, last);
	struct agent *a = c->a;
	confirm_then(c, q, merge_run);
	free(q);
	wrx_attention(w, a, "asks to merge");
}

/*
 * The user's merge from the dashboard: the question says what it brings
 * when merge --preview can (a branch with nothing to merge yet cannot).
 */
char *actions_merge_question(const char *branch, const char *preview)
{
	return xasprintf("merge %s and remove its worktree? (y/n, " ACTIONS_QUEUE_ANSWER ")%s%s",
			 branch, preview && *preview ? "  " : "", preview ? preview : "");
}

char *actions_merge_anyway_question(const char *refused)
{
	return xasprintf("%s - %s", wrx_outcome(refused), overrides[0].question);
}

static void user_merge_ask(struct act_call *c, const char *preview)
{
	char *q =
		actions_merge_question(c->a->git.branch ? c->a->git.branch : c->a->handle, preview);
	confirm_then(c, q, merge_run);
	free(q);
}

static void merge_anyway(struct act_call *c)
{
	if (c->args == NULL)
		c->args = json_object_new_object();
	json_object_object_add(c->args, "ignore_uncommitted", json_object_new_boolean(1));
	c->overridden = true;
	merge_run(c);
}

static void user_merge_previewed(void *arg, int status, const char *output, const char *last)
{
	struct act_call *c = arg;
	(void)output;
	c->a = session_find_agent(c->w->s, c->handle); /* NULL too once the core closed */
	if (c->w->quitting || c->a == NULL) {
		act_fail(c, "the agent is gone");
		return;
	}
	last = wrx_outcome(last);
	/* Uncommitted work: one question, the one the refusal would have asked. */
	if (status != 0 && strstr(last, "--ignore-uncommitted")) {
		char *q = actions_merge_anyway_question(last);
		confirm_then(c, q, merge_anyway);
		free(q);
		return;
	}
	user_merge_ask(c, status == 0 ? last : NULL);
}

static void do_merge(struct act_call *c)
{
	struct wrx *w = c->w;
	struct agent *a = c->a;
	if (!a->git.worktree) {
		act_fail(c, "%s: '%s' is the main worktree", verb_name(c), c->handle);
		return;
	}
	if (c->door == DOOR_UI) {
		char *const more[] = {"--", c->handle, NULL};
		char **argv = child_argv(w, "merge-preview", more);
		struct run_opts o = {
			.argv = argv, .cwd = w->root, .done = user_merge_previewed, .arg = c};
		int rc = run_start(w->loop, &o);
		child_argv_free(argv);
		if (rc < 0)
			user_merge_ask(c, NULL);
		return;
	}
	if (c->door != DOOR_AGENT) {
		user_merge_ask(c, NULL);
		return;
	}
	if (a->box.merge_asked) {
		act_fail(c, "a merge of this agent already waits for the user");
		return;
	}
	uint64_t since = now_ms() - a->box.declined_at;
	if (a->box.declined_at && since < DECLINED_QUIET_MS) {
		act_fail(c,
			 "the user declined this agent's last request %llu s ago; not asked again "
			 "for %d s",
			 (unsigned long long)(since / 1000), DECLINED_QUIET_MS / 1000);
		return;
	}
	a->box.merge_asked = true;
	/* A merge that would be refused (uncommitted work) is refused here, unasked. */
	bool ignore = bool_arg(c, "ignore_uncommitted");
	char *const more[] = {ignore ? "--ignore-uncommitted" : "--", ignore ? "--" : c->handle,
			      ignore ? c->handle : NULL, NULL};
	char **argv = child_argv(w, "merge-preview", more);
	struct run_opts o = {.argv = argv, .cwd = w->root, .done = merge_previewed, .arg = c};
	int rc = run_start(w->loop, &o);
	child_argv_free(argv);
	if (rc < 0) {
		a->box.merge_asked = false;
		act_fail(c, "cannot run workrex merge: %s", uv_strerror(rc));
	}
}

/* = then m: the chosen candidate merged, the rest of its group removed (compare --merge). */
static void compare_merge_run(struct act_call *c)
{
	if (c->a == NULL || c->a->git.group == NULL) {
		act_fail(c, "the agent went while the user was asked");
		return;
	}
	strlist_add(&c->argv, "compare");
	strlist_add(&c->argv, c->a->git.group);
	strlist_add(&c->argv, "--merge");
	strlist_add(&c->argv, c->handle);
	strlist_add(&c->argv, "-y");
	run_child(c);
}

static void do_compare_merge(struct act_call *c)
{
	struct agent *a = c->a;
	if (a->git.group == NULL) {
		act_fail(c, "%s is in no group (add -n, -a twice or --foreach make one)",
			 c->handle);
		return;
	}
	struct buf others = {0};
	for (int i = 0; i < session_agent_count(c->w->s); i++) {
		struct agent *o = session_agent(c->w->s, i);
		if (o != a && o->git.group && !strcmp(o->git.group, a->git.group))
			buf_addf(&others, "%s%s", others.len ? ", " : "", o->handle);
	}
	char *q = others.len ? xasprintf("merge %s, and remove the rest of %s with their work "
					 "(%s)? (y/n)",
					 c->handle, a->git.group, others.data)
			     : xasprintf("merge %s? (y/n)", c->handle);
	confirm_then(c, q, compare_merge_run);
	free(q);
	buf_free(&others);
}

static void remove_run(struct act_call *c)
{
	strlist_add(&c->argv, "remove");
	strlist_add(&c->argv, "--");
	strlist_add(&c->argv, c->handle);
	run_child(c);
}

static void do_remove(struct act_call *c)
{
	if (!c->a->git.worktree) {
		act_fail(c, "%s: '%s' is the main worktree", verb_name(c), c->handle);
		return;
	}
	char *q = xasprintf("remove the worktree and branch of %s? (y/n)", c->handle);
	confirm_then(c, q, remove_run);
	free(q);
}

/* ---- the table ---- */

#define ARGS(...) ((const struct arg_spec[]){__VA_ARGS__, {NULL, ARG_STR, false}})
#define HANDLE                                                                                     \
	{                                                                                          \
		"handle", ARG_STR, true                                                            \
	}
#define NO_ARGS ((const struct arg_spec[]){{NULL, ARG_STR, false}})
#define ANYONE (DOOR_UI | DOOR_CONTROL | DOOR_AGENT)

static const struct action table[] = {
	{"ping", NULL, NO_ARGS, DOOR_CONTROL, 0, 0, 0, do_ok},
	{"heartbeat", "heartbeat", NO_ARGS, DOOR_AGENT, 0, DOOR_AGENT, 0, do_ok},
	{"list", NULL, NO_ARGS, DOOR_CONTROL, 0, 0, 0, do_list},
	{"reload", NULL, NO_ARGS, DOOR_UI | DOOR_CONTROL, 0, 0, 0, do_reload},
	{"answer", NULL, ARGS({"id", ARG_INT, true}, {"yes", ARG_BOOL, true}), DOOR_CONTROL, 0, 0,
	 0, do_answer},
	{"allow-domain", NULL, ARGS({"host", ARG_STR, true}), DOOR_UI | DOOR_CONTROL,
	 DOOR_UI | DOOR_CONTROL, 0, 0, do_allow_domain},
	{"open", NULL,
	 ARGS(HANDLE, {"path", ARG_STR, false}, {"branch", ARG_STR, false},
	      {"agent", ARG_STR, false}, {"number", ARG_INT, false}, {"sandbox", ARG_BOOL, false},
	      {"git_ready", ARG_BOOL, false}, {"focus", ARG_BOOL, false},
	      {"continue", ARG_BOOL, false}, {"remote", ARG_STR, false},
	      {"prompt", ARG_BOOL, false}, {"parent", ARG_STR, false}, {"group", ARG_STR, false},
	      {"layout", ARG_STR, false}, {"fork", ARG_STR, false},
	      {"max_concurrent", ARG_INT, false}, {"queued", ARG_BOOL, false},
	      {"ports", ARG_STR, false}, {"home", ARG_STR, false}),
	 DOOR_UI | DOOR_CONTROL, 0, 0, VERB_AGENT | VERB_LEARN, do_open},
	{"close", "close", ARGS(HANDLE), DOOR_CONTROL | DOOR_AGENT, 0, DOOR_AGENT,
	 VERB_AGENT | VERB_GONE_OK, do_close},
	{"forget", NULL, ARGS(HANDLE), DOOR_CONTROL, 0, 0, VERB_AGENT | VERB_GONE_OK, do_forget},
	{"adopt", NULL,
	 ARGS(HANDLE, {"id", ARG_STR, true}, {"session", ARG_STR, false}, {"cwd", ARG_STR, true},
	      {"kind", ARG_STR, true}, {"attach", ARG_BOOL, false}),
	 DOOR_CONTROL, 0, 0, 0, do_adopt},
	{"rename", NULL,
	 ARGS(HANDLE, {"to", ARG_STR, true}, {"to_path", ARG_STR, true},
	      {"to_branch", ARG_STR, false}),
	 DOOR_CONTROL, 0, 0, VERB_AGENT | VERB_GONE_OK, do_rename},
	{"send", NULL,
	 ARGS(HANDLE, {"text", ARG_STR, false}, {"enter", ARG_BOOL, false},
	      {"key", ARG_STR, false}),
	 DOOR_UI | DOOR_CONTROL, 0, 0, VERB_AGENT, do_send},
	{"comment", NULL,
	 ARGS(HANDLE, {"file", ARG_STR, true}, {"line", ARG_INT, false}, {"hunk", ARG_STR, false},
	      {"text", ARG_STR, true}),
	 DOOR_UI | DOOR_CONTROL, 0, 0, VERB_AGENT, do_comment},
	{"review-send", NULL, ARGS(HANDLE), DOOR_UI | DOOR_CONTROL, 0, 0, VERB_AGENT,
	 do_review_send},
	{"comments-changed", NULL, ARGS(HANDLE), DOOR_CONTROL, 0, 0, VERB_AGENT,
	 do_comments_changed},
	{"pr-track", NULL, ARGS(HANDLE, {"number", ARG_INT, true}), DOOR_CONTROL, 0, 0, VERB_AGENT,
	 do_pr_track},
	{"capture", NULL,
	 ARGS(HANDLE, {"lines", ARG_INT, false}, {"colour", ARG_BOOL, false},
	      {"screen", ARG_BOOL, false}),
	 DOOR_CONTROL, 0, 0, VERB_AGENT, do_capture},
	{"egress", NULL, ARGS(HANDLE), DOOR_CONTROL, 0, 0, VERB_AGENT, do_egress},
	{"queue-kick", NULL, NO_ARGS, DOOR_CONTROL, 0, 0, 0, do_queue_kick},
	{"queue-add", NULL, ARGS(HANDLE), DOOR_UI | DOOR_CONTROL, 0, 0, VERB_AGENT, do_queue_add},
	{"queue-notes", NULL, ARGS({"notes", ARG_STRV, true}), DOOR_CONTROL, 0, 0, 0,
	 do_queue_notes},
	{"queue-return", NULL, ARGS(HANDLE, {"text", ARG_STR, true}, {"why", ARG_STR, false}),
	 DOOR_CONTROL, 0, 0, VERB_AGENT, do_queue_return},
	{"set-status", "set_status",
	 ARGS({"status", ARG_STR, true}, {"session", ARG_STR, false}, {"dir", ARG_STR, false},
	      {"at", ARG_INT, false}, {"why", ARG_STR, false}, {"quota", ARG_BOOL, false},
	      {"tokens_in", ARG_INT, false}, {"tokens_out", ARG_INT, false},
	      {"cost_micro", ARG_INT, false}),
	 DOOR_AGENT, 0, DOOR_AGENT, 0, do_set_status},
	{"session-status", NULL,
	 ARGS({"status", ARG_STR, true}, {"session", ARG_STR, true}, {"dir", ARG_STR, false}),
	 DOOR_CONTROL, 0, 0, 0, do_session_status},
	{"set-title", "set_title", ARGS({"title", ARG_STR, true}), DOOR_AGENT, 0, DOOR_AGENT, 0,
	 do_set_title},
	{"notify", "notify", ARGS({"text", ARG_STR, false}), DOOR_AGENT, 0, DOOR_AGENT, 0,
	 do_notify},
	{"add-issue", NULL, ARGS({"issue", ARG_STR, true}), DOOR_UI, 0, 0, 0, do_add_issue},
	{"add", "spawn_agent",
	 ARGS({"branch", ARG_STR, true}, {"prompt", ARG_STR, false},
	      {"background", ARG_BOOL, false}),
	 DOOR_UI | DOOR_AGENT, 0, 0, VERB_LIMITED | VERB_INHERIT, do_add},
	{"merge", "merge",
	 ARGS(HANDLE, {"rebase", ARG_BOOL, false}, {"squash", ARG_BOOL, false},
	      {"keep", ARG_BOOL, false}, {"ignore_uncommitted", ARG_BOOL, false}),
	 DOOR_UI | DOOR_AGENT, DOOR_UI | DOOR_AGENT, DOOR_AGENT, VERB_AGENT, do_merge},
	{"remove", NULL, ARGS(HANDLE), DOOR_UI, DOOR_UI, 0, VERB_AGENT, do_remove},
	{"compare-merge", NULL, ARGS(HANDLE), DOOR_UI, DOOR_UI, 0, VERB_AGENT, do_compare_merge},
	{"paste-image", NULL, ARGS({"handle", ARG_STR, false}, {"empty", ARG_BOOL, false}),
	 DOOR_UI | DOOR_CONTROL, 0, 0, 0, do_paste_image},
	{"host-exec", "exec", ARGS({"command", ARG_STR, true}, {"args", ARG_STRV, false}),
	 DOOR_AGENT, 0, DOOR_AGENT, 0, do_host_exec},
	{"clipboard-read", "clipboard_read", ARGS({"mime", ARG_STR, false}), DOOR_AGENT, 0,
	 DOOR_AGENT, 0, do_clipboard_read},
};

static const struct action *find(const char *verb)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		if (strcmp(table[i].name, verb) == 0)
			return &table[i];
	return NULL;
}

const char *actions_for_rpc(const char *type)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		if (table[i].rpc && strcmp(table[i].rpc, type) == 0)
			return table[i].name;
	return NULL;
}

/* ---- the engine: what the table says, before the verb runs ---- */

static bool type_ok(json_object *v, enum arg_type t)
{
	switch (t) {
	case ARG_STR:
		return json_object_is_type(v, json_type_string);
	case ARG_BOOL:
		return json_object_is_type(v, json_type_boolean) ||
		       json_object_is_type(v, json_type_int);
	case ARG_INT:
		return json_object_is_type(v, json_type_int);
	case ARG_STRV:
		if (!json_object_is_type(v, json_type_array))
			return false;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
				return false;
		return true;
	}
	return false;
}

/* The arguments as the table says; 0, or -1 having replied. */
static int check_args(struct act_call *c)
{
	for (const struct arg_spec *s = c->act->args; s->name; s++) {
		json_object *v = arg(c, s->name);
		if (v == NULL || json_object_is_type(v, json_type_null)) {
			if (s->required &&
			    !(strcmp(s->name, "handle") == 0 && (c->act->own & c->door))) {
				act_fail(c, "%s needs \"%s\"", c->act->name, s->name);
				return -1;
			}
			continue;
		}
		if (!type_ok(v, s->type)) {
			act_fail(c, "%s: \"%s\" must be %s", c->act->name, s->name,
				 s->type == ARG_STR    ? "a string"
				 : s->type == ARG_INT  ? "a number"
				 : s->type == ARG_STRV ? "a list of strings"
						       : "true or false");
			return -1;
		}
	}
	return 0;
}

/* May caller make one more agent? 0, or -1 having replied. */
static int check_family(struct act_call *c, struct agent *caller)
{
	struct session *s = c->w->s;
	struct agent *root = session_family_root(s, caller);
	int family = 0, spawned = 0;
	for (int i = 0; i < session_agent_count(s); i++) {
		struct agent *a = session_agent(s, i);
		if (a->git.parent == NULL)
			continue;
		spawned++;
		family += session_family_root(s, a) == root;
	}
	const char *why = NULL;
	if (family >= FAMILY_MAX)
		why = "its family (agents made under one agent of yours) has the most it may";
	else if (spawned >= PROJECT_SPAWNED_MAX)
		why = "the project has the most agents made by agents it may";
	uint64_t now = now_ms();
	if (now - c->w->start_window >= 60000) {
		c->w->start_window = now;
		c->w->starts = 0;
	}
	if (why == NULL && c->w->starts >= STARTS_PER_MINUTE)
		why = "agents made more agents than the dashboard starts in a minute";
	if (why) {
		log_msg("rpc: %s: %s refused: %s (family %d of %d, project %d of %d)",
			caller->handle, verb_name(c), why, family, FAMILY_MAX, spawned,
			PROJECT_SPAWNED_MAX);
		act_fail(c, "%s: %s (%d under %s); remove some first", verb_name(c), why, family,
			 root->handle);
		return -1;
	}
	c->w->starts++;
	return 0;
}

/* The agent door: the caller's own agent, as the table allows. 0, or -1 having replied. */
static int check_caller(struct act_call *c, struct agent *caller)
{
	if (c->act->flags & VERB_LIMITED) {
		uint64_t now = now_ms();
		if (now - caller->box.spawn_window >= 60000) {
			caller->box.spawn_window = now;
			caller->box.spawns = 0;
		}
		if (++caller->box.spawns > SPAWNS_PER_MINUTE) {
			log_msg("rpc: %s: %s refused: more than %d in a minute", caller->handle,
				verb_name(c), SPAWNS_PER_MINUTE);
			act_fail(c, "%s: at most %d agents a minute", verb_name(c),
				 SPAWNS_PER_MINUTE);
			return -1;
		}
	}
	if ((c->act->flags & VERB_LIMITED) && check_family(c, caller) < 0)
		return -1;
	if (!(c->act->own & DOOR_AGENT))
		return 0;
	const char *handle = str_arg(c, "handle");
	if (handle && strcmp(handle, caller->handle) != 0) {
		log_msg("rpc: pane %d (%s) asked to %s '%s': refused", c->pane, caller->handle,
			verb_name(c), handle);
		act_fail(c, "an agent may only %s itself, not '%s'", verb_name(c), handle);
		return -1;
	}
	if ((c->act->flags & VERB_AGENT) && !caller->git.worktree) {
		act_fail(c, "%s: '%s' is the main worktree", verb_name(c), caller->handle);
		return -1;
	}
	c->a = caller;
	return 0;
}

void actions_call(struct wrx *w, const char *verb, json_object *args, enum door door,
		  int caller_pane, act_reply_fn *reply, void *reply_arg)
{
	actions_call_stream(w, verb, args, door, caller_pane, reply, NULL, reply_arg);
}

void actions_call_stream(struct wrx *w, const char *verb, json_object *args, enum door door,
			 int caller_pane, act_reply_fn *reply, const struct act_stream *stream,
			 void *reply_arg)
{
	struct act_call *c = xcalloc(1, sizeof *c);
	c->stream = stream;
	c->w = w;
	c->args = args;
	c->door = door;
	c->pane = caller_pane;
	c->reply = reply;
	c->reply_arg = reply_arg;
	c->act = verb ? find(verb) : NULL;
	if (c->act == NULL || !(c->act->doors & door)) {
		static const struct arg_spec none[] = {{NULL, ARG_STR, false}};
		static const struct action unknown = {"?", NULL, none, 0, 0, 0, 0, NULL};
		c->act = &unknown;
		act_fail(c, "unknown command '%s'", verb ? verb : "");
		return;
	}
	c->confirm = (c->act->confirm & door) != 0;
	if (check_args(c) < 0)
		return;
	if (door == DOOR_AGENT) {
		struct wpane *wp = session_find_pane(w->s, caller_pane);
		if (wp == NULL) {
			act_fail(c, "this pane is gone");
			return;
		}
		c->sandboxed = wp->sandboxed;
		c->remote = wp->agent->remote.host;
		c->caller = xstrdup(wp->agent->handle);
		if (check_caller(c, wp->agent) < 0)
			return;
	}
	if ((c->act->flags & VERB_AGENT) && c->a == NULL) {
		const char *handle = str_arg(c, "handle");
		c->a = session_find_agent(w->s, handle);
		if (c->a == NULL && !(c->act->flags & VERB_LEARN)) {
			if (c->act->flags & VERB_GONE_OK)
				act_ok(c, NULL); /* nothing open: nothing to do */
			else
				act_fail(c, "no agent '%s' in this dashboard", handle);
			return;
		}
	}
	if (c->a)
		c->handle = xstrdup(c->a->handle);
	c->act->run(c);
}

/* ---- the control door ---- */

static void keep_reply(struct wrx *w, json_object *r, void *arg)
{
	(void)w;
	*(json_object **)arg = r;
}

/* The control socket's wire: {"ok": true, ...} or {"error": "why"}. */
struct control_reply {
	act_reply_fn *done;
	void *arg;
};

struct parked_reply {
	struct control_reply cr;
	unsigned started; /* w->keepers_started when its command came */
	json_object *r;   /* once it replied */
	struct parked_reply *next;
};

static void control_wire(struct wrx *w, json_object *r, void *arg)
{
	struct parked_reply *p = arg;
	const char *e = actions_error(r);
	if (e) {
		json_object *er = json_object_new_object();
		json_object_object_add(er, "error", json_object_new_string(e));
		json_object_put(r);
		r = er;
	}
	if (w->starting > 0 && w->keepers_started != p->started && !w->quitting) {
		struct parked_reply **tail = &w->parked;
		while (*tail)
			tail = &(*tail)->next;
		p->r = r;
		*tail = p;
		return;
	}
	struct control_reply cr = p->cr;
	free(p);
	cr.done(w, r, cr.arg);
}

void actions_started(struct wrx *w)
{
	if (w->starting > 0 && !w->quitting)
		return;
	while (w->parked) {
		struct parked_reply *p = w->parked;
		w->parked = p->next;
		struct control_reply cr = p->cr;
		json_object *r = p->r;
		free(p);
		cr.done(w, r, cr.arg);
	}
}

void actions_control(struct wrx *w, json_object *req, act_reply_fn *done, void *arg)
{
	json_object *v;
	const char *cmd =
		json_object_object_get_ex(req, "cmd", &v) ? json_object_get_string(v) : NULL;
	struct parked_reply *p = xcalloc(1, sizeof *p);
	*p = (struct parked_reply){.cr = {.done = done, .arg = arg}, .started = w->keepers_started};
	actions_call(w, cmd, json_object_get(req), DOOR_CONTROL, 0, control_wire, p);
}

json_object *actions_control_wait(struct wrx *w, json_object *req)
{
	json_object *r = NULL;
	actions_control(w, req, keep_reply, &r);
	while (r == NULL && uv_run(w->loop, UV_RUN_ONCE))
		;
	if (r == NULL) { /* the loop ran dry: nothing left that could reply */
		r = json_object_new_object();
		json_object_object_add(r, "error", json_object_new_string("no reply"));
	}
	return r;
}
