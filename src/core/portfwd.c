/*
 * portfwd.c - a sandboxed agent's ports, reachable from the host (config
 * ports; SPEC §14). Its container has no network of ours to publish a
 * port on (policy: deny is --network=none), so the dashboard listens on
 * 127.0.0.1:PORT for it and relays each connection inside:
 *
 *  - to the unix socket PORT.sock the guest's `port-serve` made in the
 *    agent's ports directory (mounted from here, portfwd_dir), which
 *    connects to the agent's server on the container's own loopback.
 *    The guest may put anything in that directory, so the name is opened
 *    beneath the directory without following a link, must be a socket,
 *    and is connected to through that open file (/proc/self/fd/N): no
 *    socket of the host's can be made to stand in for it;
 *  - where there is no such socket (a runtime whose sockets do not
 *    cross, a container from before), through the runtime's `exec -i`
 *    to the guest's `port-connect PORT`: one process per connection.
 *
 * A connection's bytes are relayed both ways with a bounded queue each
 * way (reading pauses while the other side has more than FWD_QUEUED
 * waiting); it ends when both sides have, or its process does.
 */
#include "../backends/backend.h"
#include "../git/private.h"
#include "../util/log.h"
#include "../util/util.h"
#include "wrx.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FWD_QUEUED (1u << 20)

struct portfwd {
	struct portfwd *next;
	struct wrx *w;
	uv_tcp_t listener;
	int port;
	char *container; /* owned */
	int dir;         /* its ports directory, O_PATH; or -1 */
};

struct fconn {
	/* (its listener may be closed before it ends: what it needs is its own) */
	struct wrx *w;
	int port;
	char *container; /* owned */
	uv_tcp_t tcp;
	uv_pipe_t sock;    /* the guest's socket; or, where it has none, */
	uv_process_t proc; /* the runtime's exec, */
	uv_pipe_t in, out; /* its stdin and stdout, */
	uv_pipe_t err;     /* and its stderr: why, when it fails (the log says) */
	uv_stream_t *to;   /* where the client's bytes go: sock or in */
	char why[160];
	size_t nwhy;
	int open; /* handles not yet closed */
	bool ended, exited;
};

struct fwrite {
	uv_write_t req;
	uv_stream_t *from; /* read again once this drains */
	char *data;
};

static void conn_closed(uv_handle_t *h)
{
	struct fconn *c = h->data;
	if (--c->open == 0) {
		free(c->container);
		free(c);
	}
}

static void conn_end(struct fconn *c)
{
	if (c->ended)
		return;
	c->ended = true;
	/* Its process is closed once it exited (exited): libuv reaps only what it watches. */
	if (c->proc.data && !c->exited)
		uv_process_kill(&c->proc, SIGTERM);
	uv_handle_t *hs[] = {(uv_handle_t *)&c->tcp, (uv_handle_t *)&c->sock,
			     (uv_handle_t *)&c->in,  (uv_handle_t *)&c->out,
			     (uv_handle_t *)&c->err, c->exited ? (uv_handle_t *)&c->proc : NULL};
	for (size_t i = 0; i < WRX_ARRAY_LEN(hs); i++)
		if (hs[i] && hs[i]->data && !uv_is_closing(hs[i]))
			uv_close(hs[i], conn_closed);
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
	(void)h;
	size_t n = want < 65536 ? want : 65536;
	*buf = uv_buf_init(xmalloc(n), (unsigned)n);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void written(uv_write_t *req, int status)
{
	struct fwrite *wr = req->data;
	uv_stream_t *to = req->handle;
	free(wr->data);
	struct fconn *c = to->data;
	if (status == 0 && !c->ended && uv_stream_get_write_queue_size(to) < FWD_QUEUED &&
	    !uv_is_closing((uv_handle_t *)wr->from))
		uv_read_start(wr->from, on_alloc, on_read);
	free(wr);
	if (status < 0)
		conn_end(c);
}

static void shut(uv_shutdown_t *req, int status)
{
	(void)status;
	free(req);
}

/* The client has all the server said: the connection is over. */
static void client_done(uv_shutdown_t *req, int status)
{
	(void)status;
	conn_end(req->data);
	free(req);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct fconn *c = s->data;
	uv_stream_t *to = s == (uv_stream_t *)&c->tcp ? c->to : (uv_stream_t *)&c->tcp;
	if (n < 0) {
		free(buf->base);
		uv_read_stop(s);
		if (n != UV_EOF && s == (uv_stream_t *)&c->tcp) {
			conn_end(c); /* the client went away: so does the rest */
			return;
		}
		/*
		 * One side's end is the other's: shut it for writing once what is
		 * queued is written (a half-close). The server's end is the last:
		 * the connection ends once the client has all of it.
		 */
		bool last = s == (uv_stream_t *)&c->out || s == (uv_stream_t *)&c->sock;
		uv_shutdown_t *req = xcalloc(1, sizeof *req);
		req->data = c;
		if (c->ended || uv_shutdown(req, to, last ? client_done : shut) < 0) {
			free(req);
			if (last)
				conn_end(c);
		}
		return;
	}
	if (n == 0) {
		free(buf->base);
		return;
	}
	struct fwrite *wr = xcalloc(1, sizeof *wr);
	wr->req.data = wr;
	wr->from = s;
	wr->data = buf->base;
	uv_buf_t b = uv_buf_init(buf->base, (unsigned)n);
	if (uv_write(&wr->req, to, &b, 1, written) < 0) {
		free(wr->data);
		free(wr);
		conn_end(c);
		return;
	}
	if (uv_stream_get_write_queue_size(to) >= FWD_QUEUED)
		uv_read_stop(s); /* until it drains (written) */
}

/* What its exec said on stderr: the start of it, kept for the log. */
static void on_err(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct fconn *c = s->data;
	if (n > 0 && c->nwhy + 1 < sizeof c->why) {
		size_t k = WRX_MIN((size_t)n, sizeof c->why - 1 - c->nwhy);
		memcpy(c->why + c->nwhy, buf->base, k);
		c->nwhy += k;
		c->why[c->nwhy] = '\0';
	}
	if (n < 0)
		uv_read_stop(s);
	free(buf->base);
}

/* Its stdout's end, read after, ends the connection (client_done); once ended, it goes. */
static void exited(uv_process_t *p, int64_t status, int sig)
{
	(void)sig;
	struct fconn *c = p->data;
	c->exited = true;
	if (status != 0)
		log_msg("ports: %d: its exec ended with %lld: %.*s", c->port, (long long)status,
			(int)strcspn(c->why, "\n"), c->why);
	if (c->ended)
		uv_close((uv_handle_t *)p, conn_closed);
}

/* Through the runtime's exec: its stdin and stdout are the connection's other end. */
static void exec_connect(struct fconn *c)
{
	uv_pipe_init(c->w->loop, &c->in, 0);
	uv_pipe_init(c->w->loop, &c->out, 0);
	uv_pipe_init(c->w->loop, &c->err, 0);
	c->in.data = c->out.data = c->err.data = c;
	c->open += 3;
	c->to = (uv_stream_t *)&c->in;
	char port[16];
	snprintf(port, sizeof port, "%d", c->port);
	char *argv[] = {(char *)container_runtime(&c->w->cfg),
			"exec",
			"-i",
			c->container,
			BACKEND_GUEST_CLIENT,
			"port-connect",
			port,
			NULL};
	uv_stdio_container_t io[3] = {
		{.flags = UV_CREATE_PIPE | UV_READABLE_PIPE, .data.stream = (uv_stream_t *)&c->in},
		{.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->out},
		{.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
		 .data.stream = (uv_stream_t *)&c->err}};
	uv_process_options_t o = {
		.file = argv[0], .args = argv, .exit_cb = exited, .stdio = io, .stdio_count = 3};
	c->proc.data = c;
	int rc = uv_spawn(c->w->loop, &c->proc, &o);
	if (rc < 0) {
		log_msg("ports: %s exec for port %d: %s", argv[0], c->port, uv_strerror(rc));
		c->proc.data = NULL; /* not a handle to close */
		conn_end(c);
		return;
	}
	c->open++;
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&c->err, on_alloc, on_err);
}

/*
 * A socket nobody answers on (its server gone: a container's that ended,
 * Docker Desktop's, which does not cross its VM): the exec, then.
 */
static void sock_connected(uv_connect_t *req, int status)
{
	struct fconn *c = req->data;
	free(req);
	if (status < 0) {
		if (!c->ended) {
			log_msg("ports: %d: its socket: %s; through %s exec instead", c->port,
				uv_strerror(status), container_runtime(&c->w->cfg));
			uv_close((uv_handle_t *)&c->sock, conn_closed);
			exec_connect(c);
		}
		return;
	}
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&c->sock, on_alloc, on_read);
}

/*
 * To the guest's socket for the port, if there is one: opened beneath its
 * directory, never through a link, and a socket. false: there is none.
 */
static bool sock_connect(struct portfwd *f, struct fconn *c)
{
	char name[24];
	snprintf(name, sizeof name, "%d.sock", f->port);
	int fd = f->dir < 0 ? -1 : openat(f->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	char path[40];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	uv_pipe_init(f->w->loop, &c->sock, 0);
	c->sock.data = c;
	c->open++;
	c->to = (uv_stream_t *)&c->sock;
	uv_connect_t *req = xcalloc(1, sizeof *req);
	req->data = c;
	uv_pipe_connect(req, &c->sock, path, sock_connected); /* (connect(2) is called here) */
	close(fd);
	return true;
}

static void on_connection(uv_stream_t *server, int status)
{
	struct portfwd *f = server->data;
	if (status < 0)
		return;
	struct fconn *c = xcalloc(1, sizeof *c);
	c->w = f->w;
	c->port = f->port;
	c->container = xstrdup(f->container);
	uv_tcp_init(f->w->loop, &c->tcp);
	c->tcp.data = c;
	c->open = 1;
	if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
		conn_end(c);
		return;
	}
	if (!sock_connect(f, c))
		exec_connect(c);
}

static void listener_closed(uv_handle_t *h)
{
	struct portfwd *f = h->data;
	if (f->dir >= 0)
		close(f->dir);
	free(f->container);
	free(f);
}

void portfwd_open(struct wrx *w, struct agent *a, const char *container)
{
	if (a->git.ports == NULL || a->box.fwd || w->helper ||
	    strcmp(w->cfg.sandbox.backend, "container") != 0)
		return;
	char *dir = portfwd_dir(w, a, false);
	for (const char *p = a->git.ports; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		struct portfwd *f = xcalloc(1, sizeof *f);
		f->w = w;
		f->port = atoi(p);
		f->container = xstrdup(container);
		f->dir = dir ? open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		uv_tcp_init(w->loop, &f->listener);
		f->listener.data = f;
		struct sockaddr_in sa;
		uv_ip4_addr("127.0.0.1", f->port, &sa);
		int rc = uv_tcp_bind(&f->listener, (const struct sockaddr *)&sa, 0);
		if (rc == 0)
			rc = uv_listen((uv_stream_t *)&f->listener, 64, on_connection);
		if (rc < 0) {
			wrx_message(w, true, "%s: its port %d is not forwarded: %s", a->handle,
				    f->port, uv_strerror(rc));
			uv_close((uv_handle_t *)&f->listener, listener_closed);
			continue;
		}
		f->next = a->box.fwd;
		a->box.fwd = f;
	}
	free(dir);
}

char *portfwd_dir(const struct wrx *w, const struct agent *a, bool create)
{
	char *agent = private_agent_dir(w->root, a->handle, create);
	char *dir = agent ? xasprintf("%s/ports", agent) : NULL;
	free(agent);
	if (dir && create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_msg("ports: %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

void portfwd_gone(struct agent *a, const char *container)
{
	if (a->box.fwd && strcmp(a->box.fwd->container, container) == 0)
		portfwd_close(a);
}

void portfwd_close(struct agent *a)
{
	for (struct portfwd *f = a->box.fwd, *next; f; f = next) {
		next = f->next;
		uv_close((uv_handle_t *)&f->listener, listener_closed);
	}
	a->box.fwd = NULL;
}
