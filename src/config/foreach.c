/*
 * foreach.c - a group's variables (foreach.h).
 */
#include "foreach.h"

#include "../util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* name, with no values yet: its list, or NULL with *cause when it is there already. */
static struct strlist *add_name(struct foreach *f, const char *name, size_t n, char **cause)
{
	static const char *const taken[] = {"base_name", "agent", "num", "index", "input"};
	for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
		if (strlen(taken[i]) == n && !memcmp(taken[i], name, n)) {
			*cause = xasprintf("foreach: '%.*s' is one of add's own variables", (int)n,
					   name);
			return NULL;
		}
	if (!name_ok(name, n)) {
		*cause = xasprintf("foreach: '%.*s' is not a name (letters, digits, _)", (int)n,
				   name);
		return NULL;
	}
	for (size_t i = 0; i < f->n; i++)
		if (strlen(f->names[i]) == n && !memcmp(f->names[i], name, n)) {
			*cause = xasprintf("foreach: '%.*s' is given twice", (int)n, name);
			return NULL;
		}
	f->names = xrealloc(f->names, (f->n + 1) * sizeof *f->names);
	f->values = xrealloc(f->values, (f->n + 1) * sizeof *f->values);
	f->names[f->n] = xstrndup(name, n);
	f->values[f->n] = (struct strlist){0};
	return &f->values[f->n++];
}

static char *trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

int foreach_parse(const char *spec, struct foreach *f, char **cause)
{
	for (const char *p = spec; *p;) {
		const char *end = strchrnul(p, ';');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		if (colon == NULL) {
			*cause =
				xasprintf("--foreach: '%.*s' has no ':' (write name:a,b;other:x,y)",
					  (int)(end - p), p);
			return -1;
		}
		char *name = trimmed(p, (size_t)(colon - p));
		struct strlist *l = add_name(f, name, strlen(name), cause);
		free(name);
		if (l == NULL)
			return -1;
		for (const char *v = colon + 1; v <= end;) {
			const char *ve = v;
			while (ve < end && *ve != ',')
				ve++;
			char *value = trimmed(v, (size_t)(ve - v));
			if (*value)
				strlist_add(l, value);
			free(value);
			v = ve + 1;
		}
		if (l->n == 0) {
			*cause = xasprintf("--foreach: '%s' has no values", f->names[f->n - 1]);
			return -1;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* The front matter's document (a mark's line + 2 is the file's): foreach's mapping. */
static int from_yaml(yaml_document_t *doc, struct foreach *f, char **cause)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	if (root == NULL)
		return 0;
	if (root->type != YAML_MAPPING_NODE) {
		*cause = xstrdup("front matter: not a mapping");
		return -1;
	}
	for (yaml_node_pair_t *kv = root->data.mapping.pairs.start;
	     kv < root->data.mapping.pairs.top; kv++) {
		yaml_node_t *k = yaml_document_get_node(doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(doc, kv->value);
		if (k->type != YAML_SCALAR_NODE || strcmp((char *)k->data.scalar.value, "foreach"))
			continue; /* other keys are the prompt's, or its tools' */
		if (v->type != YAML_MAPPING_NODE) {
			*cause = xasprintf("front matter, line %zu: foreach is a mapping of names "
					   "to lists",
					   v->start_mark.line + 2);
			return -1;
		}
		for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
		     p < v->data.mapping.pairs.top; p++) {
			yaml_node_t *name = yaml_document_get_node(doc, p->key);
			yaml_node_t *list = yaml_document_get_node(doc, p->value);
			if (name->type != YAML_SCALAR_NODE || list->type != YAML_SEQUENCE_NODE ||
			    list->data.sequence.items.top == list->data.sequence.items.start) {
				*cause =
					xasprintf("front matter, line %zu: each of foreach's names "
						  "takes a list of values",
						  name->start_mark.line + 2);
				return -1;
			}
			const char *s = (const char *)name->data.scalar.value;
			struct strlist *l = add_name(f, s, strlen(s), cause);
			if (l == NULL)
				return -1;
			for (yaml_node_item_t *i = list->data.sequence.items.start;
			     i < list->data.sequence.items.top; i++) {
				yaml_node_t *item = yaml_document_get_node(doc, *i);
				if (item->type != YAML_SCALAR_NODE) {
					*cause =
						xasprintf("front matter, line %zu: a value of '%s' "
							  "is not a scalar",
							  item->start_mark.line + 2, s);
					return -1;
				}
				strlist_add(l, (const char *)item->data.scalar.value);
			}
		}
	}
	return 0;
}

int foreach_front_matter(const char *text, struct foreach *f, const char **body, char **cause)
{
	*body = text;
	if (strncmp(text, "---\n", 4) != 0)
		return 0;
	const char *end = strstr(text + 3, "\n---\n");
	size_t tail = 5;
	if (end == NULL && (end = strstr(text + 3, "\n---")) && end[4] == '\0')
		tail = 4;
	if (end == NULL) {
		*cause = xstrdup("front matter: no closing --- line");
		return -1;
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text + 4,
				     (size_t)(end + 1 - (text + 4)));
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		*cause = xasprintf("front matter, line %zu: %s", parser.problem_mark.line + 2,
				   parser.problem ? parser.problem : "malformed");
		rc = -1;
	} else {
		rc = from_yaml(&doc, f, cause);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	if (rc == 0)
		*body = end + tail;
	return rc;
}

size_t foreach_count(const struct foreach *f)
{
	size_t n = 1;
	for (size_t i = 0; i < f->n; i++)
		n *= f->values[i].n;
	return n;
}

void foreach_pick(const struct foreach *f, size_t k, const char **values)
{
	for (size_t i = f->n; i-- > 0;) {
		values[i] = f->values[i].v[k % f->values[i].n];
		k /= f->values[i].n;
	}
}

void foreach_free(struct foreach *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->names[i]);
		strlist_free(&f->values[i]);
	}
	free(f->names);
	free(f->values);
	*f = (struct foreach){0};
}
