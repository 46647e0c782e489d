/*
 * checks.c - a candidate's check record (checks.h).
 */
#include "checks.h"

#include "../util/beneath.h"
#include "../util/json.h"
#include "../util/util.h"
#include "private.h"

#include <errno.h>
#include <git2.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_FILE "check.json"

static char *str(json_object *o, const char *k)
{
	const char *v = json_str(o, k);
	return v ? xstrdup(v) : NULL;
}

int check_load(const char *root, const char *handle, struct check_result *r)
{
	memset(r, 0, sizeof *r);
	char *dir = private_agent_dir(root, handle, false), *text = NULL;
	int rc = dir ? beneath_read(dir, CHECK_FILE, CHECK_OUTPUT_MAX * 8, &text) : -ENOENT;
	free(dir);
	if (rc < 0)
		return rc;
	json_object *o = json_tokener_parse(text);
	free(text);
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EINVAL;
	}
	r->state = str(o, "state");
	r->code = json_int(o, "code", 0);
	r->key = str(o, "key");
	r->where = str(o, "where");
	r->started = (long)json_long(o, "started", 0);
	r->ended = (long)json_long(o, "ended", 0);
	r->output = str(o, "output");
	json_object_put(o);
	if (r->state == NULL) {
		check_result_free(r);
		return -EINVAL;
	}
	return 0;
}

int check_save(const char *root, const char *handle, const struct check_result *r)
{
	char *dir = private_agent_dir(root, handle, true);
	if (dir == NULL)
		return -EACCES;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "state", json_object_new_string(r->state));
	json_object_object_add(o, "code", json_object_new_int(r->code));
	if (r->key)
		json_object_object_add(o, "key", json_object_new_string(r->key));
	if (r->where)
		json_object_object_add(o, "where", json_object_new_string(r->where));
	json_object_object_add(o, "started", json_object_new_int64(r->started));
	json_object_object_add(o, "ended", json_object_new_int64(r->ended));
	if (r->output)
		json_object_object_add(o, "output", json_object_new_string(r->output));
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	int rc = beneath_write(dir, CHECK_FILE, s, strlen(s), 0600);
	json_object_put(o);
	free(dir);
	return rc;
}

void check_result_free(struct check_result *r)
{
	free(r->state);
	free(r->key);
	free(r->where);
	free(r->output);
	memset(r, 0, sizeof *r);
}

char *check_state_key(const char *path)
{
	git_repository *r = NULL;
	if (git_repository_open_ext(&r, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return xstrdup("");
	git_oid head;
	char hex[GIT_OID_HEXSZ + 1] = "";
	if (git_reference_name_to_id(&head, r, "HEAD") == 0)
		git_oid_tostr(hex, sizeof hex, &head);
	git_status_options o;
	git_status_options_init(&o, GIT_STATUS_OPTIONS_VERSION);
	o.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	o.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		  GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	git_status_list *st = NULL;
	uint32_t x = WRX_HASH_INIT;
	size_t n = 0;
	if (git_status_list_new(&st, r, &o) == 0) {
		n = git_status_list_entrycount(st);
		for (size_t i = 0; i < n; i++) {
			const git_status_entry *e = git_status_byindex(st, i);
			const git_diff_delta *d =
				e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
			char flags[16];
			snprintf(flags, sizeof flags, "%u:", (unsigned)e->status);
			x = str_hash(x, flags);
			if (d)
				x = str_hash(str_hash(x, d->new_file.path ? d->new_file.path : ""),
					     "\n");
			/*
			 * A second change to a changed file keeps its status: its
			 * bytes count too (the worktree's file hashed, the index's id).
			 */
			git_oid id;
			bool have = false;
			if (e->index_to_workdir && d->status != GIT_DELTA_DELETED) {
				char *file = xasprintf("%s/%s", path, d->new_file.path);
				have = git_odb_hashfile(&id, file, GIT_OBJECT_BLOB) == 0;
				free(file);
			} else if (d && !git_oid_is_zero(&d->new_file.id)) {
				id = d->new_file.id;
				have = true;
			}
			if (have) {
				char hexid[GIT_OID_HEXSZ + 1];
				git_oid_tostr(hexid, sizeof hexid, &id);
				x = str_hash(x, hexid);
			}
		}
	}
	git_status_list_free(st);
	git_repository_free(r);
	return xasprintf("%s+%zu:%08x", hex, n, x);
}
