/*
 * proxy.c - the CONNECT proxy (proxy.h).
 *
 * A connection's life: HEAD (reading the request head, under a timer),
 * RESOLVE (uv_getaddrinfo in the thread pool), DIAL (uv_tcp_connect, under
 * a timer), TUNNEL (both ways), then closing: its handles close one by
 * one and the last close callback frees it. A refusal is written and the
 * client's side shut down before it closes, so the status line arrives.
 */
#include "proxy.h"

#include "head.h"

#include "../util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Every read lands in the proxy's one buffer (the loop runs one callback at
 * a time) and is written on at once; what the other side cannot take now
 * is copied and queued, and its source stops reading until that is
 * written: one pending write per direction, whatever the ends' speeds.
 */
#define READ_SIZE (1024 * 1024)

enum phase { HEAD, RESOLVE, DIAL, TUNNEL, REFUSING, DONE };

struct conn {
	struct proxy *p;
	struct conn *next, *prev;
	enum phase phase;
	union {
		uv_pipe_t pipe; /* from the unix socket (the guest's forwarder) */
		uv_tcp_t tcp;   /* from the TCP listener (a sandbox behind its firewall) */
	} client;
	uv_tcp_t server;
	uv_timer_t timer;
	uv_getaddrinfo_t gai;
	uv_connect_t dial;
	int open; /* handles not closed yet, and the lookup under way: freed at 0 */
	bool server_init, resolving;
	bool reading[2]; /* [0] the client, [1] the server: read from in the tunnel */
	struct buf head; /* the head so far; after it, bytes for the server */
	struct connect_head h;
	bool private_ok; /* the matched allowed_domains entry's (the policy may change) */
	char addr[INET6_ADDRSTRLEN];
	/* Each direction: ended (EOF read), shut (its write side shut down). */
	bool client_eof, server_eof, client_shut, server_shut;
	uint64_t up, down;
	int status;
	const char *why;
	char why_buf[384];
};

struct proxy {
	uv_loop_t *loop;
	struct proxy_opts o;
	uv_pipe_t listener;
	uv_tcp_t tcp_listener;
	int listening; /* listeners not closed yet */
	bool closing;
	struct conn *conns;
	int active;
	char rbuf[READ_SIZE];
};

static void conn_end(struct conn *c, int status, const char *why);

/* ---- closing ---- */

static void free_conn(struct conn *c)
{
	struct proxy *p = c->p;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->active--;
	buf_free(&c->head);
	free(c);
	if (p->closing && p->conns == NULL && !p->listening)
		free(p);
}

static void unref(struct conn *c)
{
	if (--c->open == 0)
		free_conn(c);
}

static void on_handle_closed(uv_handle_t *h)
{
	unref(h->data);
}

static void close_handle(struct conn *c, uv_handle_t *h)
{
	if (!uv_is_closing(h)) {
		uv_close(h, on_handle_closed);
	}
}

static void tell(struct conn *c)
{
	struct proxy *p = c->p;
	if (p->o.event == NULL)
		return;
	struct proxy_event ev = {
		.host = c->h.host,
		.port = c->h.port,
		.status = c->status,
		.why = c->why,
		.addr = c->addr,
		.up = c->up,
		.down = c->down,
	};
	p->o.event(p->o.arg, &ev);
}

/* Close every handle; told once. */
static void conn_close(struct conn *c)
{
	if (c->phase == DONE)
		return;
	c->phase = DONE;
	tell(c);
	if (c->resolving)
		uv_cancel((uv_req_t *)&c->gai); /* its callback still comes, and unrefs */
	close_handle(c, (uv_handle_t *)&c->timer);
	close_handle(c, (uv_handle_t *)&c->client);
	if (c->server_init)
		close_handle(c, (uv_handle_t *)&c->server);
}

/* ---- refusals ---- */

static const char *reason(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 405:
		return "Method Not Allowed";
	case 407:
		return "Proxy Authentication Required";
	case 408:
		return "Request Timeout";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Error";
	}
}

struct wreq {
	uv_write_t req;
	struct conn *c;
	char *data;
	bool to_server; /* which side it was written to */
};

static void on_refusal_written(uv_write_t *req, int status)
{
	struct wreq *w = (struct wreq *)req;
	(void)status;
	free(w->data);
	conn_close(w->c);
	free(w);
}

/* Answer status with why, then close. */
static void conn_end(struct conn *c, int status, const char *why)
{
	if (c->phase == DONE)
		return;
	c->status = status;
	c->why = why;
	uv_read_stop((uv_stream_t *)&c->client);
	uv_timer_stop(&c->timer);
	struct wreq *w = xcalloc(1, sizeof *w);
	w->c = c;
	w->data = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
			    "Content-Length: %zu\r\n\r\nworkrex proxy: %s\n",
			    status, reason(status), strlen("workrex proxy: \n") + strlen(why), why);
	uv_buf_t b = uv_buf_init(w->data, (unsigned)strlen(w->data));
	c->phase = REFUSING; /* closed once the answer is written */
	if (uv_write(&w->req, (uv_stream_t *)&c->client, &b, 1, on_refusal_written) < 0) {
		free(w->data);
		free(w);
		conn_close(c);
	}
}

/* ---- the tunnel ---- */

static uv_stream_t *side(struct conn *c, bool server)
{
	return server ? (uv_stream_t *)&c->server : (uv_stream_t *)&c->client;
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct conn *c = h->data;
	(void)want;
	*b = uv_buf_init(c->p->rbuf, sizeof c->p->rbuf);
}

static void on_tunnel_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
static void on_idle(uv_timer_t *t);

static void set_reading(struct conn *c, bool server, bool on)
{
	if (c->reading[server] == on)
		return;
	c->reading[server] = on;
	if (on)
		uv_read_start(side(c, server), on_alloc, on_tunnel_read);
	else
		uv_read_stop(side(c, server));
}

static void maybe_done(struct conn *c)
{
	/* Both ends said EOF and were passed on, or one end failed. */
	if (c->client_eof && c->server_eof && c->client_shut && c->server_shut)
		conn_close(c);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	struct conn *c = req->data;
	(void)status;
	free(req);
	if (c->phase == TUNNEL)
		maybe_done(c);
}

/* EOF came from one side: once its bytes are written, shut the other's write side. */
static void pass_eof(struct conn *c, bool from_server)
{
	uv_shutdown_t *req = xcalloc(1, sizeof *req);
	req->data = c;
	if (from_server)
		c->client_shut = true;
	else
		c->server_shut = true;
	if (uv_shutdown(req, side(c, !from_server), on_shutdown) < 0) {
		free(req);
		maybe_done(c);
	}
}

/* A write in the tunnel is done: its connection, or NULL when the tunnel is over. */
static struct conn *tunnel_written(uv_write_t *req, int status, bool *to_server)
{
	struct wreq *w = (struct wreq *)req;
	struct conn *c = w->c;
	*to_server = w->to_server;
	free(w->data);
	free(w);
	if (c->phase != TUNNEL)
		return NULL;
	if (status < 0) {
		conn_close(c);
		return NULL;
	}
	return c;
}

static void on_tunnel_written(uv_write_t *req, int status)
{
	bool to_server;
	struct conn *c = tunnel_written(req, status, &to_server);
	if (c == NULL)
		return;
	/* The side that was held back reads again. */
	if (!(to_server ? c->client_eof : c->server_eof))
		set_reading(c, !to_server, true);
}

/* data[0..n) to the other side: now if it takes it, else queued, its source paused. */
static void forward(struct conn *c, bool to_server, const char *data, size_t n)
{
	if (to_server)
		c->up += n;
	else
		c->down += n;
	uv_timer_again(&c->timer); /* not idle */
	uv_stream_t *dst = side(c, to_server);
	uv_buf_t b = uv_buf_init((char *)data, (unsigned)n);
	int done = uv_try_write(dst, &b, 1);
	if (done == (int)n)
		return;
	if (done < 0 && done != UV_EAGAIN) {
		conn_close(c);
		return;
	}
	size_t off = done > 0 ? (size_t)done : 0;
	struct wreq *w = xcalloc(1, sizeof *w);
	w->c = c;
	w->data = xmalloc(n - off);
	memcpy(w->data, data + off, n - off);
	w->to_server = to_server;
	b = uv_buf_init(w->data, (unsigned)(n - off));
	if (uv_write(&w->req, dst, &b, 1, on_tunnel_written) < 0) {
		free(w->data);
		free(w);
		conn_close(c);
		return;
	}
	set_reading(c, !to_server, false);
}

/* Nothing either way for the idle time: the tunnel ends (a held socket is a slot). */
static void on_idle(uv_timer_t *t)
{
	struct conn *c = t->data;
	if (c->phase == TUNNEL)
		conn_close(c);
}

static void on_tunnel_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;
	bool from_server = s == (uv_stream_t *)&c->server;
	if (n > 0) {
		forward(c, !from_server, b->base, (size_t)n);
		return;
	}
	if (n == 0)
		return;
	if (n != UV_EOF || c->phase != TUNNEL) {
		conn_close(c);
		return;
	}
	set_reading(c, from_server, false);
	if (from_server)
		c->server_eof = true;
	else
		c->client_eof = true;
	pass_eof(c, from_server);
}

static void on_established(uv_write_t *req, int status)
{
	bool to_server;
	struct conn *c = tunnel_written(req, status, &to_server);
	if (c == NULL)
		return;
	set_reading(c, false, true);
	set_reading(c, true, true);
	/* Bytes the client sent after its head are the server's. */
	if (c->head.len > c->h.len)
		forward(c, true, c->head.data + c->h.len, c->head.len - c->h.len);
	buf_free(&c->head);
}

/* ---- dialling ---- */

static void on_dial_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;
	conn_end(c, 504, "the server did not answer in 10 s");
}

static void on_dialled(uv_connect_t *req, int status)
{
	struct conn *c = req->data;
	if (c->phase != DIAL)
		return;
	uv_timer_stop(&c->timer);
	if (status < 0) {
		snprintf(c->why_buf, sizeof c->why_buf, "could not connect to %s: %s", c->addr,
			 uv_strerror(status));
		conn_end(c, 502, c->why_buf);
		return;
	}
	c->phase = TUNNEL;
	c->status = 200;
	unsigned idle = c->p->o.idle_ms ? c->p->o.idle_ms : PROXY_IDLE_MS;
	uv_timer_start(&c->timer, on_idle, idle, idle);
	struct wreq *w = xcalloc(1, sizeof *w);
	w->c = c;
	w->data = xstrdup("HTTP/1.1 200 Connection established\r\n\r\n");
	uv_buf_t b = uv_buf_init(w->data, (unsigned)strlen(w->data));
	if (uv_write(&w->req, (uv_stream_t *)&c->client, &b, 1, on_established) < 0) {
		free(w->data);
		free(w);
		conn_close(c);
	}
}

/* Is sa one of this machine's own addresses (a service listening on all of them)? */
static bool host_owns(const struct sockaddr *sa)
{
	struct ifaddrs *all;
	if (getifaddrs(&all) < 0)
		return true; /* cannot tell: not dialled */
	bool own = false;
	for (struct ifaddrs *i = all; i && !own; i = i->ifa_next) {
		const struct sockaddr *x = i->ifa_addr;
		if (x == NULL || x->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET)
			own = ((const struct sockaddr_in *)x)->sin_addr.s_addr ==
			      ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
		else if (sa->sa_family == AF_INET6)
			own = !memcmp(&((const struct sockaddr_in6 *)x)->sin6_addr,
				      &((const struct sockaddr_in6 *)sa)->sin6_addr,
				      sizeof(struct in6_addr));
	}
	freeifaddrs(all);
	return own;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	struct conn *c = req->data;
	c->resolving = false;
	if (c->phase != RESOLVE) {
		uv_freeaddrinfo(res);
		unref(c);
		return;
	}
	c->open--; /* the handles still hold it */
	if (status < 0) {
		uv_freeaddrinfo(res);
		conn_end(c, 502, "the name does not resolve");
		return;
	}
	/* The first address the policy allows; every one is looked at. */
	const struct addrinfo *pick = NULL;
	const char *what = "no address";
	for (const struct addrinfo *a = res; a && pick == NULL; a = a->ai_next) {
		enum addr_class k = net_addr_class(a->ai_addr, &what);
		if (k != ADDR_PUBLIC && !(k == ADDR_PRIVATE && c->private_ok))
			continue;
		if (host_owns(a->ai_addr))
			what = "this machine's own address";
		else
			pick = a;
	}
	if (pick == NULL) {
		snprintf(c->why_buf, sizeof c->why_buf, "%s resolves to %s, which is not allowed",
			 c->h.host, what);
		uv_freeaddrinfo(res);
		conn_end(c, 403, c->why_buf);
		return;
	}
	if (pick->ai_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)pick->ai_addr)->sin_addr, c->addr,
			  sizeof c->addr);
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)pick->ai_addr)->sin6_addr, c->addr,
			  sizeof c->addr);
	uv_tcp_init(c->p->loop, &c->server);
	c->server.data = c;
	c->server_init = true;
	c->open++;
	c->phase = DIAL;
	c->dial.data = c;
	int rc = uv_tcp_connect(&c->dial, &c->server, pick->ai_addr, on_dialled);
	uv_freeaddrinfo(res);
	if (rc < 0) {
		conn_end(c, 502, "could not connect");
		return;
	}
	unsigned ms = c->p->o.connect_ms ? c->p->o.connect_ms : PROXY_CONNECT_MS;
	uv_timer_start(&c->timer, on_dial_timeout, ms, 0);
}

/* ---- the head ---- */

static void on_head_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;
	conn_end(c, 408, "no whole request head in 5 s");
}

static void on_head_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;
	if (n < 0) {
		free(b->base);
		c->status = 0;
		c->why = "the client went before its request was whole";
		conn_close(c);
		return;
	}
	buf_add(&c->head, b->base, (size_t)n);
	free(b->base);
	if (c->phase != HEAD)
		return;
	const char *why = NULL;
	int st = head_parse(c->head.data, c->head.len, c->p->o.token, &c->h, &why);
	if (st == HEAD_MORE)
		return;
	if (st != 0) {
		conn_end(c, st, why);
		return;
	}
	uv_read_stop(s);
	uv_timer_stop(&c->timer);
	const struct net_domain *d = net_policy_match(c->p->o.policy, c->h.host);
	if (d == NULL) {
		conn_end(c, 403, "the host is not in sandbox.network.allowed_domains");
		return;
	}
	c->private_ok = d->private_ok;
	c->phase = RESOLVE;
	c->gai.data = c;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	char port[8];
	snprintf(port, sizeof port, "%d", c->h.port);
	c->resolving = true;
	c->open++;
	if (uv_getaddrinfo(c->p->loop, &c->gai, on_resolved, c->h.host, port, &hints) < 0) {
		c->resolving = false;
		c->open--;
		conn_end(c, 502, "the name could not be looked up");
	}
}

static void on_head_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct conn *c = h->data;
	(void)want;
	/* Never more than the head's limit (and a byte) in all. */
	size_t room = HEAD_MAX + 1 > c->head.len ? HEAD_MAX + 1 - c->head.len : 1;
	b->base = malloc(room);
	b->len = b->base ? room : 0;
}

static void on_connection(uv_stream_t *l, int status)
{
	struct proxy *p = l->data;
	if (status < 0)
		return;
	struct conn *c = xcalloc(1, sizeof *c);
	c->p = p;
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->active++;
	if (l->type == UV_TCP) {
		uv_tcp_init(p->loop, &c->client.tcp);
		uv_tcp_nodelay(&c->client.tcp, 1);
	} else {
		uv_pipe_init(p->loop, &c->client.pipe, 0);
	}
	uv_timer_init(p->loop, &c->timer);
	c->client.pipe.data = c->timer.data = c; /* data: the same field in both */
	c->open = 2;
	if (uv_accept(l, (uv_stream_t *)&c->client) < 0) {
		conn_close(c);
		return;
	}
	if (p->active > p->o.max_connections) {
		conn_end(c, 503, "too many connections (sandbox.network.max_connections)");
		return;
	}
	unsigned ms = p->o.head_ms ? p->o.head_ms : PROXY_HEAD_MS;
	uv_timer_start(&c->timer, on_head_timeout, ms, 0);
	uv_read_start((uv_stream_t *)&c->client, on_head_alloc, on_head_read);
}

/* ---- the proxy ---- */

struct proxy *proxy_new(uv_loop_t *loop, const struct proxy_opts *o)
{
	struct proxy *p = xcalloc(1, sizeof *p);
	p->loop = loop;
	p->o = *o;
	if (p->o.max_connections <= 0)
		p->o.max_connections = 128;
	return p;
}

int proxy_listen(struct proxy *p, const char *path, char **cause)
{
	unlink(path);
	uv_pipe_init(p->loop, &p->listener, 0);
	p->listener.data = p;
	p->listening++;
	mode_t old = umask(0177);
	int rc = uv_pipe_bind(&p->listener, path);
	umask(old);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&p->listener, 128, on_connection);
	if (rc < 0) {
		*cause = xasprintf("the proxy cannot listen on %s: %s", path, uv_strerror(rc));
		return rc;
	}
	return 0;
}

int proxy_listen_tcp(struct proxy *p, const char *host, int *port, char **cause)
{
	struct sockaddr_storage ss;
	int rc = uv_ip4_addr(host, 0, (struct sockaddr_in *)&ss);
	if (rc < 0)
		rc = uv_ip6_addr(host, 0, (struct sockaddr_in6 *)&ss);
	if (rc < 0) {
		*cause = xasprintf("the proxy cannot listen on '%s': not an IP address", host);
		return rc;
	}
	uv_tcp_init(p->loop, &p->tcp_listener);
	p->tcp_listener.data = p;
	p->listening++;
	rc = uv_tcp_bind(&p->tcp_listener, (struct sockaddr *)&ss, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&p->tcp_listener, 128, on_connection);
	int len = sizeof ss;
	if (rc == 0)
		rc = uv_tcp_getsockname(&p->tcp_listener, (struct sockaddr *)&ss, &len);
	if (rc < 0) {
		*cause = xasprintf("the proxy cannot listen on %s: %s", host, uv_strerror(rc));
		return rc;
	}
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static void on_listener_closed(uv_handle_t *h)
{
	struct proxy *p = h->data;
	if (--p->listening == 0 && p->conns == NULL)
		free(p);
}

void proxy_close(struct proxy *p)
{
	if (p == NULL)
		return;
	p->closing = true;
	for (struct conn *c = p->conns; c; c = c->next) {
		c->why = c->why ? c->why : "the proxy closed";
		conn_close(c);
	}
	bool pipe = p->listener.loop != NULL, tcp = p->tcp_listener.loop != NULL;
	if (!pipe && !tcp && p->conns == NULL)
		free(p);
	if (pipe)
		uv_close((uv_handle_t *)&p->listener, on_listener_closed);
	if (tcp)
		uv_close((uv_handle_t *)&p->tcp_listener, on_listener_closed);
}
