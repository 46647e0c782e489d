/*
 * server.h - the dashboard's side of the RPC bridge and the control socket,
 * served from its libuv loop.
 *
 * One protocol on every listener: JSON lines. A connection's first line
 * decides what it is:
 *   {"token": "<64 hex>"}  an agent pane (host or sandbox): typed requests
 *                          (proto.h), acting only for that pane's agent;
 *   {"cmd": ...}           a workrex CLI command of the same user: only on
 *                          the private control socket (a 0700 directory).
 * The first line must arrive within RPC_AUTH_TIMEOUT_MS. Listeners: the
 * control socket (both kinds), per-agent unix sockets that accept only that
 * agent's tokens (bind-mounted into its containers), and TCP listeners for
 * guests that cannot share a socket (tokens only).
 */
#ifndef WRX_SERVER_H
#define WRX_SERVER_H

#include "proto.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <uv.h>

#define RPC_MAX_CONNS 1024             /* on agent sockets and TCP, authenticated or not */
#define RPC_MAX_CONTROL_CONNS 256      /* on the control socket, which no sandbox reaches */
#define RPC_MAX_CONNS_PER_AGENT 64     /* on one agent's own socket */
#define RPC_MAX_CONNS_PER_FAMILY 192   /* on the sockets of agents one of the user's made */
#define RPC_MAX_CONNS_PER_PANE 64      /* authenticated with one token */
#define RPC_AGENT_AUTH_TIMEOUT_MS 2000 /* the first line on an agent socket or TCP */
#define RPC_MAX_WRITE_QUEUE (8u << 20) /* replies a client leaves unread before it is dropped */

struct rpc_server;
struct rpc_call; /* one request from an agent, replied to now or later */

struct rpc_ops {
	/* A CLI command ({"cmd": ...}): reply with rpc_call_finish, now or later. */
	void (*control)(struct rpc_call *call, json_object *req, void *data);
	/*
	 * A checked request from the pane `rpc_call_pane(call)`. Reply with
	 * rpc_call_reply (any number of times) and end with rpc_call_finish
	 * (the last reply), now or from a later callback; a call whose client
	 * went away still needs its rpc_call_finish, and its replies go nowhere.
	 */
	void (*request)(struct rpc_call *call, const struct rpc_req *req, void *data);
};

struct rpc_server *rpc_server_new(uv_loop_t *loop, const struct rpc_ops *ops, void *data);
/* Close every listener and connection (their memory goes in uv_close callbacks). */
void rpc_server_free(struct rpc_server *s);

/*
 * Listen on a unix socket. control: CLI commands are accepted too (the
 * private control socket). agent_handle (not NULL): only tokens of that
 * agent are accepted. A live socket at path (somebody answers) is an error;
 * a stale one is replaced. 0 or -errno with *cause.
 */
int rpc_server_listen_unix(struct rpc_server *s, const char *path, bool control,
			   const char *agent_handle, char **cause);
/* Listen on host:port (port 0: any); *bound gets the port. Tokens only. */
int rpc_server_listen_tcp(struct rpc_server *s, const char *host, int port, int *bound,
			  char **cause);
/*
 * The agent handle's socket shares a budget (RPC_MAX_CONNS_PER_FAMILY)
 * with the others of family (the user's agent its line goes back to).
 */
void rpc_server_family(struct rpc_server *s, const char *handle, const char *family);
/* Stop listening on path (a unix listener added above) and unlink it. */
void rpc_server_unlisten(struct rpc_server *s, const char *path);

/* A new token for pane (of agent handle) into out (RPC_TOKEN_LEN + 1 bytes). */
int rpc_server_token_add(struct rpc_server *s, int pane, const char *handle, char *out);
/* A token given out before (by an earlier dashboard: its pane's keeper kept it). */
int rpc_server_token_adopt(struct rpc_server *s, int pane, const char *handle, const char *token);
/* Forget pane's token and close the connections that used it. */
void rpc_server_token_revoke(struct rpc_server *s, int pane);

int rpc_call_pane(const struct rpc_call *call);
/* Send r (taken) to the caller, with the request's "id" when it had one. */
void rpc_call_reply(struct rpc_call *call, json_object *r);
/*
 * Bytes of replies the caller has not read yet, or -1 once it went away.
 * A call that streams (exec) stops producing above a bound, so that a
 * client that reads slowly costs no memory (RPC_MAX_WRITE_QUEUE drops it).
 */
long rpc_call_backlog(const struct rpc_call *call);
/* The last reply: the call ends (its client may go). */
void rpc_call_finish(struct rpc_call *call, json_object *r);

#endif
