/*
 * portfwd.c - a sandboxed agent's ports, reachable from the host (config
 * ports; SPEC §14), run by its agent pane's keeper so that they outlive a
 * detach and a dashboard's death. Its container has no network of ours to
 * publish a port on (policy: deny is --network=none), so this listens on
 * 127.0.0.1:PORT for it and relays each connection inside:
 *
 *  - to the unix socket PORT.sock the guest's `port-serve` made in the
 *    agent's ports directory (mounted from here), which connects to the
 *    agent's server on the container's own loopback. The guest may put
 *    anything in that directory, so the name is opened beneath the
 *    directory without following a link, must be a socket, and is
 *    connected to through that open file (/proc/self/fd/N): no socket of
 *    the host's can be made to stand in for it;
 *  - where there is no such socket, or nobody answers on it (a runtime
 *    whose sockets do not cross, a container from before), through the
 *    runtime's `exec -i` to the guest's `port-connect PORT`: one process
 *    per connection.
 *
 * A connection's bytes are relayed both ways with a bounded queue each
 * way (reading pauses while the other side has more than FWD_QUEUED
 * waiting); it ends when both sides have, or its process does.
 */
#include "portfwd.h"

#include "../util/json.h"
#include "../util/log.h"
#include "../util/ports.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FWD_QUEUED (1u << 20)
/*
 * How long the guest's socket may take to greet a connection (port-serve
 * does at once, before anything else): past it, the exec. A socket whose
 * forwarder is gone under gVisor accepts and then says nothing, ever.
 */
#define GREETING_MS 2000

struct portfwd {
	uv_loop_t *loop;
	int dir;     /* the ports directory, O_PATH; or -1 */
	char **exec; /* owned: the runtime's exec, the port to come; or NULL */
	struct listener *ls;
	size_t n;
	int open; /* listeners not yet closed */
};

struct listener {
	struct portfwd *f;
	uv_tcp_t tcp;
	int port;
};

struct fconn {
	/* (its listener may be closed before it ends: what it needs is its own) */
	uv_loop_t *loop;
	int port;
	char **exec; /* owned: a copy of the portfwd's */
	uv_tcp_t tcp;
	uv_pipe_t sock;    /* the guest's socket; or, where it has none, */
	uv_process_t proc; /* the runtime's exec, */
	uv_pipe_t in, out; /* its stdin and stdout, */
	uv_pipe_t err;     /* and its stderr: why, when it fails (the log says) */
	uv_stream_t *to;   /* where the client's bytes go: sock or in */
	uv_timer_t wait;   /* for the socket's greeting: GREETING_MS */
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
		strv_free(c->exec);
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
	uv_handle_t *hs[] = {(uv_handle_t *)&c->tcp,
			     (uv_handle_t *)&c->sock,
			     (uv_handle_t *)&c->wait,
			     (uv_handle_t *)&c->in,
			     (uv_handle_t *)&c->out,
			     (uv_handle_t *)&c->err,
			     c->exited ? (uv_handle_t *)&c->proc : NULL};
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
static void relay_out(struct fconn *c, uv_stream_t *s, uv_stream_t *to, char *data, size_t n);

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
	relay_out(c, s, to, buf->base, (size_t)n);
}

/* n bytes read from s at data (taken) written to to; s paused while to is full. */
static void relay_out(struct fconn *c, uv_stream_t *s, uv_stream_t *to, char *data, size_t n)
{
	struct fwrite *wr = xcalloc(1, sizeof *wr);
	wr->req.data = wr;
	wr->from = s;
	wr->data = data;
	uv_buf_t b = uv_buf_init(data, (unsigned)n);
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
	if (c->exec == NULL) {
		log_msg("ports: %d: no socket of the sandbox's, and no exec", c->port);
		conn_end(c);
		return;
	}
	uv_pipe_init(c->loop, &c->in, 0);
	uv_pipe_init(c->loop, &c->out, 0);
	uv_pipe_init(c->loop, &c->err, 0);
	c->in.data = c->out.data = c->err.data = c;
	c->open += 3;
	c->to = (uv_stream_t *)&c->in;
	size_t n = 0;
	while (c->exec[n])
		n++;
	char port[16];
	snprintf(port, sizeof port, "%d", c->port);
	char **argv = xcalloc(n + 2, sizeof *argv);
	memcpy(argv, c->exec, n * sizeof *argv);
	argv[n] = port;
	uv_stdio_container_t io[3] = {
		{.flags = UV_CREATE_PIPE | UV_READABLE_PIPE, .data.stream = (uv_stream_t *)&c->in},
		{.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->out},
		{.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
		 .data.stream = (uv_stream_t *)&c->err}};
	uv_process_options_t o = {
		.file = argv[0], .args = argv, .exit_cb = exited, .stdio = io, .stdio_count = 3};
	c->proc.data = c;
	int rc = uv_spawn(c->loop, &c->proc, &o);
	free(argv);
	if (rc < 0) {
		log_msg("ports: %s exec for port %d: %s", c->exec[0], c->port, uv_strerror(rc));
		c->proc.data = NULL; /* not a handle to close */
		conn_end(c);
		return;
	}
	c->open++;
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&c->err, on_alloc, on_err);
}

/* The socket is no way in after all (why): the exec instead. */
static void sock_give_up(struct fconn *c, const char *why)
{
	if (c->ended)
		return;
	log_msg("ports: %d: its socket %s; through %s exec instead", c->port, why,
		c->exec ? c->exec[0] : "no");
	uv_close((uv_handle_t *)&c->sock, conn_closed);
	exec_connect(c);
}

static void greeting_late(uv_timer_t *t)
{
	struct fconn *c = t->data;
	uv_close((uv_handle_t *)t, conn_closed);
	uv_read_stop((uv_stream_t *)&c->sock);
	char why[48];
	snprintf(why, sizeof why, "did not greet it in %d ms", GREETING_MS);
	sock_give_up(c, why);
}

/*
 * The guest's first byte on a connection (port-serve's greeting, as it
 * takes it). Only then are the client's bytes read: a socket that ends or
 * stays mute before it (gVisor's, whose forwarder is gone, still accepts)
 * loses nothing of theirs, and the exec takes the connection instead.
 */
static void on_greeting(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct fconn *c = s->data;
	if (n == 0) {
		free(buf->base);
		return;
	}
	uv_read_stop(s);
	uv_close((uv_handle_t *)&c->wait, conn_closed);
	if (n < 0) {
		free(buf->base);
		sock_give_up(c, "said nothing");
		return;
	}
	uv_read_start(s, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	if (n > 1) {
		memmove(buf->base, buf->base + 1, (size_t)n - 1);
		relay_out(c, s, (uv_stream_t *)&c->tcp, buf->base, (size_t)n - 1);
	} else {
		free(buf->base);
	}
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
		char why[80];
		snprintf(why, sizeof why, "refused it: %s", uv_strerror(status));
		sock_give_up(c, why);
		return;
	}
	uv_timer_init(c->loop, &c->wait);
	c->wait.data = c;
	c->open++;
	uv_timer_start(&c->wait, greeting_late, GREETING_MS, 0);
	uv_read_start((uv_stream_t *)&c->sock, on_alloc, on_greeting);
}

/*
 * To the guest's socket for the port, if there is one: opened beneath its
 * directory, never through a link, and a socket. false: there is none.
 */
static bool sock_connect(struct listener *l, struct fconn *c)
{
	char name[24];
	snprintf(name, sizeof name, "%d.sock", l->port);
	int fd = l->f->dir < 0 ? -1 : openat(l->f->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		/* (none is the rule where no socket crosses: said only when something else is there) */
		if (fd >= 0 || errno == ELOOP)
			log_msg("ports: %d: %s is not a socket (a link is not followed); through "
				"%s "
				"exec instead",
				l->port, name, l->f->exec ? l->f->exec[0] : "no");
		if (fd >= 0)
			close(fd);
		return false;
	}
	char path[40];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	uv_pipe_init(c->loop, &c->sock, 0);
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
	struct listener *l = server->data;
	if (status < 0)
		return;
	struct fconn *c = xcalloc(1, sizeof *c);
	c->loop = l->f->loop;
	c->port = l->port;
	c->exec = l->f->exec ? strv_dup(l->f->exec) : NULL;
	uv_tcp_init(c->loop, &c->tcp);
	c->tcp.data = c;
	c->open = 1;
	if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
		conn_end(c);
		return;
	}
	if (!sock_connect(l, c))
		exec_connect(c);
}

static void listener_closed(uv_handle_t *h)
{
	struct listener *l = h->data;
	struct portfwd *f = l->f;
	if (--f->open > 0)
		return;
	if (f->dir >= 0)
		close(f->dir);
	strv_free(f->exec);
	free(f->ls);
	free(f);
}

struct portfwd *portfwd_start(uv_loop_t *loop, const struct portfwd_spec *s, char **refused)
{
	*refused = NULL;
	if (s->n == 0)
		return NULL;
	struct portfwd *f = xcalloc(1, sizeof *f);
	f->loop = loop;
	f->dir = s->dir ? open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	f->exec = s->exec ? strv_dup(s->exec) : NULL;
	f->ls = xcalloc(s->n + 1, sizeof *f->ls);
	struct buf why = {0};
	size_t listening = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct listener *l = &f->ls[f->n];
		*l = (struct listener){.f = f, .port = s->ports[i]};
		uv_tcp_init(loop, &l->tcp);
		l->tcp.data = l;
		f->open++;
		struct sockaddr_in sa;
		uv_ip4_addr("127.0.0.1", l->port, &sa);
		int rc = uv_tcp_bind(&l->tcp, (const struct sockaddr *)&sa, 0);
		if (rc == 0)
			rc = uv_listen((uv_stream_t *)&l->tcp, 64, on_connection);
		f->n++;
		if (rc < 0) {
			buf_addf(&why, "%s%d: %s", why.len ? "; " : "", l->port, uv_strerror(rc));
			uv_close((uv_handle_t *)&l->tcp, listener_closed);
		} else {
			listening++;
		}
	}
	*refused = why.data;
	return listening ? f : NULL; /* (with none, it goes as its listeners close) */
}

void portfwd_stop(struct portfwd *f)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (!uv_is_closing((uv_handle_t *)&f->ls[i].tcp))
			uv_close((uv_handle_t *)&f->ls[i].tcp, listener_closed);
}

json_object *portfwd_spec_json(const char *ports, const char *dir, char *const *exec)
{
	json_object *o = json_object_new_object(), *list = json_object_new_array();
	int v[PORTS_MAX];
	for (size_t i = 0, n = ports_split(ports, v, PORTS_MAX); i < n; i++)
		json_object_array_add(list, json_object_new_int(v[i]));
	json_object_object_add(o, "ports", list);
	json_add_str(o, "dir", dir);
	if (exec && *exec)
		json_object_object_add(o, "exec", json_of_strv(exec));
	return o;
}

int portfwd_spec_read(json_object *o, struct portfwd_spec *s, char **cause)
{
	memset(s, 0, sizeof *s);
	json_object *list, *v;
	if (!json_object_object_get_ex(o, "ports", &list) ||
	    !json_object_is_type(list, json_type_array)) {
		*cause = xstrdup("ports: no list of ports");
		return -EINVAL;
	}
	size_t n = json_object_array_length(list);
	s->ports = xcalloc(n + 1, sizeof *s->ports);
	for (size_t i = 0; i < n; i++) {
		int p = json_object_get_int(json_object_array_get_idx(list, i));
		if (p <= 0 || p > 65535) {
			*cause = xasprintf("ports: %d is not a port", p);
			return -EINVAL;
		}
		s->ports[s->n++] = p;
	}
	if (json_object_object_get_ex(o, "dir", &v))
		s->dir = xstrdup(json_object_get_string(v));
	if (json_object_object_get_ex(o, "exec", &v) && json_object_is_type(v, json_type_array)) {
		size_t k = json_object_array_length(v);
		s->exec = xcalloc(k + 1, sizeof *s->exec);
		for (size_t i = 0; i < k; i++)
			s->exec[i] =
				xstrdup(json_object_get_string(json_object_array_get_idx(v, i)));
		if (k == 0) {
			free(s->exec);
			s->exec = NULL;
		}
	}
	return 0;
}

void portfwd_spec_free(struct portfwd_spec *s)
{
	free(s->ports);
	free(s->dir);
	strv_free(s->exec);
	memset(s, 0, sizeof *s);
}
