/*
 * keep.c - what the core tells its panes' keepers and hears from them,
 * whichever host runs them (runner.c): what the agent reported (the meta a
 * keeper gives the next dashboard), the agent's proxy (its spec, its
 * allowed domains, the connections it saw).
 */
#include "../backends/backend.h"
#include "../keeper/client.h"
#include "../keeper/proto.h"
#include "../term/pane.h"
#include "../net/spec.h"
#include "../util/log.h"
#include "../util/util.h"
#include "runner.h"
#include "wrx.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EGRESS_LINES 200
#define EGRESS_SAID_MS 1000 /* refusals said on the status line at most once a second */

/*
 * A connection through one of the agent's proxies ended (its own under
 * policy: deny, or a host command's): logged, and counted on the agent; a
 * refusal is also said on the status line, against the agent, so that a
 * blocked dependency download is no mystery. A flood of refusals is
 * counted, not logged and said one by one: past the first in a second,
 * only the tally, once that second is over.
 */
void wrx_egress(struct wrx *w, struct agent *a, json_object *o)
{
	json_object *v;
#define FIELD(k) (json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "")
	int status = json_object_object_get_ex(o, "status", &v) ? json_object_get_int(v) : 0;
	int64_t up = json_object_object_get_ex(o, "up", &v) ? json_object_get_int64(v) : 0;
	int64_t down = json_object_object_get_ex(o, "down", &v) ? json_object_get_int64(v) : 0;
	const char *host = *FIELD("host") ? FIELD("host") : "(no request)";
	char *line = status == 200 ? xasprintf("allowed  %s:%s via %s, %lld bytes up, %lld down",
					       host, FIELD("port"), FIELD("addr"), (long long)up,
					       (long long)down)
				   : xasprintf("refused  %s:%s (%d): %s", host, FIELD("port"),
					       status, FIELD("why"));
#undef FIELD
	uint64_t now = now_ms();
	if (status == 200) {
		a->box.egress_ok++;
		log_msg("%s: proxy: %s", a->handle, line);
	} else if (status) {
		a->box.egress_refused++;
		if (now - a->box.egress_said >= EGRESS_SAID_MS) {
			if (a->box.egress_quiet)
				log_msg("%s: proxy: %lu more refused in the last second", a->handle,
					a->box.egress_quiet);
			log_msg("%s: proxy: %s", a->handle, line);
			wrx_message(w, true, "%s: the proxy %s", a->handle, line);
			if (a->box.egress_quiet == 0)
				wrx_relayout(w);
			a->box.egress_said = now;
			a->box.egress_quiet = 0;
		} else {
			a->box.egress_quiet++;
		}
	}
	if (a->box.negress >= EGRESS_LINES) {
		free(a->box.egress[0]);
		memmove(a->box.egress, a->box.egress + 1,
			(a->box.negress - 1) * sizeof *a->box.egress);
		a->box.negress--;
	} else {
		a->box.egress =
			xrealloc(a->box.egress, (a->box.negress + 1) * sizeof *a->box.egress);
	}
	a->box.egress[a->box.negress++] = line;
}

/*
 * What the agent is (its status, since when, why it failed) and last
 * reported (title, note, session), for its keeper to give the next
 * dashboard and for its mark to give the one after a reboot (kept.c). Not
 * from a pane that lost its keeper: that is no news of the agent, and a
 * reboot's mark must say what the agent was before it.
 */
void keep_meta(struct wrx *w, struct agent *a)
{
	json_object *m = json_object_new_object();
	json_object_object_add(m, "status", json_object_new_string(status_word(a->status)));
	if (a->status != WRX_STATUS_NONE)
		json_object_object_add(m, "since", json_object_new_int64((int64_t)a->status_since));
	if (a->hook_at)
		json_object_object_add(m, "at", json_object_new_int64((int64_t)a->hook_at));
	if (a->has_usage)
		json_object_object_add(m, "usage", rpc_usage_json(&a->usage));
	if (a->title)
		json_object_object_add(m, "title", json_object_new_string(a->title));
	if (a->note)
		json_object_object_add(m, "note", json_object_new_string(a->note));
	if (a->failure)
		json_object_object_add(m, "failure", json_object_new_string(a->failure));
	if (a->session_id)
		json_object_object_add(m, "session", json_object_new_string(a->session_id));
	if (a->asks) {
		json_object *asks = json_object_new_object();
		json_object_object_add(asks, "by", json_object_new_int((int)getpid()));
		json_object_object_add(asks, "list", json_tokener_parse(a->asks));
		json_object_object_add(m, "asks", asks);
	}
	const char *s = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	bool lost = false;
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		int st;
		if (wp->agent != a)
			continue;
		if (wp->runner->keeper)
			keeper_conn_send(wp->runner->keeper, KM_META, s, strlen(s));
		lost |= pane_exited(wp->term, &st) && st == PANE_LOST;
	}
	if (!lost)
		kept_meta(w, a, s);
	json_object_put(m);
}

void keep_asks(struct wrx *w, const char *handle, json_object *list)
{
	struct agent *a = session_find_agent(w->s, handle);
	const char *s = list && json_object_array_length(list)
				? json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN)
				: NULL;
	if (a && !(s == NULL && a->asks == NULL) && !(s && a->asks && !strcmp(s, a->asks))) {
		free(a->asks);
		a->asks = s ? xstrdup(s) : NULL;
		keep_meta(w, a);
	}
	json_object_put(list);
}

/* Its network proxy (policy: deny), which the agent pane's keeper runs (net/spec.h). */
json_object *keep_proxy_spec(struct wrx *w, struct agent *a)
{
	json_object *o = json_object_new_object();
	char *sock = xasprintf("%s/" BACKEND_PROXY_SOCKET, a->box.rpc_dir);
	json_object_object_add(o, "socket", json_object_new_string(sock));
	free(sock);
	json_object_object_add(o, "token", json_object_new_string(a->box.proxy_token));
	/* A sandbox no socket reaches: TCP too, its port in a file it can read. */
	struct backend_reach reach;
	const struct backend *b = backend_find(w->cfg.sandbox.backend);
	char *cause = NULL;
	if (b && b->reach && b->reach(&w->cfg, &reach, &cause) == 0 && reach.tcp) {
		json_object_object_add(o, "tcp_host", json_object_new_string(reach.bind));
		char *pf = xasprintf("%s/" BACKEND_PROXY_PORT_FILE, a->box.rpc_dir);
		json_object_object_add(o, "port_file", json_object_new_string(pf));
		free(pf);
	}
	free(cause);
	json_object_object_add(o, "max_connections",
			       json_object_new_int((int)w->cfg.sandbox.network.max_connections));
	json_object_object_add(o, "allowed_domains",
			       proxy_domains_json(&w->cfg.sandbox.network.allowed));
	return o;
}

/*
 * allowed_domains as they are now, to the keeper of wp (a sandboxed agent's
 * pane, where its proxy runs), or to every such keeper (wp NULL). Not only
 * to agents this dashboard started: one it took over from an earlier
 * dashboard (whose proxy token it never had) was left with the old list,
 * while allow-domain said the proxies took the name.
 */
void keep_policy_to(struct wrx *w, struct wpane *only)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "allowed_domains",
			       proxy_domains_json(&w->cfg.sandbox.network.allowed));
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	for (int i = 0; i < session_pane_count(w->s); i++) {
		struct wpane *wp = session_pane(w->s, i);
		if ((only == NULL || wp == only) && wp->runner->keeper && wp->sandboxed &&
		    session_agent_pane(w->s, wp->agent) == wp)
			keeper_conn_send(wp->runner->keeper, KM_POLICY, s, strlen(s));
	}
	json_object_put(o);
}

void keep_proxy_policy(struct wrx *w)
{
	keep_policy_to(w, NULL);
}
