/* json.c - the fields of a JSON object, typed (json.h). */
#include "json.h"

const char *json_str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

int json_int(json_object *o, const char *key, int def)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? json_object_get_int(v)
		       : def;
}

long long json_long(json_object *o, const char *key, long long def)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? (long long)json_object_get_int64(v)
		       : def;
}

bool json_flag(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

void json_add_str(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}
