/*
 * compare.h - a group's candidates as `workrex compare` shows them (SPEC
 * §11), one line each, for its table and the dashboard's compare view
 * alike: from the objects of `compare --json`.
 */
#ifndef WRX_COMPARE_H
#define WRX_COMPARE_H

#include <json-c/json.h>

/* The table's heading line. */
const char *compare_header(void);
/* Candidate o as a line of the table: a string to free. */
char *compare_row(json_object *o);

#endif
