/*
 * config.c - libyaml document walk into struct config.
 *
 * The whole file is loaded as a libyaml document (files are small), then
 * walked with a table of known keys. Values are checked where they are read
 * so errors point at the offending node.
 */
#include "config.h"
#include "trust.h"

#include "keys.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

struct walk {
	struct config *c;
	yaml_document_t *doc;
	const char *path;
	bool global;
	bool untrusted; /* a project file the user has not trusted: its commands are ignored */
	char *err;      /* first error; owned */
};

static void warn(struct walk *w, yaml_node_t *n, const char *fmt, const char *arg)
{
	char *msg = xasprintf(fmt, arg);
	char *line = xasprintf("%s:%zu: %s", w->path, n->start_mark.line + 1, msg);
	free(msg);
	w->c->warnings = xrealloc(w->c->warnings, (w->c->nwarnings + 1) * sizeof(char *));
	w->c->warnings[w->c->nwarnings++] = line;
}

/* An error; the walk goes on, so that one run names them all (one a line). */
static void fail(struct walk *w, yaml_node_t *n, const char *fmt, const char *arg)
{
	char *msg = xasprintf(fmt, arg);
	char *line = xasprintf("%s%s%s:%zu:%zu: %s", w->err ? w->err : "", w->err ? "\n" : "",
			       w->path, n->start_mark.line + 1, n->start_mark.column + 1, msg);
	free(msg);
	free(w->err);
	w->err = line;
}

/* A plain null, ~ or nothing: the key is left at its default (as the reference shows it). */
static bool is_null(yaml_node_t *n)
{
	if (n == NULL || n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *v = (const char *)n->data.scalar.value;
	return !strcmp(v, "") || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE && !is_null(n) ? (const char *)n->data.scalar.value
							       : NULL;
}

static bool want_scalar(struct walk *w, yaml_node_t *n, const char *key)
{
	if (scalar(n))
		return true;
	if (is_null(n))
		return false;
	fail(w, n, "%s must be a single value", key);
	return false;
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

void strlist_add(struct strlist *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = xstrdup(s);
}

void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/*
 * A list of strings (a single string counts as a list of one). In a project
 * file "<global>" stands for the list as the global file left it.
 */
static void read_strlist(struct walk *w, yaml_node_t *n, const char *key, struct strlist *dst)
{
	struct strlist out = {0};
	if (is_null(n))
		return;
	if (scalar(n)) {
		if (*scalar(n))
			strlist_add(&out, scalar(n));
	} else if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			yaml_node_t *v = yaml_document_get_node(w->doc, *it);
			if (!scalar(v)) {
				fail(w, v, "%s: each item must be a single value", key);
				strlist_free(&out);
				return;
			}
			if (strcmp(scalar(v), "<global>") == 0) {
				for (size_t i = 0; i < dst->n; i++)
					strlist_add(&out, dst->v[i]);
				continue;
			}
			strlist_add(&out, scalar(v));
		}
	} else {
		fail(w, n, "%s must be a list", key);
		return;
	}
	strlist_free(dst);
	*dst = out;
}

static bool read_bool(struct walk *w, yaml_node_t *n, const char *key, bool *out)
{
	const char *v = scalar(n);
	if (is_null(n))
		return false;
	if (v && (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))) {
		*out = true;
		return true;
	}
	if (v && (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off"))) {
		*out = false;
		return true;
	}
	fail(w, n, "%s must be true or false", key);
	return false;
}

static void read_choice(struct walk *w, yaml_node_t *n, const char *key, const char *const *ok,
			char **dst)
{
	if (!want_scalar(w, n, key))
		return;
	for (const char *const *o = ok; *o; o++) {
		if (strcmp(scalar(n), *o) == 0) {
			set_str(dst, scalar(n));
			return;
		}
	}
	struct buf choices = {0};
	for (const char *const *o = ok; *o; o++)
		buf_addf(&choices, "%s%s", o == ok ? "" : ", ", *o);
	char *msg = xasprintf("%s: '%%s' is not one of %s", key, choices.data);
	fail(w, n, msg, scalar(n));
	free(msg);
	buf_free(&choices);
}

static void read_agents(struct walk *w, yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping of name: {command, args, env}", "agents");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		if (!want_scalar(w, k, "an agent name"))
			return;
		struct agent_def d = {.name = xstrdup(scalar(k))};
		if (scalar(v)) {
			d.command = xstrdup(scalar(v));
		} else if (v->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     q < v->data.mapping.pairs.top; q++) {
				yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
				yaml_node_t *qv = yaml_document_get_node(w->doc, q->value);
				const char *name = scalar(qk) ? scalar(qk) : "?";
				if (!strcmp(name, "command") &&
				    want_scalar(w, qv, "agents.*.command")) {
					set_str(&d.command, scalar(qv));
				} else if (!strcmp(name, "args")) {
					read_strlist(w, qv, "agents.*.args", &d.args);
				} else if (!strcmp(name, "env") && qv->type == YAML_MAPPING_NODE) {
					for (yaml_node_pair_t *e = qv->data.mapping.pairs.start;
					     e < qv->data.mapping.pairs.top; e++) {
						const char *ek = scalar(
							yaml_document_get_node(w->doc, e->key));
						const char *ev = scalar(
							yaml_document_get_node(w->doc, e->value));
						if (ek && ev) {
							char *kv = xasprintf("%s=%s", ek, ev);
							strlist_add(&d.env, kv);
							free(kv);
						}
					}
				} else {
					warn(w, qk, "unknown key 'agents.*.%s'", name);
				}
			}
		} else {
			fail(w, v, "%s must be a command or a mapping", "an agent");
		}
		if (d.command == NULL)
			d.command = xstrdup(d.name);
		w->c->agents = xrealloc(w->c->agents, (w->c->nagents + 1) * sizeof *w->c->agents);
		w->c->agents[w->c->nagents++] = d;
	}
}

static void free_panes(struct config *c)
{
	for (size_t i = 0; i < c->npanes; i++)
		free(c->panes[i].command);
	free(c->panes);
	c->panes = NULL;
	c->npanes = 0;
}

static void read_panes(struct walk *w, yaml_node_t *n)
{
	if (n->type != YAML_SEQUENCE_NODE) {
		fail(w, n, "%s must be a list of {command, split, size|percentage, focus}",
		     "panes");
		return;
	}
	free_panes(w->c);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(w->doc, *it);
		struct pane_def d = {0};
		if (scalar(v)) {
			d.command = xstrdup(scalar(v));
		} else if (v->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     q < v->data.mapping.pairs.top; q++) {
				yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
				yaml_node_t *qv = yaml_document_get_node(w->doc, q->value);
				const char *name = scalar(qk) ? scalar(qk) : "?";
				const char *val = scalar(qv);
				if (!strcmp(name, "command") &&
				    want_scalar(w, qv, "panes.command")) {
					set_str(&d.command, val);
				} else if (!strcmp(name, "split") &&
					   want_scalar(w, qv, "panes.split")) {
					if (strcmp(val, "horizontal") && strcmp(val, "vertical"))
						fail(w, qv,
						     "panes.split must be horizontal or vertical, "
						     "not '%s'",
						     val);
					d.vertical = !strcmp(val, "vertical");
				} else if ((!strcmp(name, "percentage") || !strcmp(name, "size")) &&
					   want_scalar(w, qv, "panes.percentage")) {
					char *end;
					long pc = strtol(val, &end, 10);
					if (*end || pc < 1 || pc > 99)
						fail(w, qv,
						     "panes.percentage must be 1 to 99, not '%s'",
						     val);
					d.percentage = (int)pc;
				} else if (!strcmp(name, "focus")) {
					read_bool(w, qv, "panes.focus", &d.focus);
				} else {
					warn(w, qk, "unknown key 'panes.%s'", name);
				}
			}
		} else {
			fail(w, v, "%s must be a command or a mapping", "a pane");
		}
		if (d.command == NULL)
			d.command = xstrdup("<agent>");
		w->c->panes = xrealloc(w->c->panes, (w->c->npanes + 1) * sizeof *w->c->panes);
		w->c->panes[w->c->npanes++] = d;
	}
}

static void read_files(struct walk *w, yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping with copy and symlink", "files");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar(k) ? scalar(k) : "?";
		if (!strcmp(name, "copy"))
			read_strlist(w, v, "files.copy", &w->c->files_copy);
		else if (!strcmp(name, "symlink"))
			read_strlist(w, v, "files.symlink", &w->c->files_symlink);
		else
			warn(w, k, "unknown key 'files.%s'", name);
	}
}

/*
 * sandbox.*: which keys a project file may set. The rest are global-only
 * (SPEC.md section 3): a cloned repository must not widen its own sandbox.
 */
static const char *sandbox_project_ok[] = {
	"enabled", "backend", "target", "image", "container", "lima", NULL,
};
static const char *sandbox_global_only_sub[] = {
	"container.devices",
	"container.group_add",
	"container.excluded_files",
	"container.oci_runtime",
	"container.cap_add",
	"container.security_opt",
	"lima.accept_reduced_git_metadata_isolation",
	NULL,
};

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (strcmp(*l, s) == 0)
			return true;
	return false;
}

/* "~/x" against $HOME; other paths as they are. Caller frees. */
static char *expand_home(const char *p)
{
	const char *home = getenv("HOME");
	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0') && home)
		return xasprintf("%s%s", home, p + 1);
	return xstrdup(p);
}

static void read_path(struct walk *w, yaml_node_t *n, const char *key, char **dst)
{
	if (!want_scalar(w, n, key))
		return;
	char *p = expand_home(scalar(n));
	if (p[0] != '/') {
		fail(w, n, "%s must be an absolute path (or start with ~/)", key);
		free(p);
		return;
	}
	free(*dst);
	*dst = p;
}

static void read_env_map(struct walk *w, yaml_node_t *n, struct strlist *dst)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping of NAME: value", "sandbox.env");
		return;
	}
	strlist_free(dst);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		if (!scalar(k) || !scalar(v) || !*scalar(k) || strchr(scalar(k), '=')) {
			fail(w, k, "%s: each entry must be NAME: value", "sandbox.env");
			return;
		}
		char *e = xasprintf("%s=%s", scalar(k), scalar(v));
		strlist_add(dst, e);
		free(e);
	}
}

static void free_mounts(struct sandbox_config *sb)
{
	for (size_t i = 0; i < sb->nextra_mounts; i++) {
		free(sb->extra_mounts[i].host);
		free(sb->extra_mounts[i].guest);
	}
	free(sb->extra_mounts);
	sb->extra_mounts = NULL;
	sb->nextra_mounts = 0;
}

static void read_mounts(struct walk *w, yaml_node_t *n, struct sandbox_config *sb)
{
	if (n->type != YAML_SEQUENCE_NODE) {
		fail(w, n, "%s must be a list", "sandbox.extra_mounts");
		return;
	}
	free_mounts(sb);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(w->doc, *it);
		struct mount_def m = {0};
		if (scalar(v)) {
			read_path(w, v, "sandbox.extra_mounts", &m.host);
		} else if (v->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     q < v->data.mapping.pairs.top; q++) {
				yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
				yaml_node_t *qv = yaml_document_get_node(w->doc, q->value);
				const char *name = scalar(qk) ? scalar(qk) : "?";
				if (!strcmp(name, "host_path"))
					read_path(w, qv, "sandbox.extra_mounts.host_path", &m.host);
				else if (!strcmp(name, "guest_path"))
					read_path(w, qv, "sandbox.extra_mounts.guest_path",
						  &m.guest);
				else if (!strcmp(name, "writable"))
					read_bool(w, qv, "sandbox.extra_mounts.writable",
						  &m.writable);
				else
					warn(w, qk, "unknown key 'sandbox.extra_mounts.%s'", name);
			}
		} else {
			fail(w, v, "%s: each item is a path or {host_path, guest_path, writable}",
			     "sandbox.extra_mounts");
		}
		if (m.host == NULL) {
			if (v->type == YAML_MAPPING_NODE)
				fail(w, v, "%s: an item needs host_path", "sandbox.extra_mounts");
			free(m.guest);
			return;
		}
		if (m.guest == NULL)
			m.guest = xstrdup(m.host);
		sb->extra_mounts = xrealloc(sb->extra_mounts,
					    (sb->nextra_mounts + 1) * sizeof *sb->extra_mounts);
		sb->extra_mounts[sb->nextra_mounts++] = m;
	}
}

static void read_container(struct walk *w, yaml_node_t *n, struct sandbox_config *sb)
{
	static const char *const runtimes[] = {"podman", "docker", "apple-container", NULL};
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping", "sandbox.container");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar(k) ? scalar(k) : "?";
		char *full = xasprintf("container.%s", name);
		bool global_only = in_list(sandbox_global_only_sub, full);
		free(full);
		if (global_only && !w->global) {
			warn(w, k,
			     "'sandbox.container.%s' may only be set in the global config; ignored",
			     name);
			continue;
		}
		if (!strcmp(name, "runtime")) {
			read_choice(w, v, "sandbox.container.runtime", runtimes,
				    &sb->container.runtime);
		} else if (!strcmp(name, "memory") &&
			   want_scalar(w, v, "sandbox.container.memory")) {
			set_str(&sb->container.memory, scalar(v));
		} else if (!strcmp(name, "cpus") && want_scalar(w, v, "sandbox.container.cpus")) {
			set_str(&sb->container.cpus, scalar(v));
		} else if (!strcmp(name, "pids_limit") &&
			   want_scalar(w, v, "sandbox.container.pids_limit")) {
			char *end;
			long l = strtol(scalar(v), &end, 10);
			if (*end || l < 16 || l > 1000000)
				fail(w, v,
				     "sandbox.container.pids_limit must be 16..1000000, not '%s'",
				     scalar(v));
			else
				sb->container.pids_limit = l;
		} else if (!strcmp(name, "devices")) {
			read_strlist(w, v, "sandbox.container.devices", &sb->container.devices);
		} else if (!strcmp(name, "group_add")) {
			read_strlist(w, v, "sandbox.container.group_add", &sb->container.group_add);
		} else if (!strcmp(name, "excluded_files")) {
			read_strlist(w, v, "sandbox.container.excluded_files",
				     &sb->container.excluded_files);
		} else if (!strcmp(name, "cap_add")) {
			read_strlist(w, v, "sandbox.container.cap_add", &sb->container.cap_add);
		} else if (!strcmp(name, "security_opt")) {
			read_strlist(w, v, "sandbox.container.security_opt",
				     &sb->container.security_opt);
		} else if (!strcmp(name, "oci_runtime") &&
			   want_scalar(w, v, "sandbox.container.oci_runtime")) {
			set_str(&sb->container.oci_runtime, scalar(v));
		} else if (strcmp(name, "memory") && strcmp(name, "cpus") &&
			   strcmp(name, "pids_limit") && strcmp(name, "oci_runtime")) {
			warn(w, k, "unknown key 'sandbox.container.%s'", name);
		}
	}
}

/*
 * sandbox.network: the proxy that enforces "deny" is not built yet. The
 * policy is read so that a sandbox configured for deny refuses to start
 * (backends/container.c) rather than run with the network open.
 */
static void read_network(struct walk *w, yaml_node_t *n, struct sandbox_config *sb)
{
	static const char *const policies[] = {"allow", "deny", NULL};
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping", "sandbox.network");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar(k) ? scalar(k) : "?";
		if (!strcmp(name, "policy")) {
			char *policy = NULL;
			read_choice(w, v, "sandbox.network.policy", policies, &policy);
			if (policy) {
				sb->network_deny = !strcmp(policy, "deny");
				if (sb->network_deny)
					warn(w, k,
					     "'%s' is not available yet: sandboxed agents do not "
					     "start while it is set",
					     "sandbox.network.policy: deny");
			}
			free(policy);
		} else if (!strcmp(name, "allowed_domains") || !strcmp(name, "max_connections")) {
			warn(w, k, "'sandbox.network.%s' is not available yet; ignored", name);
		} else {
			warn(w, k, "unknown key 'sandbox.network.%s'", name);
		}
	}
}

static void read_sandbox(struct walk *w, yaml_node_t *n)
{
	static const char *const backends[] = {"container", "lima", NULL};
	static const char *const targets[] = {"agent", "all", NULL};
	struct sandbox_config *sb = &w->c->sandbox;
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping", "sandbox");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar(k) ? scalar(k) : "?";
		if (!w->global && !in_list(sandbox_project_ok, name)) {
			warn(w, k, "'sandbox.%s' may only be set in the global config; ignored",
			     name);
			continue;
		}
		if (!strcmp(name, "enabled")) {
			bool on;
			if (!read_bool(w, v, "sandbox.enabled", &on))
				continue;
			/* A project may ask for the sandbox, never switch the user's off. */
			if (!w->global && !on && sb->enabled)
				warn(w, k,
				     "'sandbox.%s: false' in a project cannot turn off the global "
				     "sandbox; ignored",
				     name);
			else
				sb->enabled = on;
		} else if (!strcmp(name, "backend")) {
			read_choice(w, v, "sandbox.backend", backends, &sb->backend);
			if (sb->backend && !strcmp(sb->backend, "lima"))
				warn(w, k,
				     "'%s' is not available yet: sandboxed agents do not start",
				     "sandbox.backend: lima");
		} else if (!strcmp(name, "target")) {
			read_choice(w, v, "sandbox.target", targets, &sb->target);
		} else if (!strcmp(name, "image") && want_scalar(w, v, "sandbox.image")) {
			set_str(&sb->image, scalar(v));
		} else if (!strcmp(name, "env")) {
			read_env_map(w, v, &sb->env);
		} else if (!strcmp(name, "env_passthrough")) {
			read_strlist(w, v, "sandbox.env_passthrough", &sb->env_passthrough);
		} else if (!strcmp(name, "extra_mounts")) {
			read_mounts(w, v, sb);
		} else if (!strcmp(name, "host_commands")) {
			read_strlist(w, v, "sandbox.host_commands", &sb->host_commands);
			if (sb->host_commands.n)
				warn(w, k,
				     "'%s' is not available yet: no host command is run for a "
				     "sandbox",
				     "sandbox.host_commands");
		} else if (!strcmp(name, "agent_config_dir")) {
			read_path(w, v, "sandbox.agent_config_dir", &sb->agent_config_dir);
		} else if (!strcmp(name, "rpc_host") && want_scalar(w, v, "sandbox.rpc_host")) {
			set_str(&sb->rpc_host, scalar(v));
		} else if (!strcmp(name, "container")) {
			read_container(w, v, sb);
		} else if (!strcmp(name, "network") && w->global) {
			read_network(w, v, sb);
		} else if (!strcmp(name, "lima") || !strcmp(name, "network") ||
			   !strcmp(name, "dangerously_allow_unsandboxed_host_exec")) {
			if (!w->global && v->type == YAML_MAPPING_NODE)
				for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
				     q < v->data.mapping.pairs.top; q++) {
					yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
					char *full = xasprintf("%s.%s", name,
							       scalar(qk) ? scalar(qk) : "?");
					if (in_list(sandbox_global_only_sub, full))
						warn(w, qk,
						     "'sandbox.%s' may only be set in the global "
						     "config; ignored",
						     full);
					free(full);
				}
			/* Read by the backends that use them (later). */
		} else if (strcmp(name, "image")) {
			warn(w, k, "unknown key 'sandbox.%s'", name);
		}
	}
}

static void read_scrollback(struct walk *w, yaml_node_t *n)
{
	if (!want_scalar(w, n, "scrollback"))
		return;
	char *end;
	errno = 0;
	long v = strtol(scalar(n), &end, 10);
	if (errno || *end || v < 0 || v > 1000000) {
		fail(w, n, "scrollback must be a number of lines from 0 to 1000000, not '%s'",
		     scalar(n));
		return;
	}
	w->c->scrollback = (size_t)v;
}

static void read_notify(struct walk *w, yaml_node_t *n)
{
	if (!want_scalar(w, n, "notify"))
		return;
	const char *v = scalar(n);
	if (strcmp(v, "off") && strcmp(v, "bell") && strcmp(v, "desktop") && strcmp(v, "both")) {
		fail(w, n, "notify must be off, bell, desktop or both, not '%s'", v);
		return;
	}
	set_str(&w->c->notify, v);
}

static void add_bind(struct config *c, int key, int action, int arg)
{
	for (size_t i = 0; i < c->nbinds; i++) {
		if (c->binds[i].key == key) {
			c->binds[i].action = action;
			c->binds[i].arg = arg;
			return;
		}
	}
	c->binds = xrealloc(c->binds, (c->nbinds + 1) * sizeof *c->binds);
	c->binds[c->nbinds++] = (struct config_bind){key, action, arg};
}

static void read_keys(struct walk *w, yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping", "keys");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar(k);
		if (name && strcmp(name, "prefix") == 0) {
			if (!want_scalar(w, v, "keys.prefix"))
				return;
			int key = keys_parse(scalar(v));
			if (key < 0) {
				fail(w, v, "keys.prefix: unknown key '%s' (try C-b, C-a, M-Space)",
				     scalar(v));
				return;
			}
			w->c->prefix = key;
		} else if (name && strcmp(name, "bind") == 0) {
			if (v->type != YAML_MAPPING_NODE) {
				fail(w, v, "%s must be a mapping of key: action", "keys.bind");
				return;
			}
			for (yaml_node_pair_t *b = v->data.mapping.pairs.start;
			     b < v->data.mapping.pairs.top; b++) {
				yaml_node_t *bk = yaml_document_get_node(w->doc, b->key);
				yaml_node_t *bv = yaml_document_get_node(w->doc, b->value);
				if (!want_scalar(w, bk, "a key") ||
				    !want_scalar(w, bv, "an action"))
					return;
				int key = keys_parse(scalar(bk));
				if (key < 0) {
					fail(w, bk, "keys.bind: unknown key '%s'", scalar(bk));
					return;
				}
				enum wrx_action act;
				int arg;
				if (action_parse(scalar(bv), &act, &arg) < 0) {
					fail(w, bv,
					     "keys.bind: unknown action '%s' (see workrex(1))",
					     scalar(bv));
					return;
				}
				add_bind(w->c, key, act, arg);
			}
		} else {
			warn(w, k, "unknown key 'keys.%s'", name ? name : "?");
		}
	}
}

static void read_icons(struct walk *w, yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping", "status_icons");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		enum wrx_status st;
		if (status_parse_reached(scalar(k), &st) < 0) {
			warn(w, k, "unknown key 'status_icons.%s'", scalar(k) ? scalar(k) : "?");
			continue;
		}
		if (want_scalar(w, v, "a status icon"))
			set_str(&w->c->icons[st - 1], scalar(v));
	}
}

static const char *const strategies[] = {"merge", "rebase", "squash", NULL};

/* The keys whose values the host runs as commands. */
static bool is_command_key(const char *name)
{
	static const char *const keys[] = {"agent", "panes", "post_create", "pre_merge",
					   "pre_remove"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(keys); i++)
		if (strcmp(name, keys[i]) == 0)
			return true;
	return false;
}

static void walk_root(struct walk *w, yaml_node_t *root)
{
	if (root == NULL)
		return; /* empty file */
	if (root->type != YAML_MAPPING_NODE) {
		fail(w, root, "%s", "the top level must be a mapping of settings");
		return;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = scalar(k);
		if (name == NULL) {
			fail(w, k, "%s", "setting names must be plain words");
		} else if (strcmp(name, "scrollback") == 0) {
			read_scrollback(w, v);
		} else if (strcmp(name, "notify") == 0) {
			read_notify(w, v);
		} else if (strcmp(name, "keys") == 0) {
			read_keys(w, v);
		} else if (strcmp(name, "status_icons") == 0) {
			read_icons(w, v);
		} else if (strcmp(name, "main_branch") == 0) {
			if (want_scalar(w, v, name))
				set_str(&w->c->main_branch, scalar(v));
		} else if (strcmp(name, "worktree_dir") == 0) {
			if (want_scalar(w, v, name))
				set_str(&w->c->worktree_dir, scalar(v));
		} else if (w->untrusted && is_command_key(name)) {
			warn(w, k,
			     "'%s' runs commands, and this project config is not trusted; "
			     "ignored (read it, then `workrex trust`)",
			     name);
			strlist_add(&w->c->untrusted, name);
		} else if (strcmp(name, "agent") == 0) {
			if (want_scalar(w, v, name))
				set_str(&w->c->agent, scalar(v));
		} else if (strcmp(name, "agents") == 0) {
			if (w->global)
				read_agents(w, v);
			else
				warn(w, k, "'%s' may only be set in the global config; ignored",
				     name);
		} else if (strcmp(name, "panes") == 0) {
			read_panes(w, v);
		} else if (strcmp(name, "files") == 0) {
			read_files(w, v);
		} else if (strcmp(name, "post_create") == 0) {
			read_strlist(w, v, name, &w->c->post_create);
		} else if (strcmp(name, "pre_merge") == 0) {
			read_strlist(w, v, name, &w->c->pre_merge);
		} else if (strcmp(name, "pre_remove") == 0) {
			read_strlist(w, v, name, &w->c->pre_remove);
		} else if (strcmp(name, "merge_strategy") == 0) {
			read_choice(w, v, name, strategies, &w->c->merge_strategy);
		} else if (strcmp(name, "sandbox") == 0) {
			read_sandbox(w, v);
		} else if (strcmp(name, "remote") == 0) {
			if (!w->global)
				warn(w, k, "'%s' may only be set in the global config; ignored",
				     name);
			else
				warn(w, k, "'%s' is not available yet: add --remote does not exist",
				     "remote.hosts");
		} else {
			warn(w, k, "unknown key '%s'", name);
		}
	}
}

const char *config_icon(const struct config *c, enum wrx_status st)
{
	if (st == WRX_STATUS_INTERRUPTED)
		return "\u25cb"; /* a hollow "working" */
	return st >= WRX_STATUS_WORKING && st <= WRX_STATUS_DONE ? c->icons[st - 1] : "";
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof *c);
	c->scrollback = 10000;
	c->prefix = 2; /* C-b */
	c->notify = xstrdup("bell");
	c->merge_strategy = xstrdup("merge");
	c->icons[WRX_STATUS_WORKING - 1] = xstrdup("●");
	c->icons[WRX_STATUS_WAITING - 1] = xstrdup("◆");
	c->icons[WRX_STATUS_DONE - 1] = xstrdup("✓");
	c->sandbox.backend = xstrdup("container");
	c->sandbox.target = xstrdup("agent");
	c->sandbox.container.pids_limit = 4096;
	c->sandbox.container.memory = xstrdup("8g");
}

void config_free(struct config *c)
{
	free(c->main_branch);
	free(c->worktree_dir);
	free(c->agent);
	for (size_t i = 0; i < c->nagents; i++) {
		free(c->agents[i].name);
		free(c->agents[i].command);
		strlist_free(&c->agents[i].args);
		strlist_free(&c->agents[i].env);
	}
	free(c->agents);
	free_panes(c);
	strlist_free(&c->files_copy);
	strlist_free(&c->files_symlink);
	strlist_free(&c->post_create);
	strlist_free(&c->pre_merge);
	strlist_free(&c->pre_remove);
	free(c->merge_strategy);
	free(c->binds);
	free(c->notify);
	for (int i = 0; i < 3; i++)
		free(c->icons[i]);
	struct sandbox_config *sb = &c->sandbox;
	free(sb->backend);
	free(sb->target);
	free(sb->image);
	strlist_free(&sb->env);
	strlist_free(&sb->env_passthrough);
	free_mounts(sb);
	strlist_free(&sb->host_commands);
	free(sb->agent_config_dir);
	free(sb->rpc_host);
	free(sb->container.runtime);
	free(sb->container.memory);
	free(sb->container.cpus);
	strlist_free(&sb->container.devices);
	strlist_free(&sb->container.group_add);
	strlist_free(&sb->container.excluded_files);
	strlist_free(&sb->container.cap_add);
	strlist_free(&sb->container.security_opt);
	free(sb->container.oci_runtime);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	free(c->untrusted_path);
	free(c->untrusted_text);
	strlist_free(&c->untrusted);
	memset(c, 0, sizeof *c);
}

int config_load(struct config *c, const char *path, bool global, char **err)
{
	/* Read once: what is parsed is exactly what trust was checked against. */
	char *text = NULL, *cause = NULL;
	int frc = file_read(path, 4u << 20, &text, &cause);
	if (frc < 0) {
		if (frc == -ENOENT) {
			free(cause);
			return 0;
		}
		*err = cause;
		return -1;
	}
	size_t len = strlen(text);
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		*err = xasprintf("%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
				 parser.problem_mark.column + 1,
				 parser.problem ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		free(text);
		return -1;
	}
	struct walk w = {.c = c, .doc = &doc, .path = path, .global = global};
	w.untrusted = !global && !trust_check(path, text, len);
	size_t before = c->untrusted.n;
	walk_root(&w, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (c->untrusted.n > before) {
		set_str(&c->untrusted_path, path);
		free(c->untrusted_text);
		c->untrusted_text = text;
		text = NULL;
	}
	free(text);
	if (w.err) {
		*err = w.err;
		return -1;
	}
	return 0;
}

char *config_global_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg == '/')
		return xasprintf("%s/workrex/config.yaml", xdg);
	if (home && *home)
		return xasprintf("%s/.config/workrex/config.yaml", home);
	return NULL;
}

char *config_project_path(const char *dir)
{
	char *d = xstrdup(dir);
	for (;;) {
		struct stat st;
		char *p = xasprintf("%s/.workrex.yaml", d);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			free(d);
			return p;
		}
		free(p);
		char *g = xasprintf("%s/.git", d);
		int at_root = stat(g, &st) == 0;
		free(g);
		char *slash = strrchr(d, '/');
		if (at_root || slash == NULL || slash == d)
			break;
		*slash = '\0';
	}
	free(d);
	return NULL;
}

const char *config_search_dir(const char *cwd, const char *main_root)
{
	if (main_root == NULL)
		return cwd;
	char *d = xstrdup(cwd);
	const char *out = cwd;
	for (;;) {
		struct stat st;
		char *g = xasprintf("%s/.git", d);
		int found = lstat(g, &st);
		free(g);
		if (found == 0) {
			/* A .git file: a linked worktree (an agent's), not the project's own tree. */
			if (!S_ISDIR(st.st_mode))
				out = main_root;
			break;
		}
		char *slash = strrchr(d, '/');
		if (slash == NULL || slash == d)
			break;
		*slash = '\0';
	}
	free(d);
	return out;
}

int config_load_all(struct config *c, const char *dir, const char *project_file, char **err)
{
	char *g = config_global_path();
	int rc = g ? config_load(c, g, true, err) : 0;
	free(g);
	if (rc < 0)
		return rc;
	struct stat st;
	if (project_file && stat(project_file, &st) < 0) {
		/* Named on the command line: missing is an error, not "no project file". */
		*err = xasprintf("--config %s: %s", project_file, strerror(errno));
		return -1;
	}
	char *p = project_file ? xstrdup(project_file) : config_project_path(dir);
	rc = p ? config_load(c, p, false, err) : 0;
	free(p);
	return rc;
}

int config_trust(const struct config *c, char **cause)
{
	if (c->untrusted_path == NULL)
		return 0;
	return trust_allow(c->untrusted_path, c->untrusted_text, strlen(c->untrusted_text), cause);
}

const struct agent_def *config_agent(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nagents; i++)
		if (strcmp(c->agents[i].name, name) == 0)
			return &c->agents[i];
	return NULL;
}
