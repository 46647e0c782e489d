/*
 * edit.c - the changes workrex makes to a config file itself, each once
 * the user said yes: a name added to sandbox.network.allowed_domains
 * (config_allow_domain), and a key set true (config_accept_lima).
 *
 * The file is the user's, comments and layout included, so it is edited
 * as text where libyaml says the list is: into a flow list before its ']',
 * after a block list's last item at the items' indent, or as a new key
 * under sandbox.network (or sandbox, or the file) when there is none. The
 * result is read back as a config before it replaces the file (through a
 * temporary file and rename), so a change that would not read is never
 * written.
 */
#include "config.h"

#include "../util/fault.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* The value node of key in mapping m, or NULL. */
static yaml_node_t *get(yaml_document_t *d, yaml_node_t *m, const char *key, yaml_node_t **kn)
{
	if (m == NULL || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);
		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((char *)k->data.scalar.value, key)) {
			if (kn)
				*kn = k;
			return yaml_document_get_node(d, p->value);
		}
	}
	return NULL;
}

/* The whole file (at most max bytes), or NULL. */
static char *slurp(const char *path, size_t max)
{
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return NULL;
	struct buf b = {0};
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0 && b.len < max)
		buf_add(&b, tmp, n);
	fclose(f);
	return b.data ? b.data : xstrdup("");
}

/* The offset just past the line holding offset at. */
static size_t line_end(const char *text, size_t at)
{
	const char *nl = strchr(text + at, '\n');
	return nl ? (size_t)(nl - text) + 1 : strlen(text);
}

/* text with ins put at offset at. */
static char *splice_in(const char *text, size_t at, const char *ins)
{
	return xasprintf("%.*s%s%s", (int)at, text, ins, text + at);
}

/* text as a YAML document (the caller deletes it); -EINVAL with *cause. */
static int load(const char *text, yaml_document_t *doc, char **cause)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	int ok = yaml_parser_load(&parser, doc);
	yaml_parser_delete(&parser);
	if (!ok) {
		*cause = xstrdup("the global config does not read as YAML; fix it first");
		return -EINVAL;
	}
	return 0;
}

/* The changed text, or NULL with *cause. */
static char *added(const char *text, const char *host, char **cause)
{
	yaml_document_t doc;
	if (load(text, &doc, cause) < 0)
		return NULL;
	yaml_node_t *root = yaml_document_get_root_node(&doc), *kn = NULL;
	yaml_node_t *sb = get(&doc, root, "sandbox", &kn), *sbk = kn;
	yaml_node_t *net = get(&doc, sb, "network", &kn), *netk = kn;
	yaml_node_t *list = get(&doc, net, "allowed_domains", &kn);
	char *out = NULL;
	char *item = xasprintf("\"%s\"", host);
	if (list && list->type == YAML_SEQUENCE_NODE &&
	    list->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE) {
		size_t close = list->end_mark.index; /* just past ']' */
		bool empty = list->data.sequence.items.start == list->data.sequence.items.top;
		char *ins = xasprintf("%s%s", empty ? "" : ", ", item);
		out = splice_in(text, close - 1, ins);
		free(ins);
	} else if (list && list->type == YAML_SEQUENCE_NODE &&
		   list->data.sequence.items.start < list->data.sequence.items.top) {
		yaml_node_t *first =
			yaml_document_get_node(&doc, list->data.sequence.items.start[0]);
		yaml_node_t *last = yaml_document_get_node(&doc, list->data.sequence.items.top[-1]);
		/* "- " sits two columns before the item. */
		int indent = (int)first->start_mark.column - 2;
		char *ins = xasprintf("%*s- %s\n", indent < 0 ? 0 : indent, "", item);
		out = splice_in(text,
				line_end(text, last->end_mark.index ? last->end_mark.index - 1 : 0),
				ins);
		free(ins);
	} else if (list) {
		*cause = xstrdup("sandbox.network.allowed_domains is not a list; fix it first");
	} else if (net && net->type == YAML_MAPPING_NODE &&
		   net->data.mapping.style != YAML_FLOW_MAPPING_STYLE) {
		yaml_node_t *k1 =
			yaml_document_get_node(&doc, net->data.mapping.pairs.start[0].key);
		char *ins = xasprintf("%*sallowed_domains: [%s]\n", (int)k1->start_mark.column, "",
				      item);
		out = splice_in(text, line_end(text, netk->start_mark.index), ins);
		free(ins);
	} else if (!net && sb && sb->type == YAML_MAPPING_NODE &&
		   sb->data.mapping.style != YAML_FLOW_MAPPING_STYLE) {
		int col = (int)yaml_document_get_node(&doc, sb->data.mapping.pairs.start[0].key)
				  ->start_mark.column;
		char *ins = xasprintf("%*snetwork:\n%*sallowed_domains: [%s]\n", col, "", col * 2,
				      "", item);
		out = splice_in(text, line_end(text, sbk->start_mark.index), ins);
		free(ins);
	} else if (!sb) {
		size_t n = strlen(text);
		out = xasprintf("%s%ssandbox:\n  network:\n    allowed_domains: [%s]\n", text,
				n && text[n - 1] != '\n' ? "\n" : "", item);
	} else {
		*cause = xstrdup("sandbox or sandbox.network is written in a form workrex does not "
				 "edit; add the name to allowed_domains yourself");
	}
	free(item);
	yaml_document_delete(&doc);
	return out;
}

/*
 * Does the config at path allow exactly name ("*.x" or "x")? 1 or 0; -1
 * with *err when the file does not read as a config.
 */
static int has_domain(const char *path, const char *name, char **err)
{
	struct config c;
	config_init(&c);
	int rc = config_load(&c, path, true, err);
	const struct net_policy *p = &c.sandbox.network.allowed;
	for (size_t i = 0; rc == 0 && i < p->n; i++)
		if (!strcmp(p->d[i].name, name + (p->d[i].wildcard ? 2 : 0)) &&
		    p->d[i].wildcard == !strncmp(name, "*.", 2))
			rc = 1;
	config_free(&c);
	return rc;
}

/* text to path through path.workrex-new and a rename, keeping path's mode. */
static int replace_file(const char *path, const char *tmp, const char *text)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir_p(dir, 0700);
	}
	free(dir);
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? st.st_mode & 07777 : 0600;
	return file_stage(tmp, text, strlen(text), mode);
}

/*
 * The edited text out to path: written beside it, read back as a config
 * (holds(tmp, arg) must say 1; 0 names missing), then renamed over it.
 * Nothing changes unless all of that went well. 0, or -errno with *cause.
 */
static int commit_edit(const char *path, const char *out,
		       int (*holds)(const char *path, const char *arg, char **err), const char *arg,
		       const char *missing, char **cause)
{
	char *tmp = xasprintf("%s.workrex-new", path), *err = NULL;
	int rc = replace_file(path, tmp, out);
	if (rc < 0)
		*cause = xasprintf("%s: %s", tmp, strerror(-rc));
	int back = rc == 0 ? holds(tmp, arg, &err) : 0;
	if (rc == 0 && back != 1) {
		*cause = xasprintf("the edited config would not read (%s); nothing was changed",
				   back < 0 ? err : missing);
		rc = -EINVAL;
	}
	FAULT("config.written");
	if (rc == 0 && (rc = file_swap(tmp, path)) < 0)
		*cause = xasprintf("%s: %s", path, strerror(-rc));
	FAULT("config.renamed");
	if (rc < 0)
		unlink(tmp);
	free(err);
	free(tmp);
	return rc;
}

int config_allow_domain(const char *path, const char *host, char **cause)
{
	struct net_domain d = {0};
	const char *why;
	if (net_domain_parse(host, &d, &why) < 0) {
		*cause = xasprintf("'%s': %s", host, why);
		return -EINVAL;
	}
	char *name = xasprintf("%s%s", d.wildcard ? "*." : "", d.name);
	free(d.name);
	char *err = NULL;
	int rc = has_domain(path, name, &err);
	if (rc < 0) {
		*cause = xasprintf("%s; fix it first", err);
		rc = -EINVAL;
	} else if (rc == 1) {
		rc = 0; /* there already */
	} else {
		char *text = slurp(path, 1 << 20);
		char *out = added(text ? text : "", name, cause);
		free(text);
		rc = out ? commit_edit(path, out, has_domain, name, "the name is missing", cause)
			 : -EINVAL;
		free(out);
	}
	free(err);
	free(name);
	return rc;
}

/* text with the key at dotted (a.b.c) set true, or NULL with *cause. */
static char *set_true(const char *text, const char *dotted, char **cause)
{
	yaml_document_t doc;
	if (load(text, &doc, cause) < 0)
		return NULL;
	struct strlist keys = {0};
	for (const char *k = dotted, *dot; *k; k = dot + 1) {
		dot = strchr(k, '.');
		char *one = xstrndup(k, dot ? (size_t)(dot - k) : strlen(k));
		strlist_add(&keys, one);
		free(one);
		if (dot == NULL)
			break;
	}
	/* Down the mappings that are there. */
	yaml_node_t *node = yaml_document_get_root_node(&doc), *kn = NULL, *at_key = NULL;
	size_t depth = 0;
	bool blocked = node && (node->type != YAML_MAPPING_NODE ||
				node->data.mapping.style == YAML_FLOW_MAPPING_STYLE);
	while (!blocked && node && depth < keys.n) {
		yaml_node_t *child = get(&doc, node, keys.v[depth], &kn);
		if (child == NULL)
			break;
		if (depth + 1 < keys.n && (child->type != YAML_MAPPING_NODE ||
					   child->data.mapping.style == YAML_FLOW_MAPPING_STYLE)) {
			blocked = true;
			break;
		}
		at_key = kn;
		node = child;
		depth++;
	}
	char *out = NULL;
	struct buf ins = {0};
	if (blocked || (depth == keys.n && node->type != YAML_SCALAR_NODE)) {
		*cause = xasprintf("%s is written in a form workrex does not edit; set it yourself",
				   dotted);
	} else if (depth == keys.n) {
		/* There, as some other scalar: its text becomes true. */
		out = xasprintf("%.*strue%s", (int)node->start_mark.index, text,
				text + node->end_mark.index);
	} else {
		/* The keys not there yet, under the last that is (or at the end). */
		int col = 0;
		size_t where = strlen(text);
		if (depth > 0) {
			yaml_node_t *k1 =
				yaml_document_get_node(&doc, node->data.mapping.pairs.start[0].key);
			col = (int)k1->start_mark.column;
			where = line_end(text, at_key->start_mark.index);
		} else if (where && text[where - 1] != '\n') {
			buf_addch(&ins, '\n');
		}
		for (size_t i = depth; i < keys.n; i++, col += 2)
			buf_addf(&ins, "%*s%s:%s\n", col, "", keys.v[i],
				 i + 1 < keys.n ? "" : " true");
		out = splice_in(text, where, ins.data);
	}
	buf_free(&ins);
	strlist_free(&keys);
	yaml_document_delete(&doc);
	return out;
}

/* Does the config at path accept Lima's writable git metadata? As has_domain. */
static int lima_accepted(const char *path, const char *unused, char **err)
{
	(void)unused;
	struct config c;
	config_init(&c);
	int rc = config_load(&c, path, true, err);
	if (rc == 0)
		rc = c.sandbox.lima.accept_reduced_git_metadata_isolation;
	config_free(&c);
	return rc;
}

int config_accept_lima(const char *path, char **cause)
{
	static const char key[] = "sandbox.lima.accept_reduced_git_metadata_isolation";
	char *text = slurp(path, 1 << 20);
	char *out = set_true(text ? text : "", key, cause);
	free(text);
	int rc = out ? commit_edit(path, out, lima_accepted, NULL, "the key is not true", cause)
		     : -EINVAL;
	free(out);
	return rc;
}
