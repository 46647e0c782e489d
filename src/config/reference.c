/*
 * reference.c - the key table (table.c) written out: `workrex config
 * reference` (every key at its default, with its help), `config check`
 * (every key at the value the files gave it), `workrex init` (the reference
 * less the global-only keys) and workrex.yaml(5)'s KEY REFERENCE section.
 *
 * The YAML it writes loads back through config.c to the same values; the
 * unit tests hold it to that, and the man page to the roff it writes.
 */
#include "config.h"
#include "keys.h"
#include "table.h"

#include "../util/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Where the comments start, as in a hand-written reference. */
#define COMMENT_COLUMN 27

static bool plain_ok(const char *s)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "null", "~"};
	if (*s == '\0' || strchr("-?:,[]{}#&*!|>'\"%@` ", *s) || s[strlen(s) - 1] == ' ')
		return false;
	if (strstr(s, ": ") || strstr(s, " #") || strpbrk(s, ",[]{}\"\\\t\n"))
		return false;
	for (size_t i = 0; i < WRX_ARRAY_LEN(words); i++)
		if (strcasecmp(s, words[i]) == 0)
			return false;
	return s[strlen(s) - 1] != ':';
}

/* A string as YAML reads it back: plain where it can be, else double-quoted. */
static void add_scalar(struct buf *b, const char *s)
{
	if (plain_ok(s)) {
		buf_addstr(b, s);
		return;
	}
	buf_addch(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_addf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			buf_addf(b, "\\x%02x", (unsigned char)*s);
		else
			buf_addch(b, *s);
	}
	buf_addch(b, '"');
}

static void add_list(struct buf *b, const struct strlist *l)
{
	buf_addch(b, '[');
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			buf_addstr(b, ", ");
		add_scalar(b, l->v[i]);
	}
	buf_addch(b, ']');
}

/* "NAME=value" entries as {NAME: value}. */
static void add_env(struct buf *b, const struct strlist *l)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < l->n; i++) {
		const char *eq = strchr(l->v[i], '=');
		char *name = xstrndup(l->v[i], (size_t)(eq - l->v[i]));
		buf_addstr(b, i ? ", " : "");
		add_scalar(b, name);
		buf_addstr(b, ": ");
		add_scalar(b, eq + 1);
		free(name);
	}
	buf_addch(b, '}');
}

static void add_agents(struct buf *b, const struct config *c)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < c->nagents; i++) {
		const struct agent_def *a = &c->agents[i];
		buf_addstr(b, i ? ", " : "");
		add_scalar(b, a->name);
		buf_addstr(b, ": {");
		if (a->type)
			buf_addf(b, "type: %s, ", a->type);
		buf_addstr(b, "command: ");
		add_scalar(b, a->command);
		buf_addstr(b, ", args: ");
		add_list(b, &a->args);
		buf_addstr(b, ", env: ");
		add_env(b, &a->env);
		buf_addch(b, '}');
	}
	buf_addch(b, '}');
}

static void add_hosts(struct buf *b, const struct config *c)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < c->nhosts; i++) {
		const struct remote_host *h = &c->hosts[i];
		buf_addstr(b, i ? ", " : "");
		add_scalar(b, h->name);
		buf_addstr(b, ": {");
		if (h->ssh) {
			buf_addstr(b, "ssh: ");
			add_scalar(b, h->ssh);
			buf_addstr(b, ", ");
		}
		buf_addstr(b, "path: ");
		add_scalar(b, h->path ? h->path : "");
		if (h->runtime)
			buf_addf(b, ", %s: true", h->runtime);
		/* Its provisioning steps, in enum provision_step's order. */
		static const char *const steps[PROVISION_STEPS] = {"create", "start", "endpoint",
								   "stop", "destroy"};
		bool any = false;
		for (int k = 0; k < PROVISION_STEPS; k++) {
			if (h->provision[k].n == 0)
				continue;
			buf_addstr(b, any ? ", " : ", provision: {");
			buf_addf(b, "%s: ", steps[k]);
			add_list(b, &h->provision[k]);
			any = true;
		}
		if (any)
			buf_addch(b, '}');
		buf_addch(b, '}');
	}
	buf_addch(b, '}');
}

static void add_pane_list(struct buf *b, const struct pane_def *panes, size_t n)
{
	buf_addch(b, '[');
	for (size_t i = 0; i < n; i++) {
		const struct pane_def *p = &panes[i];
		buf_addstr(b, i ? ", {command: " : "{command: ");
		add_scalar(b, p->command);
		buf_addf(b, ", split: %s", p->vertical ? "vertical" : "horizontal");
		if (p->percentage)
			buf_addf(b, ", size: %d", p->percentage);
		buf_addf(b, ", focus: %s}", p->focus ? "true" : "false");
	}
	buf_addch(b, ']');
}

static void add_layouts(struct buf *b, const struct config *c)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < c->nlayouts; i++) {
		buf_addstr(b, i ? ", " : "");
		add_scalar(b, c->layouts[i].name);
		buf_addstr(b, ": {panes: ");
		add_pane_list(b, c->layouts[i].panes, c->layouts[i].npanes);
		buf_addch(b, '}');
	}
	buf_addch(b, '}');
}

static void add_mounts(struct buf *b, const struct sandbox_config *sb)
{
	buf_addch(b, '[');
	for (size_t i = 0; i < sb->nextra_mounts; i++) {
		const struct mount_def *m = &sb->extra_mounts[i];
		buf_addstr(b, i ? ", {host_path: " : "{host_path: ");
		add_scalar(b, m->host);
		buf_addstr(b, ", guest_path: ");
		add_scalar(b, m->guest);
		buf_addf(b, ", writable: %s}", m->writable ? "true" : "false");
	}
	buf_addch(b, ']');
}

static void add_binds(struct buf *b, const struct config *c)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < c->nbinds; i++) {
		char key[32];
		const struct config_bind *x = &c->binds[i];
		buf_addstr(b, i ? ", " : "");
		add_scalar(b, keys_name(x->key, key, sizeof key));
		buf_addf(b, ": %s", action_name((enum wrx_action)x->action));
		if (x->action == ACT_FOCUS_AGENT)
			buf_addf(b, "-%d", x->arg);
	}
	buf_addch(b, '}');
}

/* A key's value in c, as YAML (or "(detected)" and the like where unset). */
static void add_value(struct buf *b, const struct config_key *k, const struct config *c,
		      bool loadable)
{
	const void *field = (const char *)c + k->offset;
	char key[32];
	switch (k->type) {
	case CONFIG_STRING:
	case CONFIG_PATH:
	case CONFIG_CHOICE:
		if (*(char *const *)field)
			add_scalar(b, *(char *const *)field);
		else if (loadable)
			buf_addstr(b, "null");
		else
			buf_addf(b, "(%s)", k->unset ? k->unset : "unset");
		break;
	case CONFIG_BOOL:
		buf_addstr(b, *(const bool *)field ? "true" : "false");
		break;
	case CONFIG_NUMBER:
		buf_addf(b, "%ld", *(const long *)field);
		break;
	case CONFIG_KEY:
		add_scalar(b, keys_name(*(const int *)field, key, sizeof key));
		break;
	case CONFIG_LIST:
		add_list(b, field);
		break;
	case CONFIG_ENV:
		add_env(b, field);
		break;
	case CONFIG_AGENTS:
		add_agents(b, c);
		break;
	case CONFIG_LAYOUTS:
		add_layouts(b, c);
		break;
	case CONFIG_PANES:
		if (c->npanes)
			add_pane_list(b, c->panes, c->npanes);
		else if (loadable)
			buf_addstr(b, "null");
		else
			buf_addf(b, "(%s)", k->unset);
		break;
	case CONFIG_MOUNTS:
		add_mounts(b, &c->sandbox);
		break;
	case CONFIG_DOMAINS: {
		const struct net_policy *p = field;
		buf_addch(b, '[');
		for (size_t i = 0; i < p->n; i++) {
			buf_addstr(b, i ? ", " : "");
			char *name = xasprintf("%s%s", p->d[i].wildcard ? "*." : "", p->d[i].name);
			if (p->d[i].private_ok) {
				buf_addstr(b, "{host: ");
				add_scalar(b, name);
				buf_addstr(b, ", allow_private_ips: true}");
			} else {
				add_scalar(b, name);
			}
			free(name);
		}
		buf_addch(b, ']');
		break;
	}
	case CONFIG_BINDS:
		add_binds(b, c);
		break;
	case CONFIG_HOSTS:
		add_hosts(b, c);
		break;
	case CONFIG_WORKSPACES:
		buf_addch(b, '{');
		for (size_t i = 0; i < c->nworkspaces; i++) {
			buf_addstr(b, i ? ", " : "");
			add_scalar(b, c->workspaces[i].name);
			buf_addstr(b, ": {repos: ");
			add_list(b, &c->workspaces[i].repos);
			buf_addch(b, '}');
		}
		buf_addch(b, '}');
		break;
	case CONFIG_ANY:
		buf_addstr(b, loadable ? "null" : "(not read yet)");
		break;
	case CONFIG_SECTION:
		break;
	}
}

/* The reference's comment for a key: who may set it, its choices, null, help. */
static void add_comment(struct buf *b, const struct config_key *k)
{
	struct buf t = {0};
	if (k->flags & CONFIG_GLOBAL_ONLY)
		buf_addstr(&t, "global only");
	if (k->choices) {
		buf_addstr(&t, t.len ? "; " : "");
		for (const char *const *o = k->choices; *o; o++)
			buf_addf(&t, "%s%s", o == k->choices ? "" : ", ", *o);
	}
	if (k->type == CONFIG_NUMBER)
		buf_addf(&t, "%s%ld to %ld", t.len ? "; " : "", k->min, k->max);
	if (k->def == NULL && k->unset)
		buf_addf(&t, "%snull: %s", t.len ? "; " : "", k->unset);
	if (k->help)
		buf_addf(&t, "%s%s", t.len ? "; " : "", k->help);
	if (k->not_yet)
		buf_addf(&t, "%snot available yet", t.len ? "; " : "");
	if (t.len) {
		const char *nl = memrchr(b->data, '\n', b->len);
		size_t col = b->len - (nl ? (size_t)(nl - b->data) + 1 : 0);
		buf_addf(b, "%*s# %s", col < COMMENT_COLUMN ? (int)(COMMENT_COLUMN - col) : 1, "",
			 t.data);
	}
	buf_free(&t);
}

/* Is a row at or below a global-only section? */
static bool global_only(const struct config_key *k)
{
	for (const struct config_key *s = config_keys; s <= k; s++) {
		size_t n = strlen(s->path);
		if ((s->flags & CONFIG_GLOBAL_ONLY) && !strncmp(k->path, s->path, n) &&
		    (k->path[n] == '\0' || k->path[n] == '.'))
			return true;
	}
	return false;
}

/* A section none of whose keys a project may set (clipboard): nothing to write for one. */
static bool empty_for_project(const struct config_key *k)
{
	if (k->type != CONFIG_SECTION)
		return false;
	size_t n = strlen(k->path);
	for (const struct config_key *e = k + 1; e < config_keys + config_nkeys; e++) {
		if (strncmp(e->path, k->path, n) != 0 || e->path[n] != '.')
			break;
		if (e->type != CONFIG_SECTION && !global_only(e))
			return false;
	}
	return true;
}

void config_reference(struct buf *out, const struct config *c, unsigned flags)
{
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		if ((flags & CONFIG_REF_PROJECT) && (global_only(k) || empty_for_project(k)))
			continue;
		int depth = 0;
		for (const char *p = k->path; *p; p++)
			depth += *p == '.';
		const char *name = strrchr(k->path, '.') ? strrchr(k->path, '.') + 1 : k->path;
		buf_addf(out, "%*s%s:", 2 * depth, "", name);
		if (k->type != CONFIG_SECTION) {
			buf_addch(out, ' ');
			if (c)
				add_value(out, k, c, flags & CONFIG_REF_LOADABLE);
			else if (k->def)
				buf_addstr(out, k->def);
			else
				buf_addstr(out, "null");
		}
		if (c == NULL)
			add_comment(out, k);
		buf_addch(out, '\n');
	}
}

void config_reference_man(struct buf *out)
{
	buf_addstr(out, ".\\\" BEGIN KEY REFERENCE: written by `workrex config reference --man`\n"
			".\\\" from src/config/table.c (make man); do not edit by hand.\n"
			".SH KEY REFERENCE\n"
			"Every key, in the order of\n"
			".BR \"workrex config reference\" ,\n"
			"with its type and default; the sections above say more.\n");
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		if (k->type == CONFIG_SECTION)
			continue;
		struct buf t = {0};
		buf_addstr(&t, config_type_name(k->type));
		if (k->choices) {
			buf_addstr(&t, ": ");
			for (const char *const *o = k->choices; *o; o++)
				buf_addf(&t, "%s%s",
					 o == k->choices ? ""
					 : o[1]          ? ", "
							 : " or ",
					 *o);
		}
		if (k->type == CONFIG_NUMBER)
			buf_addf(&t, " from %ld to %ld", k->min, k->max);
		buf_addf(&t, "; default %s", k->def ? k->def : k->unset ? k->unset : "unset");
		if (global_only(k))
			buf_addstr(&t, "; global only");
		if (k->flags & CONFIG_COMMAND)
			buf_addstr(&t, "; trusted projects only");
		if (k->sink)
			buf_addf(&t, "; goes to %s", k->sink);
		if (k->flags & CONFIG_ARGUMENT)
			buf_addstr(&t, "; a value beginning with '-' is refused");
		if (k->flags & CONFIG_BENEATH)
			buf_addstr(&t, "; a path that leaves the project is refused");
		if (k->flags & CONFIG_ONLY_ON)
			buf_addstr(&t, "; a project file may turn it on, never off");
		if (k->not_yet)
			buf_addstr(&t, "; not available yet");
		buf_addstr(out, ".TP\n.BR ");
		buf_add_roff(out, k->path);
		buf_addstr(out, " \" (");
		buf_add_roff(out, t.data);
		buf_addstr(out, ")\"\n");
		if (k->help) {
			buf_add_roff(out, k->help);
			buf_addch(out, '\n');
		}
		buf_free(&t);
	}
	buf_addstr(out, ".\\\" END KEY REFERENCE\n");
}
