/*
 * config.c - libyaml document walk into struct config.
 *
 * The whole file is loaded as a libyaml document (files are small), then
 * walked mapping by mapping: each key is looked up in the table (table.c),
 * whose row says whether this file may set it, whether it needs trust, and
 * how to read its value. Values are checked where they are read so errors
 * point at the offending node; the walk goes on after one, so that a run
 * names them all.
 */
#include "config.h"
#include "trust.h"

#include "keys.h"
#include "kinds.h"
#include "table.h"
#include "../util/util.h"

#include <ctype.h>
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
	const char *text; /* the file's */
	bool global;
	bool untrusted; /* a project file the user has not trusted: its commands are ignored */
	char *err;      /* every error, a line each; owned */
	int nerr;
};

static void warn(struct walk *w, yaml_node_t *n, const char *fmt, const char *arg)
{
	char *msg = xasprintf(fmt, arg);
	char *line = xasprintf("%s:%zu: %s", w->path, n->start_mark.line + 1, msg);
	free(msg);
	w->c->warnings = xrealloc(w->c->warnings, (w->c->nwarnings + 1) * sizeof(char *));
	w->c->warnings[w->c->nwarnings++] = line;
}

bool config_size_ok(const char *s)
{
	char *end;
	if (s == NULL || !isdigit((unsigned char)*s) || strtod(s, &end) <= 0)
		return false;
	return !strcmp(end, "GiB") || !strcmp(end, "MiB") || !strcmp(end, "TiB") ||
	       !strcmp(end, "G") || !strcmp(end, "M");
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
	w->nerr++;
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

/* Nothing in it: "", [] or {}. */
static bool is_empty(yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return n->data.scalar.length == 0;
	case YAML_SEQUENCE_NODE:
		return n->data.sequence.items.top == n->data.sequence.items.start;
	case YAML_MAPPING_NODE:
		return n->data.mapping.pairs.top == n->data.mapping.pairs.start;
	default:
		return true;
	}
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

char **strlist_argv(const struct strlist *l)
{
	char **v = xcalloc(l->n + 1, sizeof *v);
	if (l->n)
		memcpy(v, l->v, l->n * sizeof *v);
	return v;
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

/*
 * A mapping of name: entry, as agents:, layouts: and remote.hosts: are:
 * fn for each pair, in order, until it says stop (false). Another shape
 * is said with must (its %s: key).
 */
typedef bool entry_fn(struct walk *w, yaml_node_t *k, yaml_node_t *v);

static void each_entry(struct walk *w, yaml_node_t *n, const char *key, const char *must,
		       entry_fn *fn)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, must, key);
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
		if (!fn(w, yaml_document_get_node(w->doc, p->key),
			yaml_document_get_node(w->doc, p->value)))
			return;
}

/* Each key of the mapping v, to fn with its name ("?" for one that is no scalar). */
typedef void key_fn(struct walk *w, const char *name, yaml_node_t *k, yaml_node_t *v, void *arg);

static void each_key(struct walk *w, yaml_node_t *v, key_fn *fn, void *arg)
{
	for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top;
	     q++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, q->key);
		fn(w, scalar(k) ? scalar(k) : "?", k, yaml_document_get_node(w->doc, q->value),
		   arg);
	}
}

/* One key of an agent's mapping: agents.NAME.KEY. */
static void agent_key(struct walk *w, const char *name, yaml_node_t *qk, yaml_node_t *qv, void *arg)
{
	struct agent_def *d = arg;
	if (!strcmp(name, "command") && want_scalar(w, qv, "agents.*.command")) {
		set_str(&d->command, scalar(qv));
	} else if (!strcmp(name, "type") && want_scalar(w, qv, "agents.*.type")) {
		if (kind_find(scalar(qv)))
			set_str(&d->type, scalar(qv));
		else
			fail(w, qv,
			     "agents.*.type: '%s' is no agent kind "
			     "(workrex agents lists them)",
			     scalar(qv));
	} else if (!strcmp(name, "args")) {
		read_strlist(w, qv, "agents.*.args", &d->args);
	} else if (!strcmp(name, "env") && qv->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *e = qv->data.mapping.pairs.start;
		     e < qv->data.mapping.pairs.top; e++) {
			const char *ek = scalar(yaml_document_get_node(w->doc, e->key));
			const char *ev = scalar(yaml_document_get_node(w->doc, e->value));
			if (ek && ev) {
				char *kv = xasprintf("%s=%s", ek, ev);
				strlist_add(&d->env, kv);
				free(kv);
			}
		}
	} else {
		warn(w, qk, "unknown key 'agents.*.%s'", name);
	}
}

/* agents: name: command, or name: {type, command, args, env}. */
static bool agent_entry(struct walk *w, yaml_node_t *k, yaml_node_t *v)
{
	if (!want_scalar(w, k, "an agent name"))
		return false;
	struct agent_def d = {.name = xstrdup(scalar(k))};
	if (scalar(v)) {
		d.command = xstrdup(scalar(v));
	} else if (v->type == YAML_MAPPING_NODE) {
		each_key(w, v, agent_key, &d);
	} else {
		fail(w, v, "%s must be a command or a mapping", "an agent");
	}
	if (d.command == NULL)
		d.command = xstrdup(d.name);
	w->c->agents = xrealloc(w->c->agents, (w->c->nagents + 1) * sizeof *w->c->agents);
	w->c->agents[w->c->nagents++] = d;
	return true;
}

static void read_agents(struct walk *w, yaml_node_t *n)
{
	each_entry(w, n, "agents", "%s must be a mapping of name: {type, command, args, env}",
		   agent_entry);
}

/* A value that must not reach a command line as something else: no control bytes, no blanks. */
static bool plain_word(const char *s)
{
	if (s == NULL || *s == '\0')
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

/*
 * remote.hosts: name: {ssh: user@host, path: /srv/clone, docker | podman}.
 * The destination goes to ssh as an argument, so one that begins with '-'
 * (an option: -oProxyCommand=...) or holds blanks is refused here.
 */
/* remote.hosts.NAME.provision: {create, start, endpoint, stop, destroy}, each an argv. */
static void read_provision(struct walk *w, yaml_node_t *n, const char *name, struct remote_host *h)
{
	static const char *const steps[PROVISION_STEPS] = {"create", "start", "endpoint", "stop",
							   "destroy"};
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n,
		     "remote.hosts.%s.provision must be a mapping {create, endpoint, destroy...}",
		     name);
		return;
	}
	for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top;
	     q++) {
		yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
		yaml_node_t *qv = yaml_document_get_node(w->doc, q->value);
		const char *key = scalar(qk) ? scalar(qk) : "?";
		size_t i = 0;
		while (i < PROVISION_STEPS && strcmp(key, steps[i]))
			i++;
		char *path = xasprintf("remote.hosts.%s.provision.%s", name, key);
		if (i == PROVISION_STEPS) {
			warn(w, qk, "unknown key '%s' (create, start, endpoint, stop, destroy)",
			     path);
		} else {
			strlist_free(&h->provision[i]);
			read_strlist(w, qv, path, &h->provision[i]);
			if (h->provision[i].n == 0)
				fail(w, qv, "%s must be a command: a list of its words", path);
		}
		free(path);
	}
}

static bool host_entry(struct walk *w, yaml_node_t *k, yaml_node_t *v)
{
	const char *name = scalar(k);
	if (name == NULL || !plain_word(name) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789-_.") != strlen(name)) {
		fail(w, k, "remote.hosts: '%s' is not a host name (letters, digits, -_.)",
		     name ? name : "?");
		return true;
	}
	if (v->type != YAML_MAPPING_NODE) {
		fail(w, v, "remote.hosts.%s must be a mapping {ssh, path}", name);
		return true;
	}
	struct remote_host h = {.name = xstrdup(name)};
	bool docker = false, podman = false, had_ssh = false, had_path = false;
	for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top;
	     q++) {
		yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
		yaml_node_t *qv = yaml_document_get_node(w->doc, q->value);
		const char *key = scalar(qk) ? scalar(qk) : "?";
		char *path = xasprintf("remote.hosts.%s.%s", name, key);
		had_ssh |= !strcmp(key, "ssh");
		had_path |= !strcmp(key, "path");
		if (!strcmp(key, "ssh") && want_scalar(w, qv, path)) {
			if (!plain_word(scalar(qv)) || scalar(qv)[0] == '-')
				fail(w, qv,
				     "remote.hosts: ssh '%s' is not a destination "
				     "(user@host; "
				     "no leading '-', no blanks)",
				     scalar(qv));
			else
				set_str(&h.ssh, scalar(qv));
		} else if (!strcmp(key, "path") && want_scalar(w, qv, path)) {
			const char *s = scalar(qv);
			bool ok = s[0] == '/';
			for (const unsigned char *c = (const unsigned char *)s; ok && *c; c++)
				ok = *c >= ' ' && *c != 0x7f;
			if (!ok)
				fail(w, qv, "remote.hosts: path '%s' must be absolute", s);
			else
				set_str(&h.path, s);
		} else if (!strcmp(key, "provision")) {
			read_provision(w, qv, name, &h);
		} else if (!strcmp(key, "docker")) {
			read_bool(w, qv, path, &docker);
		} else if (!strcmp(key, "podman")) {
			read_bool(w, qv, path, &podman);
		} else if (strcmp(key, "ssh") && strcmp(key, "path")) {
			warn(w, qk, "unknown key '%s'", path);
		}
		free(path);
	}
	if (docker && podman)
		fail(w, v, "remote.hosts.%s: docker or podman, not both", name);
	else if (docker || podman)
		h.runtime = xstrdup(docker ? "docker" : "podman");
	bool provisioned = h.provision[PROVISION_ENDPOINT].n > 0;
	if ((!had_ssh && !provisioned) || !had_path)
		fail(w, v,
		     "remote.hosts.%s needs ssh (user@host) or provision.endpoint, and path (the "
		     "clone there)",
		     name);
	if (!provisioned && (h.provision[PROVISION_CREATE].n || h.provision[PROVISION_DESTROY].n))
		fail(w, v, "remote.hosts.%s.provision needs endpoint: what says where ssh goes",
		     name);
	w->c->hosts = xrealloc(w->c->hosts, (w->c->nhosts + 1) * sizeof *w->c->hosts);
	w->c->hosts[w->c->nhosts++] = h;
	return true;
}

static char *expand_home(const char *p);

/* workspaces.NAME: {repos: [PATH...]}, each absolute or under ~/. */
static bool workspace_entry(struct walk *w, yaml_node_t *k, yaml_node_t *v)
{
	if (!want_scalar(w, k, "a workspace's name"))
		return false;
	char *key = xasprintf("workspaces.%s.repos", scalar(k));
	yaml_node_t *list = NULL;
	for (yaml_node_pair_t *q = v->type == YAML_MAPPING_NODE ? v->data.mapping.pairs.start
								: NULL;
	     q && q < v->data.mapping.pairs.top; q++) {
		yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
		if (scalar(qk) && !strcmp(scalar(qk), "repos"))
			list = yaml_document_get_node(w->doc, q->value);
		else
			warn(w, qk, "unknown key 'workspaces.*.%s'", scalar(qk) ? scalar(qk) : "?");
	}
	struct strlist repos = {0};
	if (list == NULL || list->type != YAML_SEQUENCE_NODE) {
		fail(w, v, "%s: a list of the repositories' paths", key);
		free(key);
		return false;
	}
	read_strlist(w, list, key, &repos);
	for (size_t i = 0; i < repos.n; i++) {
		char *p = expand_home(repos.v[i]);
		if (p[0] != '/')
			fail(w, list, "%s must be an absolute path (or start with ~/)", repos.v[i]);
		free(repos.v[i]);
		repos.v[i] = p;
	}
	free(key);
	struct config *c = w->c;
	c->workspaces = xrealloc(c->workspaces, (c->nworkspaces + 1) * sizeof *c->workspaces);
	c->workspaces[c->nworkspaces++] = (struct workspace_def){xstrdup(scalar(k)), repos};
	return true;
}

static void read_workspaces(struct walk *w, yaml_node_t *n)
{
	each_entry(w, n, "workspaces", "%s must be a mapping of name: {repos: [...]}",
		   workspace_entry);
}

static void free_workspaces(struct config *c)
{
	for (size_t i = 0; i < c->nworkspaces; i++) {
		free(c->workspaces[i].name);
		strlist_free(&c->workspaces[i].repos);
	}
	free(c->workspaces);
	c->workspaces = NULL;
	c->nworkspaces = 0;
}

static void read_hosts(struct walk *w, yaml_node_t *n)
{
	each_entry(w, n, "remote.hosts", "%s must be a mapping of name: {ssh, path}", host_entry);
}

static void free_pane_list(struct pane_def *panes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(panes[i].command);
	free(panes);
}

static void free_panes(struct config *c)
{
	free_pane_list(c->panes, c->npanes);
	c->panes = NULL;
	c->npanes = 0;
}

static void free_layouts(struct config *c)
{
	for (size_t i = 0; i < c->nlayouts; i++) {
		free(c->layouts[i].name);
		free_pane_list(c->layouts[i].panes, c->layouts[i].npanes);
	}
	free(c->layouts);
	c->layouts = NULL;
	c->nlayouts = 0;
}

/* One key of a pane's mapping: panes[].KEY (or a layout's). */
static void pane_key(struct walk *w, const char *name, yaml_node_t *qk, yaml_node_t *qv, void *arg)
{
	struct pane_def *d = arg;
	const char *val = scalar(qv);
	if (!strcmp(name, "command") && want_scalar(w, qv, "panes.command")) {
		set_str(&d->command, val);
	} else if (!strcmp(name, "split") && want_scalar(w, qv, "panes.split")) {
		if (strcmp(val, "horizontal") && strcmp(val, "vertical"))
			fail(w, qv,
			     "panes.split must be horizontal or vertical, "
			     "not '%s'",
			     val);
		d->vertical = !strcmp(val, "vertical");
	} else if ((!strcmp(name, "percentage") || !strcmp(name, "size")) &&
		   want_scalar(w, qv, "panes.percentage")) {
		char *end;
		long pc = strtol(val, &end, 10);
		if (*end || pc < 1 || pc > 99)
			fail(w, qv, "panes.percentage must be 1 to 99, not '%s'", val);
		d->percentage = (int)pc;
	} else if (!strcmp(name, "focus")) {
		read_bool(w, qv, "panes.focus", &d->focus);
	} else {
		warn(w, qk, "unknown key 'panes.%s'", name);
	}
}

/* A list of panes at n into *out (replacing it): key names it in messages. */
static void read_pane_list(struct walk *w, yaml_node_t *n, const char *key, struct pane_def **out,
			   size_t *nout)
{
	if (n->type != YAML_SEQUENCE_NODE) {
		fail(w, n, "%s must be a list of {command, split, size|percentage, focus}", key);
		return;
	}
	free_pane_list(*out, *nout);
	*out = NULL;
	*nout = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(w->doc, *it);
		struct pane_def d = {0};
		if (scalar(v)) {
			d.command = xstrdup(scalar(v));
		} else if (v->type == YAML_MAPPING_NODE) {
			each_key(w, v, pane_key, &d);
		} else {
			fail(w, v, "%s must be a command or a mapping", "a pane");
		}
		if (d.command == NULL)
			d.command = xstrdup("<agent>");
		*out = xrealloc(*out, (*nout + 1) * sizeof **out);
		(*out)[(*nout)++] = d;
	}
}

static void read_panes(struct walk *w, yaml_node_t *n)
{
	read_pane_list(w, n, "panes", &w->c->panes, &w->c->npanes);
}

/* layouts: name: {panes: [...]} (or name: [...]); a later file's layout of a name wins. */
static bool layout_entry(struct walk *w, yaml_node_t *k, yaml_node_t *v)
{
	if (!want_scalar(w, k, "a layout's name"))
		return false;
	yaml_node_t *list = v;
	if (v->type == YAML_MAPPING_NODE) {
		list = NULL;
		for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
		     q < v->data.mapping.pairs.top; q++) {
			yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
			const char *name = scalar(qk) ? scalar(qk) : "?";
			if (!strcmp(name, "panes"))
				list = yaml_document_get_node(w->doc, q->value);
			else
				warn(w, qk, "unknown key 'layouts.*.%s'", name);
		}
		if (list == NULL) {
			fail(w, v, "layouts.%s needs its panes", scalar(k));
			return false;
		}
	}
	struct layout_def *l = (struct layout_def *)config_layout(w->c, scalar(k));
	if (l == NULL) {
		w->c->layouts =
			xrealloc(w->c->layouts, (w->c->nlayouts + 1) * sizeof *w->c->layouts);
		l = &w->c->layouts[w->c->nlayouts++];
		*l = (struct layout_def){.name = xstrdup(scalar(k))};
	}
	char *key = xasprintf("layouts.%s.panes", scalar(k));
	read_pane_list(w, list, key, &l->panes, &l->npanes);
	free(key);
	return true;
}

static void read_layouts(struct walk *w, yaml_node_t *n)
{
	each_entry(w, n, "layouts", "%s must be a mapping of name: {panes: [...]}", layout_entry);
}

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

static void read_env_map(struct walk *w, yaml_node_t *n, const char *key, struct strlist *dst)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping of NAME: value", key);
		return;
	}
	strlist_free(dst);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		if (!scalar(k) || !scalar(v) || !*scalar(k) || strchr(scalar(k), '=')) {
			fail(w, k, "%s: each entry must be NAME: value", key);
			return;
		}
		char *e = xasprintf("%s=%s", scalar(k), scalar(v));
		strlist_add(dst, e);
		free(e);
	}
}

void config_free_mounts(struct sandbox_config *sb)
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
	config_free_mounts(sb);
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

/* allowed_domains: each entry checked here, so that `config check` names the bad ones. */
static void read_domains(struct walk *w, yaml_node_t *n, struct net_policy *pol)
{
	const char *key = "sandbox.network.allowed_domains";
	if (n->type != YAML_SEQUENCE_NODE) {
		fail(w, n, "%s must be a list", key);
		return;
	}
	net_policy_free(pol);
	size_t max = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	pol->d = xcalloc(max ? max : 1, sizeof *pol->d);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(w->doc, *it);
		yaml_node_t *host = scalar(v) ? v : NULL;
		bool private_ok = false;
		if (v->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     q < v->data.mapping.pairs.top; q++) {
				yaml_node_t *qk = yaml_document_get_node(w->doc, q->key);
				yaml_node_t *qv = yaml_document_get_node(w->doc, q->value);
				const char *name = scalar(qk) ? scalar(qk) : "?";
				if (!strcmp(name, "host") && scalar(qv))
					host = qv;
				else if (!strcmp(name, "allow_private_ips"))
					read_bool(
						w, qv,
						"sandbox.network.allowed_domains.allow_private_ips",
						&private_ok);
				else
					warn(w, qk,
					     "unknown key 'sandbox.network.allowed_domains.%s'",
					     name);
			}
		}
		if (host == NULL) {
			fail(w, v, "%s: each item is a name or {host, allow_private_ips}", key);
			continue;
		}
		const char *why;
		struct net_domain *d = &pol->d[pol->n];
		if (net_domain_parse(scalar(host), d, &why) < 0) {
			char *msg = xasprintf("%s: '%%s': %s", key, why);
			fail(w, host, msg, scalar(host));
			free(msg);
			continue;
		}
		d->private_ok = private_ok;
		pol->n++;
	}
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

/* keys.bind: key: action, each changing or adding one binding. */
static void read_binds(struct walk *w, yaml_node_t *n, const char *path)
{
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping of key: action", path);
		return;
	}
	for (yaml_node_pair_t *b = n->data.mapping.pairs.start; b < n->data.mapping.pairs.top;
	     b++) {
		yaml_node_t *bk = yaml_document_get_node(w->doc, b->key);
		yaml_node_t *bv = yaml_document_get_node(w->doc, b->value);
		if (!want_scalar(w, bk, "a key") || !want_scalar(w, bv, "an action"))
			return;
		int key = keys_parse(scalar(bk));
		if (key < 0) {
			fail(w, bk, "keys.bind: unknown key '%s'", scalar(bk));
			return;
		}
		enum wrx_action act;
		int arg;
		if (action_parse(scalar(bv), &act, &arg) < 0) {
			fail(w, bv, "keys.bind: unknown action '%s' (see workrex(1))", scalar(bv));
			return;
		}
		add_bind(w->c, key, act, arg);
	}
}

static void read_number(struct walk *w, yaml_node_t *n, const struct config_key *k, long *dst)
{
	if (!want_scalar(w, n, k->path))
		return;
	char *end;
	errno = 0;
	long v = strtol(scalar(n), &end, 10);
	if (errno || end == scalar(n) || *end || v < k->min || v > k->max) {
		char *msg = xasprintf("%s must be a number from %ld to %ld, not '%%s'", k->path,
				      k->min, k->max);
		fail(w, n, msg, scalar(n));
		free(msg);
		return;
	}
	*dst = v;
}

static void walk_map(struct walk *w, yaml_node_t *map, const char *prefix);

/*
 * A value a command would read as an option (CONFIG_ARGUMENT): said,
 * with where it goes, and true. v is the value, a scalar or a sequence.
 */
static bool option_like(struct walk *w, const struct config_key *k, yaml_node_t *v)
{
	if (!(k->flags & CONFIG_ARGUMENT))
		return false;
	yaml_node_item_t *it = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
	size_t n = it ? (size_t)(v->data.sequence.items.top - it) : 1;
	bool refused = false;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = it ? yaml_document_get_node(w->doc, it[i]) : v;
		const char *s = scalar(e);
		if (s && s[0] == '-') {
			char *msg = xasprintf("%s: '%s' begins with '-', and it goes to %s, which "
					      "would read it as an option; refused",
					      k->path, s, k->sink);
			fail(w, e, "%s", msg);
			free(msg);
			refused = true;
		}
	}
	return refused;
}

/* One key's value, by its row's type, into its field of struct config. */
static void read_value(struct walk *w, const struct config_key *k, yaml_node_t *kn, yaml_node_t *v)
{
	void *field = (char *)w->c + k->offset;
	int nerr = w->nerr;
	switch (k->type) {
	case CONFIG_SECTION:
		if (v->type == YAML_SCALAR_NODE && k->scalar) {
			read_value(w, config_key_find(k->scalar), kn, v);
			return;
		}
		if (v->type != YAML_MAPPING_NODE) {
			fail(w, v, "%s must be a mapping", k->path);
			return;
		}
		char *prefix = xasprintf("%s.", k->path);
		walk_map(w, v, prefix);
		free(prefix);
		return;
	case CONFIG_STRING:
		if (!want_scalar(w, v, k->path) || option_like(w, k, v))
			break;
		if ((k->flags & CONFIG_SIZE) && !config_size_ok(scalar(v))) {
			char *msg =
				xasprintf("%s: '%%s' is not a size (4GiB, 512MiB, 100G)", k->path);
			fail(w, v, msg, scalar(v));
			free(msg);
			break;
		}
		set_str(field, scalar(v));
		break;
	case CONFIG_PATH:
		read_path(w, v, k->path, field);
		break;
	case CONFIG_BOOL: {
		bool on;
		if (!read_bool(w, v, k->path, &on))
			return;
		if ((k->flags & CONFIG_ONLY_ON) && !w->global && !on && *(bool *)field) {
			const char *dot = strrchr(k->path, '.'); /* "the global sandbox" */
			int n = dot ? (int)(dot - k->path) : (int)strlen(k->path);
			char *msg = xasprintf("'%s: false' in a project cannot turn off the global "
					      "%.*s; ignored",
					      k->path, n, k->path);
			warn(w, kn, "%s", msg);
			free(msg);
			return;
		}
		*(bool *)field = on;
		break;
	}
	case CONFIG_NUMBER:
		read_number(w, v, k, field);
		break;
	case CONFIG_CHOICE:
		read_choice(w, v, k->path, k->choices, field);
		break;
	case CONFIG_LIST:
		if (!option_like(w, k, v))
			read_strlist(w, v, k->path, field);
		break;
	case CONFIG_ENV:
		read_env_map(w, v, k->path, field);
		break;
	case CONFIG_KEY: {
		if (!want_scalar(w, v, k->path))
			return;
		int key = keys_parse(scalar(v));
		if (key < 0) {
			char *msg =
				xasprintf("%s: unknown key '%%s' (try C-b, C-a, M-Space)", k->path);
			fail(w, v, msg, scalar(v));
			free(msg);
			return;
		}
		*(int *)field = key;
		break;
	}
	case CONFIG_AGENTS:
		read_agents(w, v);
		break;
	case CONFIG_PANES:
		read_panes(w, v);
		break;
	case CONFIG_LAYOUTS:
		read_layouts(w, v);
		break;
	case CONFIG_MOUNTS:
		read_mounts(w, v, &w->c->sandbox);
		break;
	case CONFIG_BINDS:
		read_binds(w, v, k->path);
		break;
	case CONFIG_DOMAINS:
		read_domains(w, v, field);
		break;
	case CONFIG_HOSTS:
		read_hosts(w, v);
		break;
	case CONFIG_WORKSPACES:
		free_workspaces(w->c); /* a file's own, whole */
		read_workspaces(w, v);
		break;
	case CONFIG_ANY:
		break;
	}
	if (k->not_yet == NULL || w->nerr > nerr)
		return;
	/*
	 * What is not built yet says so when it is asked for: set to other than
	 * its default, or at all where nothing reads it.
	 */
	const char *val = scalar(v);
	bool asked = k->type == CONFIG_ANY ||
		     (!is_empty(v) && (val == NULL || k->type == CONFIG_LIST || k->def == NULL ||
				       strcmp(val, k->def) != 0));
	if (!asked)
		return;
	char *what = val && k->type != CONFIG_LIST && k->type != CONFIG_ANY
			     ? xasprintf("%s: %s", k->path, val)
			     : xstrdup(k->path);
	char *msg = xasprintf("'%s' is not available yet%s", what, k->not_yet);
	warn(w, kn, "%s", msg);
	free(msg);
	free(what);
}

/*
 * The lines of the file that set an ignored command (key kn, its value v),
 * numbered, for the question that asks to trust them: control bytes shown
 * as '?', never sent to a terminal.
 */
static void untrusted_lines(struct walk *w, yaml_node_t *kn, yaml_node_t *v)
{
	size_t first = kn->start_mark.line, last = v->end_mark.line;
	if (v->end_mark.column == 0 && last > first)
		last--; /* a block ends at the start of the next line */
	const char *p = w->text;
	for (size_t line = 0; *p && line <= last; line++) {
		size_t n = strcspn(p, "\n");
		if (line >= first) {
			char *text = xstrndup(p, n);
			for (char *q = text; *q; q++)
				if ((unsigned char)*q < 0x20 || *q == 0x7f)
					*q = *q == '\t' ? ' ' : '?';
			char *numbered = xasprintf("%zu: %s", line + 1, text);
			strlist_add(&w->c->untrusted_lines, numbered);
			free(numbered);
			free(text);
		}
		p += n + (p[n] == '\n');
	}
}

/*
 * A mapping of keys under prefix ("" at the top, "sandbox." below it): each
 * looked up in the table, so that the rules of its row apply before its
 * value is read.
 */
static void walk_map(struct walk *w, yaml_node_t *map, const char *prefix)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		if (scalar(kn) == NULL) {
			fail(w, kn, "%s", "setting names must be plain words");
			continue;
		}
		char *path = xasprintf("%s%s", prefix, scalar(kn));
		const struct config_key *k = config_key_find(path);
		if (k == NULL)
			warn(w, kn, "unknown key '%s'", path);
		else if ((k->flags & CONFIG_GLOBAL_ONLY) && !w->global)
			warn(w, kn, "'%s' may only be set in the global config; ignored", path);
		else if ((k->flags & CONFIG_COMMAND) && w->untrusted) {
			char *why =
				xasprintf("'%s' goes to %s", path, k->sink ? k->sink : "a command");
			warn(w, kn,
			     "%s, and this project config is not trusted; ignored (read it, then "
			     "`workrex trust`)",
			     why);
			free(why);
			strlist_add(&w->c->untrusted, path);
			untrusted_lines(w, kn, v);
		} else if (!is_null(v))
			read_value(w, k, kn, v);
		free(path);
	}
}

static void walk_root(struct walk *w, yaml_node_t *root)
{
	if (root == NULL || is_null(root))
		return; /* empty file */
	if (root->type != YAML_MAPPING_NODE) {
		fail(w, root, "%s", "the top level must be a mapping of settings");
		return;
	}
	walk_map(w, root, "");
}

const char *config_icon(const struct config *c, enum wrx_status st)
{
	if (st == WRX_STATUS_INTERRUPTED)
		return "\u25cb"; /* a hollow "working" */
	return st >= WRX_STATUS_WORKING && st <= WRX_STATUS_FAILED ? c->icons[st - 1] : "";
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		void *field = (char *)c + k->offset;
		if (k->def == NULL)
			continue;
		switch (k->type) {
		case CONFIG_STRING:
		case CONFIG_PATH:
		case CONFIG_CHOICE:
			*(char **)field = xstrdup(k->def);
			break;
		case CONFIG_BOOL:
			*(bool *)field = strcmp(k->def, "true") == 0;
			break;
		case CONFIG_NUMBER:
			*(long *)field = strtol(k->def, NULL, 10);
			break;
		case CONFIG_KEY:
			*(int *)field = keys_parse(k->def);
			break;
		default: /* the collections start empty; their default says so */
			break;
		}
	}
}

void config_free(struct config *c)
{
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		void *field = (char *)c + k->offset;
		switch (k->type) {
		case CONFIG_STRING:
		case CONFIG_PATH:
		case CONFIG_CHOICE:
			free(*(char **)field);
			break;
		case CONFIG_LIST:
		case CONFIG_ENV:
			strlist_free(field);
			break;
		default:
			break;
		}
	}
	for (size_t i = 0; i < c->nagents; i++) {
		free(c->agents[i].name);
		free(c->agents[i].type);
		free(c->agents[i].command);
		strlist_free(&c->agents[i].args);
		strlist_free(&c->agents[i].env);
	}
	free(c->agents);
	for (size_t i = 0; i < c->nhosts; i++) {
		free(c->hosts[i].name);
		free(c->hosts[i].ssh);
		free(c->hosts[i].path);
		free(c->hosts[i].runtime);
		for (int s = 0; s < PROVISION_STEPS; s++)
			strlist_free(&c->hosts[i].provision[s]);
	}
	free(c->hosts);
	free_panes(c);
	free_layouts(c);
	free_workspaces(c);
	config_free_mounts(&c->sandbox);
	net_policy_free(&c->sandbox.network.allowed);
	free(c->binds);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	free(c->untrusted_path);
	free(c->untrusted_text);
	strlist_free(&c->untrusted);
	strlist_free(&c->untrusted_lines);
	memset(c, 0, sizeof *c);
}
/*
 * "mapping values are not allowed" on a line whose line before has no ':':
 * "agent bash" then "panes:" reads as one scalar, and the mistake is the
 * line before. Said as a hint; NULL when it is not that.
 */
static char *missing_colon(const char *text, const char *problem, size_t line)
{
	if (problem == NULL || strstr(problem, "mapping values are not allowed") == NULL ||
	    line == 0)
		return NULL;
	const char *p = text, *prev = NULL;
	size_t n = 0, prev_line = 0;
	for (size_t at = 0; *p && at < line; at++) {
		size_t len = strcspn(p, "\n");
		if (strspn(p, " \t") < len && p[strspn(p, " \t")] != '#') {
			prev = p;
			n = len;
			prev_line = at;
		}
		p += len + (p[len] == '\n');
	}
	if (prev == NULL || memchr(prev, ':', n) || memchr(prev, '-', strspn(prev, " -")))
		return NULL;
	return xasprintf(" (line %zu has no ':': is one missing there?)", prev_line + 1);
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
		/*
		 * Where the mistake is: libyaml finds a missing ':' or a quote
		 * not closed on a later line; what it was reading began earlier.
		 */
		const yaml_mark_t *m =
			parser.context && parser.context_mark.line < parser.problem_mark.line
				? &parser.context_mark
				: &parser.problem_mark;
		char *hint = missing_colon(text, parser.problem, m->line);
		*err = xasprintf("%s:%zu:%zu: %s%s%s%s", path, m->line + 1, m->column + 1,
				 parser.problem ? parser.problem : "malformed YAML",
				 m == &parser.context_mark ? " " : "",
				 m == &parser.context_mark ? parser.context : "", hint ? hint : "");
		free(hint);
		yaml_parser_delete(&parser);
		free(text);
		return -1;
	}
	struct walk w = {.c = c, .doc = &doc, .path = path, .text = text, .global = global};
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

const struct layout_def *config_layout(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nlayouts; i++)
		if (strcmp(c->layouts[i].name, name) == 0)
			return &c->layouts[i];
	return NULL;
}

const struct agent_def *config_agent(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nagents; i++)
		if (strcmp(c->agents[i].name, name) == 0)
			return &c->agents[i];
	return NULL;
}
