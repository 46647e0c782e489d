/*
 * server.c - RPC bridge and control socket, on the dashboard's loop.
 *
 * Each connection is a small state machine: NEW (waiting for its first
 * line, with a 5 s timer and a small line cap on sandbox-facing listeners),
 * then CONTROL (CLI commands) or AGENT (typed requests for the pane whose
 * token it showed). Lines are framed into a buffer capped at RPC_LINE_MAX;
 * an overlong line gets an error and the connection is closed; malformed or
 * unknown requests get an error reply and the connection carries on.
 * Nothing a client sends can stop the loop: the worst it can do is lose its
 * own connection.
 *
 * Tokens are compared in constant time against every known token (a
 * handful), so timing says nothing about how close a guess was.
 */
#include "server.h"

#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum conn_state { CONN_NEW, CONN_CONTROL, CONN_AGENT };

struct listener {
	union {
		uv_pipe_t pipe;
		uv_tcp_t tcp;
	} h; /* h.pipe.data = this */
	struct rpc_server *srv;
	char *path;   /* owned; unix listeners */
	char *handle; /* owned; only this agent's tokens, or NULL */
	char *family; /* owned; the family it shares a budget with (rpc_server_family), or NULL */
	bool control;
	bool tcp;
	struct listener *next;
};

struct conn {
	union {
		uv_pipe_t pipe;
		uv_tcp_t tcp;
	} h; /* h.pipe.data = this */
	uv_timer_t auth_timer;
	struct rpc_server *srv;
	struct listener *l; /* borrowed; may be closed first: only its flags are copied */
	bool may_control;
	char *only_handle; /* owned copy of l->handle */
	char *family;      /* owned copy of l->family */
	enum conn_state state;
	int pane; /* CONN_AGENT */
	struct buf in;
	int handles_open;
	bool closing;
	struct rpc_call *calls; /* in flight */
	struct conn *prev, *next;
};

struct rpc_call {
	struct conn *conn; /* NULL once the client went away */
	int pane;
	json_object *id; /* owned reference, or NULL */
	struct rpc_call *next;
};

struct token {
	int pane;
	char *handle; /* owned */
	char token[RPC_TOKEN_LEN + 1];
	int nconns;
};

struct rpc_server {
	uv_loop_t *loop;
	const struct rpc_ops *ops;
	void *data;
	struct listener *listeners;
	struct conn *conns;
	int nconns;   /* on agent sockets and TCP */
	int ncontrol; /* on the control socket: a budget of its own */
	struct token *tokens;
	size_t ntokens;
};

static struct token *token_by_pane(struct rpc_server *s, int pane)
{
	for (size_t i = 0; i < s->ntokens; i++)
		if (s->tokens[i].pane == pane)
			return &s->tokens[i];
	return NULL;
}

/* ---- connections ---- */

static void conn_handle_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	if (--c->handles_open > 0)
		return;
	buf_free(&c->in);
	free(c->only_handle);
	free(c->family);
	free(c);
}

static void conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	struct rpc_server *s = c->srv;
	for (struct rpc_call *k = c->calls; k; k = k->next)
		k->conn = NULL;
	c->calls = NULL;
	if (c->state == CONN_AGENT) {
		struct token *t = token_by_pane(s, c->pane);
		if (t)
			t->nconns--;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->may_control)
		s->ncontrol--;
	else
		s->nconns--;
	uv_close((uv_handle_t *)&c->h, conn_handle_closed);
	uv_close((uv_handle_t *)&c->auth_timer, conn_handle_closed);
}

struct write_req {
	uv_write_t req;
	char *data;
};

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	free(w->data);
	free(w);
	(void)status; /* a failed write shows up as a read error and closes the connection */
}

static void conn_send(struct conn *c, json_object *r)
{
	if (c->closing)
		return;
	uv_stream_t *st = (uv_stream_t *)&c->h;
	if (uv_stream_get_write_queue_size(st) > RPC_MAX_WRITE_QUEUE) {
		log_msg("rpc: dropped a client that does not read its replies");
		conn_close(c);
		return;
	}
	struct write_req *w = xcalloc(1, sizeof *w);
	size_t n;
	const char *s = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN, &n);
	w->data = xmalloc(n + 1);
	memcpy(w->data, s, n);
	w->data[n] = '\n';
	uv_buf_t b = uv_buf_init(w->data, (unsigned)(n + 1));
	if (uv_write(&w->req, st, &b, 1, on_written) < 0) {
		free(w->data);
		free(w);
		conn_close(c);
	}
}

/* Send an error and close: for refusals that end the conversation. */
static void conn_refuse(struct conn *c, const char *why)
{
	json_object *r = rpc_error("%s", why);
	conn_send(c, r);
	json_object_put(r);
	conn_close(c);
}

static void conn_auth(struct conn *c, json_object *o)
{
	struct rpc_server *s = c->srv;
	json_object *v;
	const char *tok = NULL;
	size_t len = 0;
	if (json_object_object_get_ex(o, "token", &v) && json_object_is_type(v, json_type_string)) {
		tok = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
	}
	struct token *match = NULL;
	if (tok && rpc_token_wellformed(tok, len)) {
		/* Every entry is compared whatever matched, in constant time each. */
		for (size_t i = 0; i < s->ntokens; i++)
			if (rpc_token_equal(tok, s->tokens[i].token))
				match = &s->tokens[i];
	}
	if (match == NULL || (c->only_handle && strcmp(match->handle, c->only_handle) != 0)) {
		log_msg("rpc: refused a connection: %s",
			tok == NULL                       ? "no token"
			: !rpc_token_wellformed(tok, len) ? "malformed token"
			: match == NULL                   ? "unknown token"
					: "token of another agent on an agent's socket");
		conn_refuse(c, "authentication failed");
		return;
	}
	if (match->nconns >= RPC_MAX_CONNS_PER_PANE) {
		log_msg("rpc: refused a connection of pane %d: %d already open", match->pane,
			match->nconns);
		conn_refuse(c, "too many connections for this agent");
		return;
	}
	match->nconns++;
	c->state = CONN_AGENT;
	c->pane = match->pane;
	uv_timer_stop(&c->auth_timer);
	json_object *ok = rpc_reply("ok");
	conn_send(c, ok);
	json_object_put(ok);
}

/* A call of c for request o, in flight until rpc_call_end. */
static struct rpc_call *call_new(struct conn *c, json_object *o)
{
	struct rpc_call *call = xcalloc(1, sizeof *call);
	call->conn = c;
	call->pane = c->pane;
	json_object *id;
	if (json_object_object_get_ex(o, "id", &id) && id != NULL &&
	    (json_object_is_type(id, json_type_int) || json_object_is_type(id, json_type_string)))
		call->id = json_object_get(id);
	call->next = c->calls;
	c->calls = call;
	return call;
}

static void conn_control(struct conn *c, json_object *o)
{
	json_object *cmd;
	struct rpc_call *call = call_new(c, o);
	if (!json_object_object_get_ex(o, "cmd", &cmd) ||
	    !json_object_is_type(cmd, json_type_string)) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "error",
				       json_object_new_string("a request needs \"cmd\""));
		rpc_call_finish(call, r);
		return;
	}
	c->srv->ops->control(call, o, c->srv->data);
}

static void conn_request(struct conn *c, json_object *o)
{
	struct rpc_req req;
	const char *err;
	struct rpc_call *call = call_new(c, o);
	if (rpc_decode(o, &req, &err) < 0) {
		rpc_call_finish(call, rpc_error("%s", err));
		return;
	}
	c->srv->ops->request(call, &req, c->srv->data);
	rpc_req_free(&req);
}

static void conn_line(struct conn *c, const char *line, size_t len)
{
	const char *err;
	json_object *o = rpc_parse_line(line, len, &err);
	if (o == NULL) {
		if (c->state == CONN_NEW) {
			log_msg("rpc: refused a connection: first line is not a JSON object");
			conn_refuse(c, "authentication failed");
		} else if (c->state == CONN_CONTROL) {
			json_object *r = json_object_new_object();
			json_object_object_add(r, "error", json_object_new_string(err));
			conn_send(c, r);
			json_object_put(r);
		} else {
			json_object *r = rpc_error("%s", err);
			conn_send(c, r);
			json_object_put(r);
		}
		return;
	}
	switch (c->state) {
	case CONN_NEW:
		if (c->may_control && json_object_object_get_ex(o, "cmd", NULL)) {
			c->state = CONN_CONTROL;
			uv_timer_stop(&c->auth_timer);
			conn_control(c, o);
		} else {
			conn_auth(c, o);
		}
		break;
	case CONN_CONTROL:
		conn_control(c, o);
		break;
	case CONN_AGENT:
		conn_request(c, o);
		break;
	}
	json_object_put(o);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[64 * 1024];
	*b = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = st->data;
	if (n < 0) {
		conn_close(c);
		return;
	}
	buf_add(&c->in, b->base, (size_t)n);
	while (!c->closing) {
		/* Before a token, a sandbox-facing listener expects one short line. */
		size_t cap =
			c->state == CONN_NEW && !c->may_control ? RPC_AUTH_LINE_MAX : RPC_LINE_MAX;
		const char *line;
		size_t len;
		int r = rpc_next_line(&c->in, cap, &line, &len);
		if (r == 0)
			break;
		if (r < 0) {
			log_msg("rpc: closed a connection sending a line over %zu bytes%s", cap,
				c->state == CONN_NEW ? " before authenticating" : "");
			conn_refuse(c, c->state == CONN_NEW ? "authentication failed"
							    : "request line too long");
			break;
		}
		conn_line(c, line, len);
		buf_consume(&c->in, len + 1);
	}
}

/* Connections open on agent handle's own socket. */
static int agent_conns(struct rpc_server *s, const char *handle)
{
	int n = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		n += !c->closing && c->only_handle && !strcmp(c->only_handle, handle);
	return n;
}

/* Connections open on the sockets of one family's agents. */
static int family_conns(struct rpc_server *s, const char *family)
{
	int n = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		n += !c->closing && c->family && !strcmp(c->family, family);
	return n;
}

void rpc_server_family(struct rpc_server *s, const char *handle, const char *family)
{
	for (struct listener *l = s->listeners; l; l = l->next)
		if (l->handle && !strcmp(l->handle, handle)) {
			free(l->family);
			l->family = family ? xstrdup(family) : NULL;
		}
}

static void on_auth_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;
	log_msg("rpc: closed a connection that did not authenticate in time");
	conn_refuse(c, "authentication timed out");
}

static void on_connection(uv_stream_t *server, int status)
{
	struct listener *l = server->data;
	struct rpc_server *s = l->srv;
	if (status < 0)
		return;
	struct conn *c = xcalloc(1, sizeof *c);
	c->srv = s;
	c->may_control = l->control;
	c->only_handle = l->handle ? xstrdup(l->handle) : NULL;
	c->family = l->family ? xstrdup(l->family) : NULL;
	if (l->tcp)
		uv_tcp_init(s->loop, &c->h.tcp);
	else
		uv_pipe_init(s->loop, &c->h.pipe, 0);
	uv_timer_init(s->loop, &c->auth_timer);
	c->h.pipe.data = c->auth_timer.data = c;
	c->handles_open = 2;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	if (c->may_control)
		s->ncontrol++;
	else
		s->nconns++;
	if (uv_accept(server, (uv_stream_t *)&c->h) < 0) {
		conn_close(c);
		return;
	}
	/*
	 * Budgets: the control socket has its own, which no agent can reach
	 * (it is never mounted into a sandbox), so an agent holding sockets
	 * open cannot lock the user's CLI out; each agent's socket has one of
	 * its own, so it cannot starve the others either.
	 */
	const char *full = NULL;
	if (c->may_control && s->ncontrol > RPC_MAX_CONTROL_CONNS)
		full = "the control socket";
	else if (!c->may_control && s->nconns > RPC_MAX_CONNS)
		full = "the agents' sockets";
	else if (c->only_handle && agent_conns(s, c->only_handle) > RPC_MAX_CONNS_PER_AGENT)
		full = c->only_handle;
	bool family = false;
	if (!full && c->family && family_conns(s, c->family) > RPC_MAX_CONNS_PER_FAMILY)
		full = c->family, family = true;
	if (full) {
		log_msg("rpc: refused a connection: too many open on %s%s",
			family ? "the family of " : "", full);
		conn_refuse(c, "too many connections");
		return;
	}
	/* A sandbox's client sends its token at once: it gets less time than the CLI. */
	uv_timer_start(&c->auth_timer, on_auth_timeout,
		       c->may_control ? RPC_AUTH_TIMEOUT_MS : RPC_AGENT_AUTH_TIMEOUT_MS, 0);
	uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

/* ---- calls ---- */

int rpc_call_pane(const struct rpc_call *call)
{
	return call->pane;
}

void rpc_call_reply(struct rpc_call *call, json_object *r)
{
	if (call->conn) {
		if (call->id)
			json_object_object_add(r, "id", json_object_get(call->id));
		conn_send(call->conn, r);
	}
	json_object_put(r);
}

long rpc_call_backlog(const struct rpc_call *call)
{
	if (call->conn == NULL || call->conn->closing)
		return -1;
	return (long)uv_stream_get_write_queue_size((const uv_stream_t *)&call->conn->h);
}

static void rpc_call_end(struct rpc_call *call)
{
	struct conn *c = call->conn;
	if (c) {
		for (struct rpc_call **p = &c->calls; *p; p = &(*p)->next)
			if (*p == call) {
				*p = call->next;
				break;
			}
	}
	json_object_put(call->id);
	free(call);
}

void rpc_call_finish(struct rpc_call *call, json_object *r)
{
	rpc_call_reply(call, r);
	rpc_call_end(call);
}

/* ---- listeners ---- */

struct rpc_server *rpc_server_new(uv_loop_t *loop, const struct rpc_ops *ops, void *data)
{
	struct rpc_server *s = xcalloc(1, sizeof *s);
	s->loop = loop;
	s->ops = ops;
	s->data = data;
	return s;
}

static void listener_closed(uv_handle_t *h)
{
	struct listener *l = h->data;
	free(l->handle);
	free(l->family);
	free(l);
}

static void listener_close(struct listener *l)
{
	if (l->path) {
		unlink(l->path);
		free(l->path);
		l->path = NULL;
	}
	uv_close((uv_handle_t *)&l->h, listener_closed);
}

void rpc_server_free(struct rpc_server *s)
{
	if (s == NULL)
		return;
	while (s->listeners) {
		struct listener *l = s->listeners;
		s->listeners = l->next;
		listener_close(l);
	}
	while (s->conns)
		conn_close(s->conns);
	for (size_t i = 0; i < s->ntokens; i++)
		free(s->tokens[i].handle);
	free(s->tokens);
	free(s);
}

/* Does anybody answer on the unix socket at path? *pid: the process that listens there. */
static bool socket_alive(const char *path, pid_t *pid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool alive = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	struct ucred cr = {0};
	socklen_t n = sizeof cr;
	*pid = alive && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 ? cr.pid : 0;
	close(fd);
	return alive;
}

static struct listener *listener_new(struct rpc_server *s, bool tcp)
{
	struct listener *l = xcalloc(1, sizeof *l);
	l->srv = s;
	l->tcp = tcp;
	if (tcp)
		uv_tcp_init(s->loop, &l->h.tcp);
	else
		uv_pipe_init(s->loop, &l->h.pipe, 0);
	l->h.pipe.data = l;
	return l;
}

int rpc_server_listen_unix(struct rpc_server *s, const char *path, bool control,
			   const char *agent_handle, char **cause)
{
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		*cause = xasprintf("socket path too long (%zu bytes): %s", strlen(path), path);
		return -ENAMETOOLONG;
	}
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			*cause = xasprintf("%s exists and is not a socket", path);
			return -EEXIST;
		}
		pid_t pid;
		if (socket_alive(path, &pid)) {
			*cause = xasprintf("a dashboard is already running for this project "
					   "(pid %ld, %s)",
					   (long)pid, path);
			return -EADDRINUSE;
		}
		unlink(path); /* stale: its dashboard died */
	}
	struct listener *l = listener_new(s, false);
	l->control = control;
	l->handle = agent_handle ? xstrdup(agent_handle) : NULL;
	mode_t old = umask(0077);
	int rc = uv_pipe_bind(&l->h.pipe, path);
	umask(old);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&l->h, 128, on_connection);
	if (rc < 0) {
		*cause = xasprintf("socket %s: %s", path, uv_strerror(rc));
		listener_close(l);
		return rc;
	}
	l->path = xstrdup(path);
	l->next = s->listeners;
	s->listeners = l;
	return 0;
}

int rpc_server_listen_tcp(struct rpc_server *s, const char *host, int port, int *bound,
			  char **cause)
{
	struct sockaddr_storage ss;
	int rc = uv_ip4_addr(host, port, (struct sockaddr_in *)&ss);
	if (rc < 0)
		rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss);
	if (rc < 0) {
		*cause = xasprintf("RPC listener: '%s' is not an IP address", host);
		return rc;
	}
	struct listener *l = listener_new(s, true);
	rc = uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&ss, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&l->h, 128, on_connection);
	int len = sizeof ss;
	if (rc == 0)
		rc = uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&ss, &len);
	if (rc < 0) {
		*cause = xasprintf("RPC listener on %s:%d: %s", host, port, uv_strerror(rc));
		listener_close(l);
		return rc;
	}
	*bound = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					       : ((struct sockaddr_in6 *)&ss)->sin6_port);
	l->next = s->listeners;
	s->listeners = l;
	return 0;
}

void rpc_server_unlisten(struct rpc_server *s, const char *path)
{
	for (struct listener **p = &s->listeners; *p; p = &(*p)->next) {
		struct listener *l = *p;
		if (l->path && strcmp(l->path, path) == 0) {
			*p = l->next;
			listener_close(l);
			return;
		}
	}
}

int rpc_server_token_add(struct rpc_server *s, int pane, const char *handle, char *out)
{
	int rc = rpc_token_new(out);
	if (rc < 0)
		return rc;
	return rpc_server_token_adopt(s, pane, handle, out);
}

int rpc_server_token_adopt(struct rpc_server *s, int pane, const char *handle, const char *token)
{
	if (!rpc_token_wellformed(token, strlen(token)))
		return -EINVAL;
	/*
	 * The pane's keeper says the token this dashboard gave it: nothing
	 * changes, and its agent's connections stay (its first set-status
	 * may have come first, and got a broken pipe when this closed it).
	 */
	struct token *held = token_by_pane(s, pane);
	if (held && strcmp(held->handle, handle) == 0 && rpc_token_equal(held->token, token))
		return 0;
	rpc_server_token_revoke(s, pane);
	s->tokens = xrealloc(s->tokens, (s->ntokens + 1) * sizeof *s->tokens);
	struct token *t = &s->tokens[s->ntokens++];
	t->pane = pane;
	t->handle = xstrdup(handle);
	memcpy(t->token, token, RPC_TOKEN_LEN + 1);
	t->nconns = 0;
	return 0;
}

void rpc_server_token_revoke(struct rpc_server *s, int pane)
{
	struct token *t = token_by_pane(s, pane);
	if (t == NULL)
		return;
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		if (c->state == CONN_AGENT && c->pane == pane)
			conn_close(c);
	}
	free(t->handle);
	explicit_bzero(t->token, sizeof t->token);
	*t = s->tokens[--s->ntokens];
}
