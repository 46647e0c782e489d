/*
 * control.c - the control socket, server (on the dashboard's loop) and
 * client (blocking, in CLI processes).
 *
 * Each connection reads JSON lines into a buffer capped at CONTROL_LINE_MAX;
 * an overlong line or garbage gets an error reply, never a crash, and the
 * dashboard carries on. Stale sockets from a dashboard that died are
 * detected (nobody answers connect) and replaced.
 */
#include "control.h"

#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct control {
	uv_pipe_t server; /* server.data = this */
	char *path;       /* owned */
	control_handler *fn;
	void *data;
};

struct conn {
	uv_pipe_t pipe; /* pipe.data = this */
	struct control *ctl;
	struct buf in;
	bool closing;
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static char *runtime_dir(char **cause)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir = xdg && *xdg == '/' ? xasprintf("%s/workrex", xdg)
				       : xasprintf("/tmp/workrex-%ld", (long)getuid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	struct stat st;
	/* A directory someone else owns, or that others can enter, is not ours to trust. */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077)) {
		if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
		    chmod(dir, 0700) == 0)
			return dir;
		*cause = xasprintf("%s is not a private directory of this user", dir);
		free(dir);
		return NULL;
	}
	return dir;
}

char *control_path(const char *root, char **cause)
{
	char *dir = runtime_dir(cause);
	if (dir == NULL)
		return NULL;
	const char *base = strrchr(root, '/');
	base = base && base[1] ? base + 1 : "root";
	char name[40];
	snprintf(name, sizeof name, "%.24s", base);
	for (char *p = name; *p; p++)
		if (*p == '/' || *p < 0x20)
			*p = '_';
	char *path = xasprintf("%s/%s-%08x.sock", dir, name, fnv1a(root));
	free(dir);
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		*cause = xasprintf("socket path too long (%zu bytes): %s", strlen(path), path);
		free(path);
		return NULL;
	}
	return path;
}

static void conn_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	buf_free(&c->in);
	free(c);
}

static void conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->pipe, conn_closed);
}

struct write_req {
	uv_write_t req;
	char *data;
};

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	(void)status;
	free(w->data);
	free(w);
}

static void reply(struct conn *c, json_object *r)
{
	if (c->closing)
		return;
	struct write_req *w = xcalloc(1, sizeof *w);
	w->data = xasprintf("%s\n", json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
	uv_buf_t b = uv_buf_init(w->data, (unsigned)strlen(w->data));
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_written) < 0) {
		free(w->data);
		free(w);
	}
}

static json_object *error_reply(const char *msg)
{
	json_object *r = json_object_new_object();
	json_object_object_add(r, "error", json_object_new_string(msg));
	return r;
}

static void handle_line(struct conn *c, const char *line, size_t len)
{
	json_tokener *tok = json_tokener_new_ex(32);
	json_object *req = json_tokener_parse_ex(tok, line, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	json_object *r;
	if (req == NULL || jerr != json_tokener_success) {
		r = error_reply("malformed JSON");
	} else if (!json_object_is_type(req, json_type_object)) {
		r = error_reply("a request is a JSON object");
	} else {
		json_object *cmd;
		if (!json_object_object_get_ex(req, "cmd", &cmd) ||
		    !json_object_is_type(cmd, json_type_string)) {
			r = error_reply("a request needs \"cmd\"");
		} else {
			r = c->ctl->fn(req, c->ctl->data);
			if (r == NULL) {
				r = json_object_new_object();
				json_object_object_add(r, "ok", json_object_new_boolean(1));
			}
		}
	}
	json_object_put(req);
	reply(c, r);
	json_object_put(r);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[64 * 1024];
	*b = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;
	if (n < 0) {
		conn_close(c);
		return;
	}
	buf_add(&c->in, b->base, (size_t)n);
	char *nl;
	while (!c->closing && c->in.len && (nl = memchr(c->in.data, '\n', c->in.len)) != NULL) {
		size_t len = (size_t)(nl - c->in.data);
		handle_line(c, c->in.data, len);
		buf_consume(&c->in, len + 1);
	}
	if (c->in.len > CONTROL_LINE_MAX) {
		json_object *r = error_reply("request line too long");
		reply(c, r);
		json_object_put(r);
		log_msg("control: closed a connection sending an overlong line");
		conn_close(c);
	}
}

static void on_connection(uv_stream_t *server, int status)
{
	struct control *ctl = server->data;
	if (status < 0)
		return;
	struct conn *c = xcalloc(1, sizeof *c);
	c->ctl = ctl;
	uv_pipe_init(server->loop, &c->pipe, 0);
	c->pipe.data = c;
	if (uv_accept(server, (uv_stream_t *)&c->pipe) < 0) {
		conn_close(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
}

/* Does anybody answer on path? */
static bool alive(const char *path)
{
	json_object *req = json_object_new_object(), *r = NULL;
	json_object_object_add(req, "cmd", json_object_new_string("ping"));
	char *cause = NULL;
	int rc = control_request(path, req, &r, 1000, &cause);
	json_object_put(req);
	json_object_put(r);
	free(cause);
	return rc == 0;
}

static void server_closed(uv_handle_t *h)
{
	struct control *c = h->data;
	free(c);
}

struct control *control_listen(uv_loop_t *loop, const char *path, control_handler *fn, void *data,
			       char **cause)
{
	if (access(path, F_OK) == 0) {
		if (alive(path)) {
			*cause = xasprintf("a dashboard is already running for this project (%s)", path);
			return NULL;
		}
		unlink(path); /* stale: its dashboard died */
	}
	struct control *c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path);
	c->fn = fn;
	c->data = data;
	uv_pipe_init(loop, &c->server, 0);
	c->server.data = c;
	mode_t old = umask(0077);
	int rc = uv_pipe_bind(&c->server, path);
	umask(old);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&c->server, 64, on_connection);
	if (rc < 0) {
		*cause = xasprintf("control socket %s: %s", path, uv_strerror(rc));
		free(c->path);
		c->path = NULL;
		uv_close((uv_handle_t *)&c->server, server_closed);
		return NULL;
	}
	return c;
}

void control_close(struct control *c)
{
	if (c == NULL)
		return;
	if (c->path) {
		unlink(c->path);
		free(c->path);
	}
	uv_close((uv_handle_t *)&c->server, server_closed);
}

int control_request(const char *path, json_object *req, json_object **reply_out, int timeout_ms,
		    char **cause)
{
	*reply_out = NULL;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*cause = xasprintf("socket: %s", strerror(errno));
		return -errno;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		if (e == ENOENT || e == ECONNREFUSED)
			return -ENOENT;
		*cause = xasprintf("%s: %s", path, strerror(e));
		return -e;
	}
	char *line = xasprintf("%s\n", json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	size_t off = 0, len = strlen(line);
	while (off < len) {
		ssize_t w = write(fd, line + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*cause = xasprintf("writing to the dashboard: %s", strerror(errno));
			free(line);
			close(fd);
			return -EIO;
		}
		off += (size_t)w;
	}
	free(line);
	struct buf in = {0};
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline) {
			*cause = xstrdup("the dashboard did not answer in time");
			buf_free(&in);
			close(fd);
			return -ETIMEDOUT;
		}
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int pr = poll(&pf, 1, (int)(deadline - now));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		char tmp[65536];
		ssize_t n = read(fd, tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*cause = xstrdup("the dashboard closed the connection");
			buf_free(&in);
			close(fd);
			return -EIO;
		}
		buf_add(&in, tmp, (size_t)n);
		char *nl = memchr(in.data, '\n', in.len);
		if (nl) {
			*nl = '\0';
			*reply_out = json_tokener_parse(in.data);
			buf_free(&in);
			close(fd);
			if (*reply_out == NULL) {
				*cause = xstrdup("the dashboard sent a malformed reply");
				return -EPROTO;
			}
			return 0;
		}
	}
}
