/*
 * workspace.c - a workspace's file (SPEC §14): .workrex-workspace.yaml
 * beside the repositories it names,
 *
 *     repos: [api, web]
 *
 * each a path, relative to the file's directory or absolute.
 */
#include "config.h"

#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

int config_workspace_repos(const char *path, struct strlist *out, char **cause)
{
	char *text = NULL;
	int rc = file_read(path, 1u << 20, &text, cause);
	if (rc < 0)
		return rc;
	yaml_parser_t p;
	yaml_document_t doc;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&p, &doc)) {
		*cause = xasprintf("%s:%zu: %s", path, p.problem_mark.line + 1,
				   p.problem ? p.problem : "not YAML");
		yaml_parser_delete(&p);
		free(text);
		return -EINVAL;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc), *list = NULL;
	for (yaml_node_pair_t *q = root && root->type == YAML_MAPPING_NODE
					   ? root->data.mapping.pairs.start
					   : NULL;
	     q && q < root->data.mapping.pairs.top; q++) {
		yaml_node_t *k = yaml_document_get_node(&doc, q->key);
		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((char *)k->data.scalar.value, "repos"))
			list = yaml_document_get_node(&doc, q->value);
	}
	rc = list && list->type == YAML_SEQUENCE_NODE ? 0 : -EINVAL;
	for (yaml_node_item_t *i = rc == 0 ? list->data.sequence.items.start : NULL;
	     i && i < list->data.sequence.items.top && rc == 0; i++) {
		yaml_node_t *v = yaml_document_get_node(&doc, *i);
		if (v == NULL || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
			rc = -EINVAL;
		else
			strlist_add(out, (char *)v->data.scalar.value);
	}
	if (rc < 0)
		*cause = xasprintf("%s: expected repos: a list of the repositories' paths", path);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	free(text);
	return rc;
}
