/*
 * server.c - `workrex __remote` on a server (server.h): a table of ops,
 * each a function from the request to the answer.
 *
 * What it changes there is what a local workrex would change here: a
 * worktree of the clone (worktree.c, the same code), a keeper (keeper.c).
 * The local side decides; nothing here reads the server's workrex config,
 * so an agent's command and hooks are the ones the user configured here,
 * run there.
 */
#include "server.h"

#include "../git/worktree.h"
#include "../keeper/client.h"
#include "../keeper/keeper.h"
#include "../keeper/proto.h"
#include "../rpc/control.h"
#include "../rpc/proto.h"
#include "../util/image.h"
#include "../util/json.h"
#include "../util/util.h"
#include "boxed.h"
#include "link.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A request's line, and a pasted image after it. */
#define REQUEST_MAX (IMAGE_MAX + (4u << 20))

/* A list of strings of the request into out; false if it is not one. */
static bool strings(json_object *o, const char *key, struct strlist *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return true;
	if (!json_object_is_type(v, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return false;
		strlist_add(out, json_object_get_string(e));
	}
	return true;
}

/* What came after the request's line: a paste's image. */
struct payload {
	const char *data;
	size_t len;
};

static json_object *fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_object *fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	json_object *r = json_object_new_object();
	json_object_object_add(r, "error", json_object_new_string(msg));
	free(msg);
	return r;
}

/* fail with *cause (taken: freed, NULL after), or fallback when there is none. */
static json_object *failed(char **cause, const char *fallback)
{
	json_object *r = fail("%s", *cause ? *cause : fallback);
	free(*cause);
	*cause = NULL;
	return r;
}

static json_object *ok(void)
{
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	return r;
}

/* The clone at path, which must be a repository's main worktree exactly. */
static struct repo *clone_at(const char *path, char **cause)
{
	struct repo *r = NULL;
	char real[PATH_MAX];
	if (path == NULL || path[0] != '/') {
		*cause = xstrdup("no path to the clone");
		return NULL;
	}
	if (repo_open(path, &r, cause) < 0)
		return NULL;
	if (realpath(path, real) == NULL || strcmp(real, repo_root(r)) != 0) {
		*cause = xasprintf("%s is inside the repository %s, not a clone of its own", path,
				   repo_root(r));
		repo_free(r);
		return NULL;
	}
	return r;
}

/* The socket the link's RPC bridge is forwarded to: <runtime>/l-<id>.sock. */
static char *rpc_socket(json_object *req, char **cause)
{
	const char *id = json_str(req, "id");
	if (id == NULL || strlen(id) != 8 || strspn(id, "0123456789abcdef") != 8) {
		*cause = xstrdup("no link id");
		return NULL;
	}
	char *dir = control_dir(cause);
	char *path = dir ? xasprintf("%s/l-%s.sock", dir, id) : NULL;
	free(dir);
	return path;
}

static json_object *op_hello(json_object *req, const struct payload *p)
{
	char *cause = NULL;
	char *rpc = rpc_socket(req, &cause);
	if (rpc == NULL)
		return failed(&cause, "no link id");
	/* Left by a master that died: sshd would not listen over it. */
	int fd = rpc_connect_unix(rpc, &cause);
	if (fd >= 0)
		close(fd);
	else if (fd == -ECONNREFUSED)
		unlink(rpc);
	free(cause);
	cause = NULL;
	json_object *r = ok(), *ks = json_object_new_array();
	json_object_object_add(r, "rpc_socket", json_object_new_string(rpc));
	free(rpc);
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	char *dir = repo ? keeper_dir(repo_root(repo), &cause) : NULL;
	struct keeper_entry *e = NULL;
	size_t n = dir ? keeper_list(dir, &e) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *k = json_object_new_object();
		json_object_object_add(k, "pane", json_object_new_int(e[i].info.pane));
		json_object_object_add(
			k, "handle",
			json_object_new_string(e[i].info.handle ? e[i].info.handle : ""));
		json_object_object_add(k, "socket", json_object_new_string(e[i].path));
		json_object_object_add(k, "exited", json_object_new_boolean(e[i].info.exited));
		/* A sandboxed agent's RPC directory: the link forwards the bridge into it again. */
		char *box =
			e[i].info.handle && *e[i].info.handle
				? remote_box_dir(repo_root(repo), e[i].info.handle, false, &cause)
				: NULL;
		if (box)
			json_object_object_add(k, "rpc_dir", json_object_new_string(box));
		free(box);
		free(cause);
		cause = NULL;
		json_object_array_add(ks, k);
	}
	keeper_list_free(e, n);
	json_object_object_add(r, "keepers", ks);
	json_object_object_add(r, "clone", json_object_new_boolean(repo != NULL));
	json_object_object_add(r, "git", json_object_new_boolean(path_has("git")));
	free(dir);
	free(cause);
	repo_free(repo);
	return r;
}

static json_object *op_prepare(json_object *req, const struct payload *p)
{
	const char *path = json_str(req, "path");
	char *cause = NULL;
	struct stat st;
	if (path == NULL || path[0] != '/')
		return fail("no path to the clone");
	if (!path_has("git"))
		return fail("git is not installed there");
	bool created = false;
	if (lstat(path, &st) < 0 && errno == ENOENT) {
		char *parent = path_parent(path);
		int rc = mkdir_p(parent, 0755);
		free(parent);
		const char *argv[] = {"init", "--quiet", "--", path, NULL};
		struct buf err = {0};
		if (rc < 0 || git_run("/", argv, NULL, &err, true) != 0) {
			char *why = rc < 0 ? xstrdup(strerror(-rc))
					   : git_error_line(&err, "git init failed");
			json_object *r = fail("cannot make the clone %s: %s", path, why);
			free(why);
			buf_free(&err);
			return r;
		}
		buf_free(&err);
		created = true;
	}
	struct repo *r = clone_at(path, &cause);
	if (r == NULL)
		return failed(&cause, "no clone");
	repo_free(r);
	json_object *a = ok();
	json_object_object_add(a, "created", json_object_new_boolean(created));
	return a;
}

static json_object *op_add(json_object *req, const struct payload *p)
{
	char *cause = NULL;
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	if (repo == NULL)
		return failed(&cause, "no clone");
	struct config c;
	config_init(&c);
	if (!strings(req, "post_create", &c.post_create)) {
		config_free(&c);
		repo_free(repo);
		return fail("post_create must be a list of commands");
	}
	struct add_opts o = {.branch = json_str(req, "branch"),
			     .base = json_str(req, "base"),
			     .handle = json_str(req, "handle"),
			     .prompt = json_str(req, "prompt"),
			     .agent = json_str(req, "agent"),
			     .cwd = repo_root(repo),
			     .sandbox = 0};
	struct agent_rec a = {0};
	int rc = o.branch && o.handle ? worktree_add(repo, &c, &o, &a, &cause) : -EINVAL;
	json_object *r;
	if (rc < 0 && a.path == NULL) {
		r = failed(&cause, "add needs a branch and a handle");
	} else {
		/* Made, even if post_create failed: it is an agent, to be removed or used. */
		r = ok();
		json_object_object_add(r, "worktree", json_object_new_string(a.path));
		if (rc < 0)
			json_object_object_add(r, "failed", json_object_new_string(cause));
	}
	free(cause);
	agent_rec_free(&a);
	config_free(&c);
	repo_free(repo);
	return r;
}

/* Only what the pane's program is meant to have: never a variable of workrex's own link. */
static bool env_wanted(const char *kv)
{
	static const char *const own[] = {"WORKREX_RPC_SOCKET=", "WORKREX_RPC_KEEPER=",
					  "WORKREX_RUNTIME_DIR=", "PATH=", "WORKREX_BIN="};
	for (size_t i = 0; i < WRX_ARRAY_LEN(own); i++)
		if (strncmp(kv, own[i], strlen(own[i])) == 0)
			return false;
	return strchr(kv, '=') != NULL;
}

/* The spec's common part: what the keeper shows its clients, its size, its socket. */
static void spec_pane(json_object *spec, json_object *req, const char *sock)
{
	json_object_object_add(spec, "cwd", json_object_new_string(json_str(req, "cwd")));
	json_object_object_add(spec, "socket", json_object_new_string(sock));
	json_object_object_add(spec, "pane", json_object_new_int(json_int(req, "pane", 0)));
	json_object_object_add(spec, "rows", json_object_new_int(json_int(req, "rows", 24)));
	json_object_object_add(spec, "cols", json_object_new_int(json_int(req, "cols", 80)));
	json_object_object_add(spec, "scrollback",
			       json_object_new_int(json_int(req, "scrollback", 10000)));
	const char *handle = json_str(req, "handle"), *label = json_str(req, "label");
	json_object_object_add(spec, "handle", json_object_new_string(handle ? handle : ""));
	json_object_object_add(spec, "label", json_object_new_string(label ? label : ""));
	/* Not a sandbox of the dashboard's: nothing there is for it to stop. */
	json_object_object_add(spec, "sandboxed", json_object_new_boolean(0));
	json_object_object_add(spec, "agent_pane",
			       json_object_new_boolean(json_flag(req, "agent_pane")));
	/* The ssh session's own variables would be stale after the next reconnect. */
	static const char *const session[] = {"SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY",
					      "SSH_AUTH_SOCK", "SSH_ORIGINAL_COMMAND"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(session); i++)
		unsetenv(session[i]);
	signal(SIGPIPE, SIG_IGN);
}

static json_object *keeper_started(json_object *spec, const char *sock, json_object *more)
{
	char *cause = NULL, *self = realpath("/proc/self/exe", NULL);
	int rc = keeper_start(self ? self : "workrex", spec, &cause);
	free(self);
	json_object *r;
	if (rc < 0) {
		r = failed(&cause, "the keeper did not start");
	} else {
		r = ok();
		json_object_object_add(r, "socket", json_object_new_string(sock));
		json_object *v;
		if (more && json_object_object_get_ex(more, "rpc_dir", &v))
			json_object_object_add(r, "rpc_dir", json_object_get(v));
	}
	free(cause);
	return r;
}

/*
 * A sandboxed agent's pane: its container there (boxed.c) around argv,
 * with the pane's environment in the container (never the link's own).
 */
static json_object *start_boxed(struct repo *repo, json_object *req, struct strlist *argv,
				struct strlist *env, const char *sock)
{
	struct strlist in = {0};
	for (size_t i = 0; i < env->n; i++)
		if (env_wanted(env->v[i]))
			strlist_add(&in, env->v[i]);
	char **av = strlist_argv(argv), **ev = strlist_argv(&in);
	json_object *spec = json_object_new_object(), *e = json_object_new_array(), *r;
	char *cause = NULL;
	if (remote_box_start(repo, req, av, ev, spec, &cause) < 0) {
		r = failed(&cause, "its sandbox could not be made there");
	} else {
		for (size_t i = 0; i < in.n; i++)
			json_object_array_add(e, json_object_new_string(in.v[i]));
		json_object_object_add(spec, "env", json_object_get(e));
		spec_pane(spec, req, sock);
		r = keeper_started(spec, sock, spec);
	}
	json_object_put(e);
	json_object_put(spec);
	free(av);
	free(ev);
	strlist_free(&in);
	return r;
}

static json_object *op_start(json_object *req, const struct payload *p)
{
	char *cause = NULL;
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	char *dir = repo ? keeper_dir(repo_root(repo), &cause) : NULL;
	int pane = json_int(req, "pane", 0);
	char *sock = dir && pane > 0 ? keeper_path(dir, pane, &cause) : NULL;
	char *rpc = sock ? rpc_socket(req, &cause) : NULL;
	struct strlist argv = {0}, env = {0};
	json_object *r = NULL;
	if (rpc == NULL) {
		r = failed(&cause, "no pane");
	} else if (!strings(req, "argv", &argv) || argv.n == 0 || !strings(req, "env", &env)) {
		r = fail("start needs argv and env, lists of strings");
	} else if (json_str(req, "cwd") == NULL || json_str(req, "cwd")[0] != '/') {
		r = fail("start needs the worktree (cwd)");
	} else {
		int fd = rpc_connect_unix(sock, &cause);
		if (fd >= 0) {
			close(fd);
			r = fail("pane %d runs there already", pane);
		}
	}
	free(cause);
	cause = NULL;
	json_object *sb = NULL;
	if (r == NULL && json_object_object_get_ex(req, "sandbox", &sb) && sb)
		r = start_boxed(repo, req, &argv, &env, sock);
	if (r == NULL) {
		json_object *spec = json_object_new_object(), *a = json_object_new_array(),
			    *e = json_object_new_array();
		for (size_t i = 0; i < argv.n; i++)
			json_object_array_add(a, json_object_new_string(argv.v[i]));
		for (size_t i = 0; i < env.n; i++)
			if (env_wanted(env.v[i]))
				json_object_array_add(e, json_object_new_string(env.v[i]));
		char *v = xasprintf("WORKREX_RPC_SOCKET=%s", rpc);
		json_object_array_add(e, json_object_new_string(v));
		free(v);
		/*
		 * While no dashboard is attached (the link down, or none runs),
		 * an agent pane's keeper answers on a socket of its own, for
		 * this pane's token, and keeps its status for the next one
		 * (keeper.c); as here (runner.c), the agent's other panes do not.
		 */
		char *kept = json_flag(req, "agent_pane") ? keeper_beside(sock, "rpc") : NULL;
		if (kept) {
			v = xasprintf("WORKREX_RPC_KEEPER=%s", kept);
			json_object_array_add(e, json_object_new_string(v));
			free(v);
			json_object_object_add(spec, "rpc_socket", json_object_new_string(kept));
			free(kept);
		}
		/* This build first on PATH: the pane's `workrex set-status` is the one here. */
		char *self = realpath("/proc/self/exe", NULL),
		     *bin = self ? path_parent(self) : NULL;
		const char *path = getenv("PATH");
		v = xasprintf("PATH=%s%s%s", bin ? bin : "", path ? ":" : "", path ? path : "");
		json_object_array_add(e, json_object_new_string(v));
		free(v);
		/* For a login shell's command line, whose profile may set PATH anew. */
		v = xasprintf("WORKREX_BIN=%s", bin ? bin : "");
		json_object_array_add(e, json_object_new_string(v));
		free(v);
		json_object_object_add(spec, "argv", a);
		json_object_object_add(spec, "env", e);
		spec_pane(spec, req, sock);
		r = keeper_started(spec, sock, NULL);
		json_object_put(spec);
		free(self);
		free(bin);
	}
	strlist_free(&argv);
	strlist_free(&env);
	free(rpc);
	free(sock);
	free(dir);
	repo_free(repo);
	return r;
}

static json_object *op_import(json_object *req, const struct payload *p)
{
	char *cause = NULL;
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	json_object *r = repo ? remote_box_import(repo, req, &cause) : NULL;
	repo_free(repo);
	return r ? r : failed(&cause, "no clone");
}

static json_object *op_status(json_object *req, const struct payload *p)
{
	const char *wt = json_str(req, "cwd");
	struct stat st;
	if (wt == NULL || wt[0] != '/')
		return fail("status needs the worktree (cwd)");
	json_object *r;
	bool dirty = false;
	char *cause = NULL;
	if (lstat(wt, &st) < 0) {
		r = ok();
		json_object_object_add(r, "gone", json_object_new_boolean(1));
	} else if (repo_dirty(wt, NULL, &dirty, &cause) < 0) {
		r = failed(&cause, "git status failed");
	} else {
		r = ok();
		json_object_object_add(r, "dirty", json_object_new_boolean(dirty));
	}
	free(cause);
	return r;
}

/*
 * End the clone's keepers of handle (any, when NULL) or of the panes
 * listed: SIGTERM to each, as its own hello names it, then until their
 * sockets are gone (bounded). How many.
 */
static int end_keepers(const char *root, const char *handle, json_object *panes)
{
	char *cause = NULL, *dir = keeper_dir(root, &cause);
	free(cause);
	struct keeper_entry *e = NULL;
	size_t n = dir ? keeper_list(dir, &e) : 0;
	free(dir);
	int ended = 0;
	for (size_t i = 0; i < n; i++) {
		bool mine = handle && e[i].info.handle && strcmp(e[i].info.handle, handle) == 0;
		for (size_t k = 0; panes && k < json_object_array_length(panes); k++)
			mine |= json_object_get_int(json_object_array_get_idx(panes, k)) ==
				e[i].info.pane;
		if (!mine || e[i].info.keeper_pid <= 0 || kill(e[i].info.keeper_pid, SIGTERM) < 0) {
			e[i].path[0] = '\0';
			continue;
		}
		ended++;
	}
	uint64_t deadline = now_ms() + 5000;
	for (size_t i = 0; i < n; i++)
		while (e[i].path[0] && access(e[i].path, F_OK) == 0 && now_ms() < deadline)
			usleep(20000);
	keeper_list_free(e, n);
	return ended;
}

static json_object *op_kill(json_object *req, const struct payload *p)
{
	char *cause = NULL;
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	json_object *panes;
	if (repo == NULL || !json_object_object_get_ex(req, "panes", &panes) ||
	    !json_object_is_type(panes, json_type_array)) {
		repo_free(repo);
		return failed(&cause, "kill needs panes");
	}
	json_object *r = ok();
	json_object_object_add(r, "ended",
			       json_object_new_int(end_keepers(repo_root(repo), NULL, panes)));
	repo_free(repo);
	return r;
}

static json_object *op_remove(json_object *req, const struct payload *p)
{
	char *cause = NULL;
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	const char *handle = json_str(req, "handle");
	if (repo == NULL || handle == NULL || !handle_valid(handle)) {
		repo_free(repo);
		return failed(&cause, "remove needs a handle");
	}
	end_keepers(repo_root(repo), handle, NULL);
	struct agent_rec a;
	json_object *r;
	if (agent_find(repo, handle, NULL, &a, &cause) < 0) {
		/* Gone there already (removed by hand): nothing left to do. */
		r = ok();
		json_object_object_add(r, "gone", json_object_new_boolean(1));
	} else {
		struct config c;
		config_init(&c);
		strings(req, "pre_remove", &c.pre_remove);
		struct remove_opts o = {.force = true,
					.keep_branch = json_flag(req, "keep_branch"),
					.run_hooks = json_flag(req, "run_hooks")};
		free(cause);
		cause = NULL;
		r = worktree_remove(repo, &c, &a, &o, &cause) < 0
			    ? failed(&cause, "the worktree was not removed")
			    : ok();
		config_free(&c);
		agent_rec_free(&a);
	}
	free(cause);
	repo_free(repo);
	return r;
}

/* An image for the agent: staged in its worktree here, as a paste would be on the user's machine. */
static json_object *op_paste(json_object *req, const struct payload *p)
{
	char *cause = NULL, *path = NULL;
	struct repo *repo = clone_at(json_str(req, "path"), &cause);
	const char *handle = json_str(req, "handle");
	const char *kind = image_kind(p->data, p->len);
	struct agent_rec a = {0};
	json_object *r = NULL;
	if (repo == NULL || handle == NULL || !handle_valid(handle))
		r = failed(&cause, "paste needs a handle");
	else if (kind == NULL)
		r = fail("what came is not an image (PNG, JPEG, GIF, WebP)");
	else if (agent_find(repo, handle, NULL, &a, &cause) < 0)
		r = fail("no agent '%s' there", handle);
	if (r == NULL) {
		int rc = image_stage(a.path, p->data, p->len, kind, &path);
		if (rc < 0) {
			r = fail("%s/.workrex/tmp: %s", a.path, strerror(-rc));
		} else {
			r = ok();
			json_object_object_add(r, "path", json_object_new_string(path));
		}
	}
	free(path);
	free(cause);
	agent_rec_free(&a);
	repo_free(repo);
	return r;
}

static const struct {
	const char *name;
	json_object *(*fn)(json_object *req, const struct payload *p);
} ops[] = {
	{"hello", op_hello}, {"prepare", op_prepare}, {"add", op_add},
	{"start", op_start}, {"status", op_status},   {"remove", op_remove},
	{"kill", op_kill},   {"paste", op_paste},     {"import", op_import},
};

json_object *remote_op(json_object *req, const void *data, size_t n)
{
	const struct payload p = {data, n};
	const char *op = req ? json_str(req, "op") : NULL;
	if (req == NULL || !json_object_is_type(req, json_type_object))
		return fail("the request is not a JSON object");
	if (json_int(req, "version", 0) != LINK_VERSION)
		return fail("this workrex speaks version %d of the link, not %d", LINK_VERSION,
			    json_int(req, "version", 0));
	for (size_t i = 0; op && i < WRX_ARRAY_LEN(ops); i++)
		if (strcmp(ops[i].name, op) == 0)
			return ops[i].fn(req, &p);
	return fail("no op '%s'", op ? op : "");
}

int remote_serve(void)
{
	/* Where the sockets are: not under $XDG_RUNTIME_DIR, which logind removes (server.h). */
	char *own = xasprintf("/tmp/workrex-%ld", (long)getuid());
	setenv("WORKREX_RUNTIME_DIR", own, 0);
	free(own);
	git_lib_init();
	struct buf in = {0};
	char chunk[65536];
	ssize_t n;
	bool over = false;
	while (!over && (n = read(STDIN_FILENO, chunk, sizeof chunk)) > 0) {
		over = in.len + (size_t)n > REQUEST_MAX;
		buf_add(&in, chunk, over ? 0 : (size_t)n);
	}
	/* The request's line; the rest, if any, is its data. */
	char *nl = in.len ? memchr(in.data, '\n', in.len) : NULL;
	if (nl)
		*nl = '\0';
	json_object *req = in.len && !over ? json_tokener_parse(in.data) : NULL;
	json_object *r = over ? fail("the request is over %u MiB", REQUEST_MAX >> 20)
			      : remote_op(req, nl ? nl + 1 : NULL,
					  nl ? in.len - (size_t)(nl + 1 - in.data) : 0);
	buf_free(&in);
	printf("%s\n", json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(r);
	json_object_put(req);
	return 0;
}
