/*
 * devcontainer.c - the "devcontainer" backend's plan: what a project's
 * .devcontainer/devcontainer.json adds to a container pane, taken where
 * workrex's rules allow it and refused, with the reason, where they do not.
 *
 * The dev container CLI reads the file (JSON with comments, its variables,
 * the image's devcontainer.metadata from features already built merged in)
 * and builds its image, in `workrex add` (cmd_devcontainer.c), never on the
 * dashboard's loop. It does not run the container: `devcontainer up` would
 * start it with its own flags (the workspace's .git writable, the host's
 * network). The pane's container is the container backend's, with the
 * git boundary, the empty HOME and the network policy as always; from the
 * file it gets only:
 *
 *   image          the file's, or the one the CLI built from it
 *   containerEnv,  set, but for names workrex sets itself (HOME, PATH,
 *   remoteEnv      WORKREX_*, GIT_CONFIG_*, the proxy variables)
 *   mounts         a bind of the project's own files (read-only), a volume
 *                  (the agent's own: wrx-<hash>-NAME), a tmpfs; a bind of
 *                  anything outside the project is refused
 *   capAdd,        as sandbox.container.cap_add: ALL and SYS_ADMIN refused
 *   --cap-add
 *   --shm-size     the one other runArgs flag taken; every other is refused
 *   on/update/post-Create, postStart, postAttach commands
 *                  run in order in the pane's container before the agent
 *
 * privileged and securityOpt are refused; workspaceMount, workspaceFolder,
 * remoteUser, containerUser, forwardPorts, appPort and initializeCommand
 * (which would run on the host) are left out with a note: the worktree is
 * mounted at its own path and the agent runs as the user, as in any sandbox.
 */
#include "backend.h"

#include "../util/beneath.h"
#include "../util/util.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PLAN_FILE "devcontainer.json"

char *devc_image_name(const char *project_root)
{
	return xasprintf("localhost/wrx-devc-%08x:latest", str_hash(WRX_HASH_INIT, project_root));
}

char *devc_volume_prefix(const char *project_root, const char *handle)
{
	char real[PATH_MAX];
	const char *root = realpath(project_root, real) ? real : project_root;
	return xasprintf("wrx-%08x-", str_hash(str_hash(WRX_HASH_INIT, root), handle));
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool env_name_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* Names the sandbox sets itself: the file's value would undo the boundary or the proxy. */
static bool env_ours(const char *name)
{
	static const char *const ours[] = {"HOME",
					   "PATH",
					   "IS_SANDBOX",
					   "NO_PROXY",
					   "no_proxy",
					   "NODE_USE_ENV_PROXY",
					   BACKEND_PROXY_VARS};
	for (size_t i = 0; i < WRX_ARRAY_LEN(ours); i++)
		if (strcmp(name, ours[i]) == 0)
			return true;
	return strncmp(name, "WORKREX_", 8) == 0 || strncmp(name, "GIT_CONFIG", 10) == 0;
}

static void take_env(struct devc_plan *p, json_object *obj, const char *key)
{
	if (!json_object_is_type(obj, json_type_object))
		return;
	json_object_object_foreach(obj, name, v)
	{
		const char *val = json_object_get_string(v);
		if (!env_name_ok(name) || env_ours(name)) {
			char *n = xasprintf("%s.%s: left out (workrex sets it in a sandbox)", key,
					    name);
			strlist_add(&p->notes, n);
			free(n);
		} else if (val && strstr(val, "${containerEnv:")) {
			char *n = xasprintf("%s.%s: left out (${containerEnv:...} is resolved only "
					    "by `devcontainer up`)",
					    key, name);
			strlist_add(&p->notes, n);
			free(n);
		} else {
			char *e = xasprintf("%s=%s", name, val ? val : "");
			strlist_add(&p->env, e);
			free(e);
		}
	}
}

static int cap_ok(const char *cap, const char *from, char **cause)
{
	const char *c = strncasecmp(cap, "CAP_", 4) == 0 ? cap + 4 : cap;
	if (strcasecmp(c, "ALL") == 0 || strcasecmp(c, "SYS_ADMIN") == 0) {
		*cause = xasprintf("devcontainer.json: %s %s would let the agent out of its "
				   "container; refused",
				   from, cap);
		return -EPERM;
	}
	for (const char *s = c; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_') {
			*cause = xasprintf("devcontainer.json: %s '%s' is not a capability", from,
					   cap);
			return -EINVAL;
		}
	return 0;
}

/* runArgs: --cap-add and --shm-size, each "--x=v" or "--x v"; anything else refused. */
static int take_run_args(struct devc_plan *p, json_object *args, char **cause)
{
	size_t n = json_object_is_type(args, json_type_array) ? json_object_array_length(args) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(args, i));
		a = a ? a : "";
		const char *flags[] = {"--cap-add", "--shm-size"}, *val = NULL;
		size_t f = 0;
		for (; f < WRX_ARRAY_LEN(flags); f++) {
			size_t len = strlen(flags[f]);
			if (strncmp(a, flags[f], len) == 0 && a[len] == '=')
				val = a + len + 1;
			else if (strcmp(a, flags[f]) == 0 && i + 1 < n)
				val = json_object_get_string(json_object_array_get_idx(args, ++i));
			if (val)
				break;
		}
		if (val == NULL) {
			*cause = xasprintf(
				"devcontainer.json: runArgs '%s' passes the engine a flag "
				"workrex sets itself (network, mounts, privileges); "
				"refused. Only --cap-add and --shm-size are taken; the "
				"user's own go in sandbox.container (global config)",
				a);
			return -EPERM;
		}
		if (f == 0) {
			if (cap_ok(val, "runArgs --cap-add", cause) < 0)
				return -EPERM;
			strlist_add(&p->caps, val);
		} else {
			free(p->shm_size);
			p->shm_size = xstrdup(val);
		}
	}
	return 0;
}

/* "source=X,target=Y,type=bind,readonly" (or src, dst, destination, ro) into m. */
static int mount_string(const char *s, struct devc_mount *m, char **type, char **cause)
{
	char *copy = xstrdup(s), *save = NULL;
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		char *val = eq ? eq + 1 : NULL;
		if (eq)
			*eq = '\0';
		char **slot =
			!strcmp(kv, "source") || !strcmp(kv, "src") ? &m->source
			: !strcmp(kv, "target") || !strcmp(kv, "dst") || !strcmp(kv, "destination")
				? &m->target
			: !strcmp(kv, "type") ? type
					      : NULL;
		if (slot && val) {
			free(*slot);
			*slot = xstrdup(val);
		} else if (strcmp(kv, "readonly") && strcmp(kv, "ro") &&
			   strcmp(kv, "consistency")) {
			*cause = xasprintf(
				"devcontainer.json: mount option '%s' in \"%s\" is not one "
				"workrex passes; refused",
				kv, s);
			free(copy);
			return -EPERM;
		}
	}
	free(copy);
	return 0;
}

static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool volume_name_ok(const char *s)
{
	if (!isalnum((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

/* One entry of mounts, checked; into p->mounts. */
static int take_mount(struct devc_plan *p, json_object *e, const char *root, const char *handle,
		      char **cause)
{
	struct devc_mount m = {0};
	char *type = NULL;
	int rc = 0;
	if (json_object_is_type(e, json_type_string)) {
		rc = mount_string(json_object_get_string(e), &m, &type, cause);
	} else if (json_object_is_type(e, json_type_object)) {
		const char *s = json_object_get_string(get(e, "source")),
			   *t = json_object_get_string(get(e, "target")),
			   *ty = json_object_get_string(get(e, "type"));
		m.source = s ? xstrdup(s) : NULL;
		m.target = t ? xstrdup(t) : NULL;
		type = ty ? xstrdup(ty) : NULL;
	}
	const char *what = json_object_to_json_string_ext(
		e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (rc == 0 && (m.target == NULL || m.target[0] != '/' || strchr(m.target, ','))) {
		*cause = xasprintf("devcontainer.json: mount %s has no absolute target workrex can "
				   "mount",
				   what);
		rc = -EINVAL;
	}
	char real[PATH_MAX];
	if (rc < 0) {
	} else if (type == NULL || strcmp(type, "bind") == 0) {
		const char *src = m.source && realpath(m.source, real) ? real : m.source;
		if (src == NULL || src[0] != '/' || !within(src, root) ||
		    backend_holds_engine_socket(src) || strchr(src, ',')) {
			*cause = xasprintf(
				"devcontainer.json: mount %s binds %s, outside the project; "
				"refused: a repository's dev container may mount only its own "
				"files (host paths of your own go in sandbox.extra_mounts, in "
				"the global config)",
				what, m.source ? m.source : "nothing");
			rc = -EPERM;
		} else {
			free(m.source);
			m.source = xstrdup(src);
			m.type = 'b';
		}
	} else if (strcmp(type, "volume") == 0) {
		if (m.source == NULL || !volume_name_ok(m.source)) {
			*cause = xasprintf(
				"devcontainer.json: mount %s: a volume needs a plain name", what);
			rc = -EINVAL;
		} else {
			char *prefix = devc_volume_prefix(root, handle);
			char *own = xasprintf("%s%s", prefix, m.source);
			free(prefix);
			free(m.source);
			m.source = own;
			m.type = 'v';
		}
	} else if (strcmp(type, "tmpfs") == 0) {
		free(m.source);
		m.source = NULL;
		m.type = 't';
	} else {
		*cause = xasprintf("devcontainer.json: mount %s: type %s is not one workrex mounts",
				   what, type);
		rc = -EPERM;
	}
	free(type);
	if (rc < 0) {
		free(m.source);
		free(m.target);
		return rc;
	}
	p->mounts = xrealloc(p->mounts, (p->nmounts + 1) * sizeof *p->mounts);
	p->mounts[p->nmounts++] = m;
	return 0;
}

/* A lifecycle command (a string for sh, an argv, or named ones) as one sh line. */
static char *command_line(json_object *c)
{
	if (json_object_is_type(c, json_type_string))
		return xstrdup(json_object_get_string(c));
	struct buf b = {0};
	if (json_object_is_type(c, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(c); i++) {
			char *q = sh_quote(json_object_get_string(json_object_array_get_idx(c, i)));
			buf_addf(&b, "%s%s", i ? " " : "", q);
			free(q);
		}
	} else if (json_object_is_type(c, json_type_object)) {
		/* Named commands (run in parallel by the CLI): here one after another. */
		json_object_object_foreach(c, name, v)
		{
			(void)name;
			char *line = command_line(v);
			buf_addf(&b, "%s{ %s\n}", b.len ? " && " : "", line);
			free(line);
		}
	}
	if (b.len == 0)
		buf_free(&b);
	return b.data;
}

static void take_commands(struct devc_plan *p, json_object *merged)
{
	static const char *const stages[] = {"onCreateCommands", "updateContentCommands",
					     "postCreateCommands", "postStartCommands",
					     "postAttachCommands"};
	for (size_t s = 0; s < WRX_ARRAY_LEN(stages); s++) {
		json_object *list = get(merged, stages[s]);
		size_t n = json_object_is_type(list, json_type_array)
				   ? json_object_array_length(list)
				   : 0;
		for (size_t i = 0; i < n; i++) {
			char *line = command_line(json_object_array_get_idx(list, i));
			if (line && *line)
				strlist_add(&p->script, line);
			free(line);
		}
	}
}

static void note_left_out(struct devc_plan *p, json_object *merged)
{
	static const struct {
		const char *key, *why;
	} keys[] = {
		{"workspaceMount", "the agent's worktree is mounted at its own path"},
		{"workspaceFolder", "the agent starts in its worktree"},
		{"remoteUser", "the agent runs as you: its worktree's files stay yours"},
		{"containerUser", "the agent runs as you"},
		{"forwardPorts", "not forwarded"},
		{"appPort", "not published"},
		{"initializeCommand", "it would run on this host; workrex does not run it"},
		{"dockerComposeFile", "one container per pane; compose is not used"},
	};
	for (size_t i = 0; i < WRX_ARRAY_LEN(keys); i++) {
		json_object *v = get(merged, keys[i].key);
		if (v && !(json_object_is_type(v, json_type_array) &&
			   json_object_array_length(v) == 0)) {
			char *n = xasprintf("%s: left out (%s)", keys[i].key, keys[i].why);
			strlist_add(&p->notes, n);
			free(n);
		}
	}
}

int devc_plan_parse(json_object *kept, const char *project_root, const char *handle,
		    struct devc_plan *out, char **cause)
{
	memset(out, 0, sizeof *out);
	json_object *merged = get(kept, "merged");
	const char *image = json_object_get_string(get(kept, "image")),
		   *path = json_object_get_string(get(kept, "path"));
	if (image == NULL || !json_object_is_type(merged, json_type_object)) {
		*cause = xstrdup("devcontainer.json: no image to run (set \"image\", or \"build\" "
				 "with a Dockerfile)");
		return -EINVAL;
	}
	out->image = xstrdup(image);
	out->path = path ? xstrdup(path) : NULL;
	char real[PATH_MAX];
	const char *root = realpath(project_root, real) ? real : project_root;
	int rc = 0;
	json_object *v = get(merged, "privileged");
	if (v && json_object_get_boolean(v)) {
		*cause =
			xstrdup("devcontainer.json: \"privileged\": true gives the agent the host; "
				"refused");
		rc = -EPERM;
	}
	v = get(merged, "securityOpt");
	if (rc == 0 && json_object_is_type(v, json_type_array) && json_object_array_length(v)) {
		*cause = xasprintf(
			"devcontainer.json: securityOpt %s would loosen the sandbox's "
			"confinement; refused (yours go in "
			"sandbox.container.security_opt)",
			json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
		rc = -EPERM;
	}
	v = get(merged, "capAdd");
	for (size_t i = 0;
	     rc == 0 && json_object_is_type(v, json_type_array) && i < json_object_array_length(v);
	     i++) {
		const char *cap = json_object_get_string(json_object_array_get_idx(v, i));
		if ((rc = cap_ok(cap ? cap : "", "capAdd", cause)) == 0)
			strlist_add(&out->caps, cap);
	}
	if (rc == 0)
		rc = take_run_args(out, get(merged, "runArgs"), cause);
	v = get(merged, "mounts");
	for (size_t i = 0;
	     rc == 0 && json_object_is_type(v, json_type_array) && i < json_object_array_length(v);
	     i++)
		rc = take_mount(out, json_object_array_get_idx(v, i), root, handle, cause);
	if (rc < 0) {
		devc_plan_free(out);
		return rc;
	}
	take_env(out, get(merged, "containerEnv"), "containerEnv");
	take_env(out, get(merged, "remoteEnv"), "remoteEnv");
	take_commands(out, merged);
	note_left_out(out, merged);
	return 0;
}

void devc_plan_free(struct devc_plan *p)
{
	free(p->image);
	free(p->path);
	free(p->shm_size);
	strlist_free(&p->env);
	strlist_free(&p->caps);
	strlist_free(&p->script);
	strlist_free(&p->notes);
	for (size_t i = 0; i < p->nmounts; i++) {
		free(p->mounts[i].source);
		free(p->mounts[i].target);
	}
	free(p->mounts);
	memset(p, 0, sizeof *p);
}

int devc_plan_load(const char *project_root, const char *handle, struct devc_plan *out,
		   char **cause)
{
	memset(out, 0, sizeof *out);
	char *dir = private_agent_dir(project_root, handle, false), *text = NULL;
	int rc = dir ? beneath_read(dir, PLAN_FILE, 1u << 20, &text) : -ENOENT;
	free(dir);
	if (rc < 0) {
		*cause = xasprintf("%s has no dev container made for it (workrex add makes it; "
				   "`workrex sandbox devcontainer %s` makes it again)",
				   handle, handle);
		return rc;
	}
	json_object *kept = json_tokener_parse(text);
	free(text);
	rc = devc_plan_parse(kept, project_root, handle, out, cause);
	json_object_put(kept);
	return rc;
}

int devc_plan_save(const char *project_root, const char *handle, json_object *kept, char **cause)
{
	char *dir = private_agent_dir(project_root, handle, true);
	const char *text = json_object_to_json_string_ext(
		kept, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	int rc = dir ? beneath_write(dir, PLAN_FILE, text, strlen(text), 0600) : -EIO;
	if (rc < 0)
		*cause = xasprintf("%s: keeping its dev container's plan: %s", handle,
				   strerror(-rc));
	free(dir);
	return rc;
}
