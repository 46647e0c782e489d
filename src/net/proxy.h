/*
 * proxy.h - the CONNECT proxy a sandboxed agent's HTTPS goes through under
 * sandbox.network.policy: deny (SPEC §8), on the caller's libuv loop.
 *
 * A client (the agent's, through the socket mounted into its container)
 * sends one CONNECT head (head.h): credentials, then a name the policy
 * allows, port 443. The name is resolved here, on the host; every address
 * it gets is classified (hostname.h) and the proxy dials the first one allowed,
 * never looking the name up again. Then "200" and the bytes both ways as
 * they are, each direction reading only as fast as the other side takes
 * them (so a slow end never grows memory), until both ends have closed.
 * Each refusal is an HTTP status with a line saying why (400, 403, 405,
 * 407, 408, 502, 503, 504), and every connection, allowed or not, is told
 * to the owner (proxy_event) when it ends.
 */
#ifndef WRX_NET_PROXY_H
#define WRX_NET_PROXY_H

#include "hostname.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#define PROXY_HEAD_MS 5000
#define PROXY_CONNECT_MS 10000
#define PROXY_IDLE_MS 600000 /* a tunnel with nothing either way this long ends */

/* One connection, when it ends: allowed (status 200) or refused. */
struct proxy_event {
	const char *host; /* as asked ("" before a head was read) */
	int port;
	int status;        /* 200: tunnelled; else the refusal's */
	const char *why;   /* the refusal's reason, or NULL */
	const char *addr;  /* the address dialled, or "" */
	uint64_t up, down; /* bytes client to server, server to client */
};

struct proxy_opts {
	const char *token; /* the agent's: Basic base64("workrex:<token>") */
	/* Borrowed, for the proxy's life; read only while a request is matched, so
	 * its owner may change it between callbacks. */
	const struct net_policy *policy;
	int max_connections;
	unsigned head_ms, connect_ms,
		idle_ms; /* 0: PROXY_HEAD_MS, PROXY_CONNECT_MS, PROXY_IDLE_MS */
	void (*event)(void *arg, const struct proxy_event *ev);
	void *arg;
};

struct proxy;

struct proxy *proxy_new(uv_loop_t *loop, const struct proxy_opts *o);
/* Listen on a unix socket at path (made 0600; one there already is replaced). 0 or -errno. */
int proxy_listen(struct proxy *p, const char *path, char **cause);
/*
 * Listen on TCP too, at host (an IP address) and a port of the system's
 * choosing, set in *port: for a sandbox no socket can reach, whose
 * firewall lets it out to this port only. 0 or -errno.
 */
int proxy_listen_tcp(struct proxy *p, const char *host, int *port, char **cause);
/* Stop listening, end every connection, free p once its handles have closed. */
void proxy_close(struct proxy *p);

#endif
