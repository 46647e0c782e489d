/*
 * spec.h - a proxy's settings and events as JSON: what the dashboard hands
 * a keeper (and `workrex __proxy` reads), and what comes back.
 *
 *   {"socket": path, "token": t, "max_connections": n,
 *    "allowed_domains": [{"host": "example.com" | "*.example.com",
 *                         "allow_private_ips": bool}, ...],
 *    "tcp_host": address, "port_file": path,  (a sandbox no socket reaches)
 *    "head_ms": n, "connect_ms": n, "idle_ms": n}  (the last three for tests)
 */
#ifndef WRX_NET_SPEC_H
#define WRX_NET_SPEC_H

#include "proxy.h"

#include <json-c/json.h>

struct proxy_spec {
	char *socket, *token; /* owned */
	/* Owned, or NULL: listen on TCP there too, and write the port to port_file. */
	char *tcp_host, *port_file;
	struct net_policy policy;
	int max_connections;
	unsigned head_ms, connect_ms, idle_ms;
};

/* 0, or -EINVAL with *cause (caller frees); s is always freed with proxy_spec_free. */
int proxy_spec_read(json_object *o, struct proxy_spec *s, char **cause);
/*
 * Its "allowed_domains" alone (a policy change: KM_POLICY), into *p, which
 * is left empty on error. The list as the dashboard writes it: domains_json.
 */
int proxy_policy_read(json_object *o, struct net_policy *p, char **cause);
json_object *proxy_domains_json(const struct net_policy *p);
void proxy_spec_free(struct proxy_spec *s);
/* One connection's end as a JSON object (the caller puts it). */
json_object *proxy_event_json(const struct proxy_event *ev);

#endif
