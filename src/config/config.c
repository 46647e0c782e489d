/*
 * config.c - libyaml document walk into struct config.
 *
 * The whole file is loaded as a libyaml document (files are small), then
 * walked with a table of known keys. Values are checked where they are read
 * so errors point at the offending node.
 */
#include "config.h"

#include "../ui/keys.h"
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
	char *err; /* first error; owned */
};

static void warn(struct walk *w, yaml_node_t *n, const char *fmt, const char *arg)
{
	char *msg = xasprintf(fmt, arg);
	char *line = xasprintf("%s:%zu: %s", w->path, n->start_mark.line + 1, msg);
	free(msg);
	w->c->warnings = xrealloc(w->c->warnings, (w->c->nwarnings + 1) * sizeof(char *));
	w->c->warnings[w->c->nwarnings++] = line;
}

static void fail(struct walk *w, yaml_node_t *n, const char *fmt, const char *arg)
{
	if (w->err)
		return;
	char *msg = xasprintf(fmt, arg);
	w->err = xasprintf("%s:%zu:%zu: %s", w->path, n->start_mark.line + 1,
			   n->start_mark.column + 1, msg);
	free(msg);
}

static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool want_scalar(struct walk *w, yaml_node_t *n, const char *key)
{
	if (scalar(n))
		return true;
	fail(w, n, "%s must be a single value", key);
	return false;
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
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
					fail(w, bv, "keys.bind: unknown action '%s' (see workrex(1))",
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
	static const char *names[] = {"working", "waiting", "done"};
	if (n->type != YAML_MAPPING_NODE) {
		fail(w, n, "%s must be a mapping", "status_icons");
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		int i;
		for (i = 0; i < 3; i++)
			if (scalar(k) && strcmp(scalar(k), names[i]) == 0)
				break;
		if (i == 3) {
			warn(w, k, "unknown key 'status_icons.%s'", scalar(k) ? scalar(k) : "?");
			continue;
		}
		if (want_scalar(w, v, "a status icon"))
			set_str(&w->c->icons[i], scalar(v));
	}
}

/* Keys of SPEC.md section 3 that later parts of workrex read. */
static const char *accepted[] = {
	"main_branch", "worktree_dir", "agent",    "agents",         "panes",   "files",
	"post_create", "pre_merge",    "pre_remove", "merge_strategy", "sandbox", "remote",
};

static void walk_root(struct walk *w, yaml_node_t *root)
{
	if (root == NULL)
		return; /* empty file */
	if (root->type != YAML_MAPPING_NODE) {
		fail(w, root, "%s", "the top level must be a mapping of settings");
		return;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !w->err; p++) {
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
		} else {
			size_t i;
			for (i = 0; i < WRX_ARRAY_LEN(accepted); i++)
				if (strcmp(name, accepted[i]) == 0)
					break;
			if (i == WRX_ARRAY_LEN(accepted))
				warn(w, k, "unknown key '%s'", name);
		}
	}
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof *c);
	c->scrollback = 10000;
	c->prefix = 2; /* C-b */
	c->notify = xstrdup("bell");
	c->icons[0] = xstrdup("●");
	c->icons[1] = xstrdup("◆");
	c->icons[2] = xstrdup("✓");
}

void config_free(struct config *c)
{
	free(c->binds);
	free(c->notify);
	for (int i = 0; i < 3; i++)
		free(c->icons[i]);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	memset(c, 0, sizeof *c);
}

int config_load(struct config *c, const char *path, bool global, char **err)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		if (errno == ENOENT)
			return 0;
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		*err = xasprintf("%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
				 parser.problem_mark.column + 1,
				 parser.problem ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	struct walk w = {.c = c, .doc = &doc, .path = path, .global = global};
	walk_root(&w, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
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
