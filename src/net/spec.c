/*
 * spec.c - a proxy's settings and events as JSON (spec.h).
 */
#include "spec.h"

#include "../util/json.h"
#include "../util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int proxy_spec_read(json_object *o, struct proxy_spec *s, char **cause)
{
	memset(s, 0, sizeof *s);
	if (o == NULL || !json_object_is_type(o, json_type_object) || !json_str(o, "socket") ||
	    !json_str(o, "token") || !*json_str(o, "token")) {
		*cause = xstrdup("a proxy needs a socket and a token");
		return -EINVAL;
	}
	s->socket = xstrdup(json_str(o, "socket"));
	s->token = xstrdup(json_str(o, "token"));
	if (json_str(o, "tcp_host") && json_str(o, "port_file")) {
		s->tcp_host = xstrdup(json_str(o, "tcp_host"));
		s->port_file = xstrdup(json_str(o, "port_file"));
	}
	s->max_connections = json_int(o, "max_connections", 128);
	s->head_ms = (unsigned)json_int(o, "head_ms", 0);
	s->connect_ms = (unsigned)json_int(o, "connect_ms", 0);
	s->idle_ms = (unsigned)json_int(o, "idle_ms", 0);
	return proxy_policy_read(o, &s->policy, cause);
}

int proxy_policy_read(json_object *o, struct net_policy *p, char **cause)
{
	memset(p, 0, sizeof *p);
	json_object *list;
	if (!json_object_object_get_ex(o, "allowed_domains", &list))
		return 0;
	size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
	p->d = xcalloc(n ? n : 1, sizeof *p->d);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(list, i), *v;
		const char *host = json_str(e, "host"), *why = "no host";
		struct net_domain *d = &p->d[p->n];
		if (host == NULL || net_domain_parse(host, d, &why) < 0) {
			*cause = xasprintf("allowed_domains: '%s': %s", host ? host : "?", why);
			free(d->name);
			d->name = NULL;
			net_policy_free(p);
			return -EINVAL;
		}
		d->private_ok = json_object_object_get_ex(e, "allow_private_ips", &v) &&
				json_object_get_boolean(v);
		p->n++;
	}
	return 0;
}

json_object *proxy_domains_json(const struct net_policy *p)
{
	json_object *list = json_object_new_array();
	for (size_t i = 0; i < p->n; i++) {
		json_object *e = json_object_new_object();
		char *host = xasprintf("%s%s", p->d[i].wildcard ? "*." : "", p->d[i].name);
		json_object_object_add(e, "host", json_object_new_string(host));
		free(host);
		json_object_object_add(e, "allow_private_ips",
				       json_object_new_boolean(p->d[i].private_ok));
		json_object_array_add(list, e);
	}
	return list;
}

void proxy_spec_free(struct proxy_spec *s)
{
	free(s->socket);
	free(s->token);
	free(s->tcp_host);
	free(s->port_file);
	net_policy_free(&s->policy);
	memset(s, 0, sizeof *s);
}

json_object *proxy_event_json(const struct proxy_event *ev)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "host", json_object_new_string(ev->host ? ev->host : ""));
	json_object_object_add(o, "port", json_object_new_int(ev->port));
	json_object_object_add(o, "status", json_object_new_int(ev->status));
	if (ev->why)
		json_object_object_add(o, "why", json_object_new_string(ev->why));
	if (ev->addr && *ev->addr)
		json_object_object_add(o, "addr", json_object_new_string(ev->addr));
	json_object_object_add(o, "up", json_object_new_int64((int64_t)ev->up));
	json_object_object_add(o, "down", json_object_new_int64((int64_t)ev->down));
	return o;
}
