/*
 * json.h - reading a field of a JSON object (json-c) that may be missing,
 * or of another type than it should: such a field reads as not there.
 */
#ifndef WRX_JSON_H
#define WRX_JSON_H

#include <json-c/json.h>
#include <stdbool.h>

/* The string at key (borrowed from o), or NULL. */
const char *json_str(json_object *o, const char *key);
/* The integer at key, or def. */
int json_int(json_object *o, const char *key, int def);
/* The same, 64 bits (times, sizes). */
long long json_long(json_object *o, const char *key, long long def);
/* Is key there, and true? */
bool json_flag(json_object *o, const char *key);
/* An array's strings as a NULL-terminated list (strv_free); none for what is not an array. */
char **json_strv(json_object *a);
/* A NULL-terminated list of strings as an array. */
json_object *json_of_strv(char *const *v);
/* Set key to the string s, or to null for NULL. */
void json_add_str(json_object *o, const char *key, const char *s);

#endif
