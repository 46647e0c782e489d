/*
 * compare.c - a candidate's line (compare.h).
 */
#include "compare.h"

#include "../rpc/proto.h"
#include "../util/json.h"
#include "../util/util.h"

#include <stdio.h>

#define ROW "%-20s %-10s %-8s %7s %-16s %-20s %-9s %s"

static const char *str(json_object *o, const char *k, const char *none)
{
	const char *v = json_str(o, k);
	return v ? v : none;
}

static long num(json_object *o, const char *k)
{
	return (long)json_long(o, k, -1);
}

const char *compare_header(void)
{
	static char head[128];
	if (head[0] == '\0')
		snprintf(head, sizeof head, ROW, "CANDIDATE", "AGENT", "STATUS", "TIME", "CHANGES",
			 "CHECK", "USED", "HOST RUNS");
	return head;
}

char *compare_row(json_object *o)
{
	json_object *c = NULL, *runs = NULL;
	char time_s[24] = "-", changes[48] = "-", check[64] = "-";
	long s = num(o, "seconds");
	if (s >= 0)
		snprintf(time_s, sizeof time_s, "%ldm%02lds", s / 60, s % 60);
	if (num(o, "files") >= 0)
		snprintf(changes, sizeof changes, "%ld +%ld -%ld", num(o, "files"), num(o, "added"),
			 num(o, "deleted"));
	/* Its check: what it said, and where; "earlier" when it saw another state. */
	if (json_object_object_get_ex(o, "check", &c) && c)
		snprintf(check, sizeof check, "%s%s (%s)", str(c, "state", "?"),
			 json_object_get_boolean(json_object_object_get(c, "current"))
				 ? ""
				 : ", earlier",
			 str(c, "where", "?"));
	struct buf r = {0};
	if (json_object_object_get_ex(o, "host_runs", &runs) && runs)
		for (size_t k = 0; k < json_object_array_length(runs); k++)
			buf_addf(&r, "%s%s", k ? ", " : "",
				 json_object_get_string(json_object_array_get_idx(runs, k)));
	long refused = num(o, "egress_refused");
	if (refused > 0)
		buf_addf(&r, "%s%ld refused", r.len ? "; " : "", refused);
	/* What its session used, as its CLI said: $0.42, or 123k tok. */
	char used[32] = "-";
	struct rpc_usage u;
	if (rpc_usage_from_public(json_object_object_get(o, "usage"), &u))
		rpc_usage_short(&u, used, sizeof used);
	char *row =
		xasprintf(ROW, str(o, "handle", "?"), str(o, "agent", "-"), str(o, "status", "-"),
			  time_s, changes, check, used, r.len ? r.data : "-");
	buf_free(&r);
	return row;
}
