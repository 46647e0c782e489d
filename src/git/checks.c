/*
 * checks.c - a candidate's check record (checks.h).
 */
#include "checks.h"

#include "../util/beneath.h"
#include "../util/util.h"
#include "private.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_FILE "check.json"

static char *str(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? xstrdup(json_object_get_string(v))
		       : NULL;
}

static long num(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? (long)json_object_get_int64(v) : 0;
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
	r->code = (int)num(o, "code");
	r->key = str(o, "key");
	r->where = str(o, "where");
	r->started = num(o, "started");
	r->ended = num(o, "ended");
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
