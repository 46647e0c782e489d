/* client.c - connecting to keepers, and a mirror's io through the socket. */
#include "client.h"

#include "../rpc/proto.h"
#include "../util/log.h"
#include "../util/util.h"
#include "proto.h"
#include "sync.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define OPEN_TIMEOUT_MS 3000

void keeper_info_free(struct keeper_info *info)
{
	free(info->handle);
	free(info->label);
	if (info->token)
		explicit_bzero(info->token, strlen(info->token));
	free(info->token);
	free(info->container);
	free(info->ports_refused);
	free(info->meta);
	memset(info, 0, sizeof *info);
}

int keeper_send(int fd, int type, const void *data, size_t len)
{
	struct buf f = {0};
	keeper_frame(&f, type, data, len);
	int rc = fd_write_all(fd, f.data, f.len) < 0 ? -EPIPE : 0;
	buf_free(&f);
	return rc;
}

/*
 * Toward one frame in in (empty at its start), read exactly: what follows
 * stays in the socket, for the loop's reader after an open. One read, as
 * poll said fd can give: 1 when in holds the whole frame, 0 for more,
 * -EPIPE when the keeper closed, -EPROTO for a length no frame has.
 */
static int frame_step(int fd, struct buf *in)
{
	uint32_t n = 0;
	size_t want = sizeof n;
	if (in->len >= sizeof n) {
		memcpy(&n, in->data, sizeof n);
		if (n < 1 || n > KEEPER_FRAME_MAX)
			return -EPROTO;
		want += n;
	}
	buf_reserve(in, want - in->len);
	ssize_t r = read(fd, in->data + in->len, want - in->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return -EPIPE;
	in->len += (size_t)r;
	in->data[in->len] = '\0';
	return in->len == want && want > sizeof n ? 1 : 0;
}

static char *dup_str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? xstrdup(json_object_get_string(v))
		       : NULL;
}

static int get_int(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_int(v) : 0;
}

static void parse_hello(const char *data, size_t len, struct keeper_info *info)
{
	char *s = xstrndup(data, len);
	json_object *o = json_tokener_parse(s);
	free(s);
	info->version = get_int(o, "version");
	info->pane = get_int(o, "pane");
	info->handle = dup_str(o, "handle");
	info->label = dup_str(o, "label");
	info->token = dup_str(o, "token");
	info->container = dup_str(o, "container");
	info->ports_refused = dup_str(o, "ports_refused");
	info->sandboxed = get_int(o, "sandboxed");
	info->agent_pane = get_int(o, "agent_pane");
	info->exited = get_int(o, "exited");
	info->status = get_int(o, "status");
	info->pid = get_int(o, "pid");
	info->keeper_pid = get_int(o, "keeper");
	json_object *n;
	info->egress_ok =
		json_object_object_get_ex(o, "egress_ok", &n) ? json_object_get_int64(n) : -1;
	info->egress_refused =
		json_object_object_get_ex(o, "egress_refused", &n) ? json_object_get_int64(n) : -1;
	json_object *m;
	if (json_object_object_get_ex(o, "meta", &m) && m)
		info->meta = xstrdup(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/*
 * A whole frame in in, to an opener: 1 when it is done (an update applied
 * to mirror, or without one the hello read into info), 0 for more, <0.
 */
static int on_frame(const struct buf *in, struct pane *mirror, struct keeper_info *info)
{
	int type;
	const char *data;
	size_t len, off = 0;
	if (keeper_frame_next(in, &off, &type, &data, &len) != 1)
		return -EPROTO;
	if (type == KM_HELLO && info) {
		parse_hello(data, len, info);
		return mirror == NULL;
	}
	if (type == KM_UPDATE && mirror)
		return sync_apply(mirror, data, len) < 0 ? -EPROTO : 1;
	return type == KM_BYE ? -EPIPE : 0;
}

/* Frames from a blocking fd until on_frame is done: 0, or -errno (-ETIMEDOUT). */
static int read_until(int fd, struct pane *mirror, struct keeper_info *info, int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	struct buf in = {0};
	int rc = 0;
	while (rc == 0) {
		uint64_t now = now_ms();
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int p = now < deadline ? poll(&pf, 1, (int)(deadline - now)) : 0;
		if (p < 0 && errno == EINTR)
			continue;
		if (p <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		rc = frame_step(fd, &in);
		if (rc == 1) {
			rc = on_frame(&in, mirror, info);
			buf_consume(&in, in.len);
		}
	}
	buf_free(&in);
	return rc < 0 ? rc : 0;
}

static char *open_failure(const char *path, int rc)
{
	return xasprintf("%s: %s", path,
			 rc == -ETIMEDOUT ? "the keeper did not answer in time"
			 : rc == -EPROTO  ? "the keeper sent something malformed"
					  : "the keeper closed the connection");
}

int keeper_open(const char *path, const char *role, struct pane *mirror, struct keeper_info *info,
		char **cause)
{
	memset(info, 0, sizeof *info);
	int fd = keeper_conn_open(path, role, cause);
	if (fd < 0)
		return fd;
	int rc = read_until(fd, mirror, info, OPEN_TIMEOUT_MS);
	if (rc == 0 && info->version < 1)
		rc = -EPROTO;
	if (rc < 0) {
		close(fd);
		keeper_info_free(info);
		*cause = open_failure(path, rc);
		return rc;
	}
	return fd;
}

/* A keeper that died without cleaning up: its socket and the link naming its agent go. */
static void forget_dead(const char *path)
{
	unlink(path);
	char *link = keeper_beside(path, "agent");
	if (link)
		unlink(link);
	free(link);
}

static int by_pane(const void *x, const void *y)
{
	return ((const struct keeper_entry *)x)->info.pane -
	       ((const struct keeper_entry *)y)->info.pane;
}

/* The keeper at path is another agent's than handle, by its link (no connection). */
static bool others(const char *path, const char *handle)
{
	char *link = keeper_beside(path, "agent"), target[256];
	ssize_t n = link ? readlink(link, target, sizeof target - 1) : -1;
	free(link);
	if (n <= 0)
		return false; /* no link: a keeper of an older start, asked */
	target[n] = '\0';
	return strcmp(target, handle) != 0;
}

/* The sockets in dir (those of handle's agent, when not NULL). */
static size_t sockets_of(const char *dir, const char *handle, char ***out)
{
	*out = NULL;
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (atoi(e->d_name) > 0 && len > 6 && !strcmp(e->d_name + len - 6, ".agent")) {
			/* A link with no socket: its keeper died, its socket went since. */
			char *sock = xasprintf("%.*s.sock", (int)(len - 6), e->d_name);
			struct stat st;
			if (fstatat(dirfd(d), sock, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
			    errno == ENOENT)
				unlinkat(dirfd(d), e->d_name, 0);
			free(sock);
			continue;
		}
		if (atoi(e->d_name) <= 0 || len < 6 || strcmp(e->d_name + len - 5, ".sock"))
			continue;
		char *path = xasprintf("%s/%s", dir, e->d_name);
		if (handle && others(path, handle)) {
			free(path);
			continue;
		}
		*out = xrealloc(*out, (n + 1) * sizeof **out);
		(*out)[n++] = path;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Open e[0..n) (path set) at once: each connected, then every hello (and
 * first update) read as it comes, in one poll. Each keeper answers on its
 * own, on either core, while the others are asked: the wait is about one
 * answer's, not n. Those that failed get fd -1.
 */
static void open_together(struct keeper_entry *e, size_t n, const char *role)
{
	struct pollfd *pf = xcalloc(n, sizeof *pf);
	struct buf *in = xcalloc(n, sizeof *in);
	int *rc = xcalloc(n, sizeof *rc);
	size_t waiting = 0;
	for (size_t i = 0; i < n; i++) {
		char *cause = NULL;
		e[i].fd = keeper_conn_open(e[i].path, role, &cause);
		pf[i] = (struct pollfd){.fd = e[i].fd, .events = POLLIN};
		if (e[i].fd >= 0) {
			waiting++;
			continue;
		}
		if (e[i].fd == -ECONNREFUSED || e[i].fd == -ENOENT)
			forget_dead(e[i].path); /* its keeper died without cleaning up */
		else
			log_msg("%s", cause);
		free(cause);
	}
	uint64_t deadline = now_ms() + OPEN_TIMEOUT_MS;
	while (waiting > 0) {
		uint64_t now = now_ms();
		int p = now < deadline ? poll(pf, n, (int)(deadline - now)) : 0;
		if (p < 0 && errno == EINTR)
			continue;
		if (p <= 0)
			break;
		for (size_t i = 0; i < n; i++) {
			if (pf[i].fd < 0 || pf[i].revents == 0)
				continue;
			int r = frame_step(e[i].fd, &in[i]);
			if (r == 1) {
				r = on_frame(&in[i], e[i].mirror, &e[i].info);
				buf_consume(&in[i], in[i].len);
			}
			if (r == 1 && e[i].info.version < 1)
				r = -EPROTO;
			if (r != 0) {
				rc[i] = r;
				pf[i].fd = -1;
				waiting--;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		buf_free(&in[i]);
		if (e[i].fd < 0 || rc[i] == 1)
			continue;
		char *cause = open_failure(e[i].path, rc[i] ? rc[i] : -ETIMEDOUT);
		log_msg("%s", cause);
		free(cause);
		close(e[i].fd);
		e[i].fd = -1;
	}
	free(pf);
	free(in);
	free(rc);
}

/* Sockets asked at a time: well inside any limit on open files. */
#define OPEN_AT_ONCE 256

size_t keeper_open_all(const char *dir, const char *handle, const char *role, int scrollback,
		       struct keeper_entry **out)
{
	char **paths;
	size_t np = sockets_of(dir, handle, &paths), n = 0;
	bool query = !strcmp(role, "query");
	*out = np ? xcalloc(np, sizeof **out) : NULL;
	for (size_t at = 0; at < np; at += OPEN_AT_ONCE) {
		size_t k = WRX_MIN(np - at, (size_t)OPEN_AT_ONCE);
		struct keeper_entry *e = *out + n;
		for (size_t i = 0; i < k; i++)
			e[i] = (struct keeper_entry){
				.path = paths[at + i],
				.mirror = query ? NULL
						: pane_mirror_new(1, 1, scrollback, NULL, NULL)};
		open_together(e, k, role);
		for (size_t i = 0; i < k; i++) {
			if (e[i].fd >= 0 && query) {
				close(e[i].fd);
				e[i].fd = -1;
			} else if (e[i].fd < 0) {
				free(e[i].path);
				if (e[i].mirror)
					pane_free(e[i].mirror);
				keeper_info_free(&e[i].info);
				continue;
			}
			(*out)[n++] = e[i];
		}
	}
	free(paths);
	if (n)
		qsort(*out, n, sizeof **out, by_pane);
	return n;
}

size_t keeper_list_of(const char *dir, const char *handle, struct keeper_entry **out)
{
	return keeper_open_all(dir, handle, "query", 0, out);
}

size_t keeper_list(const char *dir, struct keeper_entry **out)
{
	return keeper_list_of(dir, NULL, out);
}

bool keeper_any(const char *dir)
{
	char **paths;
	size_t n = sockets_of(dir, NULL, &paths);
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		char *cause = NULL;
		int fd = any ? -EALREADY : rpc_connect_unix(paths[i], &cause);
		free(cause);
		if (fd >= 0) {
			close(fd);
			any = true;
		} else if (fd == -ECONNREFUSED || fd == -ENOENT) {
			forget_dead(paths[i]); /* its keeper died without cleaning up */
		}
		free(paths[i]);
	}
	free(paths);
	return any;
}

void keeper_list_free(struct keeper_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		keeper_info_free(&e[i].info);
		if (e[i].fd >= 0)
			close(e[i].fd);
		if (e[i].mirror)
			pane_free(e[i].mirror);
	}
	free(e);
}

struct keeper_conn {
	uv_pipe_t h;
	struct pane *mirror; /* borrowed; NULL once its io closed */
	struct buf in;
	keeper_gone_fn *gone;
	void *data;
	keeper_egress_fn *egress, *meta;
	keeper_hello_fn *hello;
	bool closed;
	pid_t pid; /* the keeper's, for when its socket is full */
};

static void on_closed(uv_handle_t *h)
{
	struct keeper_conn *c = h->data;
	buf_free(&c->in);
	free(c);
}

static void conn_close(struct keeper_conn *c)
{
	if (c->closed)
		return;
	c->closed = true;
	uv_close((uv_handle_t *)&c->h, on_closed);
}

struct wreq {
	uv_write_t req;
	char data[];
};

static void on_written(uv_write_t *req, int status)
{
	(void)status; /* a failed write shows as the read side's end */
	free(req);
}

void keeper_conn_send(struct keeper_conn *c, int type, const void *data, size_t len)
{
	if (c->closed)
		return;
	struct buf f = {0};
	keeper_frame(&f, type, data, len);
	struct wreq *w = xmalloc(sizeof *w + f.len);
	memcpy(w->data, f.data, f.len);
	uv_buf_t b = uv_buf_init(w->data, (unsigned)f.len);
	if (uv_write(&w->req, (uv_stream_t *)&c->h, &b, 1, on_written) < 0)
		free(w);
	buf_free(&f);
}

void keeper_conn_on_egress(struct keeper_conn *c, keeper_egress_fn *fn)
{
	c->egress = fn;
}

void keeper_conn_on_meta(struct keeper_conn *c, keeper_egress_fn *fn)
{
	c->meta = fn;
}

void keeper_conn_on_hello(struct keeper_conn *c, keeper_hello_fn *fn)
{
	c->hello = fn;
}

void keeper_conn_release(struct keeper_conn *c)
{
	if (c->mirror)
		pane_unset_io(c->mirror);
	c->mirror = NULL;
	conn_close(c);
}

int keeper_conn_open(const char *path, const char *role, char **cause)
{
	int fd = rpc_connect_unix(path, cause);
	if (fd < 0)
		return fd;
	/*
	 * The keeper's key, where the dashboard that started it keeps it
	 * (proto.h); a query needs none: it is told all but the pane's token.
	 */
	char key[RPC_TOKEN_LEN + 1];
	char *hello = strcmp(role, "query") != 0 && keeper_key_read(path, key) == 0
			      ? xasprintf("{\"version\":%d,\"role\":\"%s\",\"key\":\"%s\"}",
					  KEEPER_VERSION, role, key)
			      : xasprintf("{\"version\":%d,\"role\":\"%s\"}", KEEPER_VERSION, role);
	int rc = keeper_send(fd, KM_HELLO, hello, strlen(hello));
	free(hello);
	if (rc < 0) {
		close(fd);
		*cause = xasprintf("%s: the keeper closed the connection", path);
		return rc;
	}
	return fd;
}

bool keeper_conn_pending(const struct keeper_conn *c)
{
	return !c->closed && uv_stream_get_write_queue_size((const uv_stream_t *)&c->h) > 0;
}

void keeper_conn_set_pid(struct keeper_conn *c, int pid)
{
	c->pid = pid;
}

void keeper_conn_kill(struct keeper_conn *c)
{
	/*
	 * Now, not queued: closing the connection next would cancel a queued
	 * write. The keeper reads it even if this end closes with an update
	 * unread. A socket too full to take it: SIGTERM, which ends it alike.
	 */
	struct buf f = {0};
	keeper_frame(&f, KM_KILL, NULL, 0);
	uv_buf_t b = uv_buf_init(f.data, (unsigned)f.len);
	int n = c->closed ? -1 : uv_try_write((uv_stream_t *)&c->h, &b, 1);
	if (n != (int)f.len && c->pid > 0)
		kill(c->pid, SIGTERM);
	buf_free(&f);
}

static void went(struct keeper_conn *c, const char *why)
{
	struct pane *m = c->mirror;
	if (c->gone)
		c->gone(c, why, c->data);
	if (m && c->mirror)
		pane_mirror_lost(m);
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct keeper_conn *c = h->data;
	(void)want;
	keeper_read_room(&c->in, 256 * 1024, b);
}

static void io_resize(void *ctx, int rows, int cols);

/* One frame from the keeper: 0, or 1 once the connection went (or -1: malformed). */
static int conn_frame(void *arg, int type, const char *data, size_t len)
{
	struct keeper_conn *c = arg;
	if (type == KM_UPDATE && c->mirror) {
		if (sync_apply(c->mirror, data, len) < 0)
			return -1;
	} else if (type == KM_HELLO && c->hello) {
		struct keeper_info info = {0};
		parse_hello(data, len, &info);
		keeper_hello_fn *fn = c->hello;
		c->hello = NULL; /* one hello a connection */
		fn(c, &info, c->data);
		keeper_info_free(&info);
	} else if (type == KM_EGRESS && c->egress) {
		c->egress(c, data, len, c->data);
	} else if (type == KM_META && c->meta) {
		c->meta(c, data, len, c->data);
	} else if (type == KM_CLIPBOARD && c->mirror) {
		pane_mirror_clipboard(c->mirror, data, len);
	} else if (type == KM_ROLE && c->mirror && len == 6 && !memcmp(data, "writer", 6)) {
		/* Ours again: the size is ours too. */
		int rows, cols;
		pane_mirror_wanted(c->mirror, &rows, &cols);
		io_resize(c, rows, cols);
	} else if (type == KM_BYE) {
		char *why = xstrndup(data, len);
		uv_read_stop((uv_stream_t *)&c->h);
		went(c, why);
		free(why);
		return 1;
	}
	return c->closed;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct keeper_conn *c = s->data;
	(void)b;
	if (n < 0) {
		uv_read_stop(s);
		went(c, NULL);
		return;
	}
	if (c->closed || keeper_frames_read(&c->in, (size_t)n, conn_frame, c) >= 0 || c->closed)
		return;
	uv_read_stop(s);
	went(c, "the keeper sent something malformed");
}

static int io_write(void *ctx, const char *buf, size_t len)
{
	keeper_conn_send(ctx, KM_WRITE, buf, len);
	return 0;
}

static void io_resize(void *ctx, int rows, int cols)
{
	uint16_t rc[2] = {(uint16_t)WRX_MIN(rows, 65535), (uint16_t)WRX_MIN(cols, 65535)};
	keeper_conn_send(ctx, KM_RESIZE, rc, sizeof rc);
}

static void io_input(void *ctx, const struct pane_input *in)
{
	if (in->kind == PANE_IN_VIEW) {
		uint8_t shown = in->pressed;
		keeper_conn_send(ctx, KM_VIEW, &shown, 1);
		return;
	}
	struct buf b = {0};
	keeper_input_put(&b, in);
	keeper_conn_send(ctx, KM_INPUT, b.data, b.len);
	buf_free(&b);
}

static void io_close(void *ctx)
{
	struct keeper_conn *c = ctx;
	c->mirror = NULL;
	conn_close(c);
}

struct keeper_conn *keeper_conn_new(uv_loop_t *loop, int fd, struct pane *mirror,
				    keeper_gone_fn *gone, void *data)
{
	struct keeper_conn *c = xcalloc(1, sizeof *c);
	c->mirror = mirror;
	c->gone = gone;
	c->data = data;
	uv_pipe_init(loop, &c->h, 0);
	c->h.data = c;
	int rc = uv_pipe_open(&c->h, fd);
	if (rc == 0)
		rc = uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
	struct pane_io io = {.write = io_write,
			     .resize = io_resize,
			     .close = io_close,
			     .input = io_input,
			     .ctx = c};
	pane_set_io(mirror, &io);
	if (rc < 0)
		went(c, uv_strerror(rc));
	return c;
}
