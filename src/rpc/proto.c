/*
 * proto.c - the RPC bridge's protocol: tokens, request decoding, replies,
 * and the blocking client.
 *
 * Decoding is strict: every field has one JSON type, strings have a length
 * limit, and anything else is an error reply naming the field. The server
 * calls rpc_parse_line + rpc_decode on every line a guest sends, so both
 * are what the fuzz target (tests/fuzz/fuzz_rpc.c) exercises.
 */
#include "proto.h"

#include "../util/util.h"
#include "status.h"

#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int rpc_token_new(char *out)
{
	unsigned char raw[RPC_TOKEN_LEN / 2];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof raw; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[RPC_TOKEN_LEN] = '\0';
	return 0;
}

bool rpc_token_wellformed(const char *s, size_t len)
{
	if (len != RPC_TOKEN_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool rpc_token_equal(const char *a, const char *b)
{
	volatile unsigned char diff = 0;
	for (size_t i = 0; i < RPC_TOKEN_LEN; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return diff == 0;
}

int rpc_next_line(const struct buf *in, size_t cap, const char **line, size_t *len)
{
	const char *nl = in->len ? memchr(in->data, '\n', in->len) : NULL;
	if (nl == NULL)
		return in->len > cap ? -EMSGSIZE : 0;
	*line = in->data;
	*len = (size_t)(nl - in->data);
	return *len > cap ? -EMSGSIZE : 1;
}

json_object *rpc_parse_line(const char *line, size_t len, const char **err)
{
	if (len > RPC_LINE_MAX) {
		*err = "request line too long";
		return NULL;
	}
	json_tokener *tok = json_tokener_new_ex(RPC_JSON_DEPTH);
	if (tok == NULL) {
		*err = "out of memory";
		return NULL;
	}
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	/* Trailing bytes after the object (other than spaces) are garbage too. */
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (o && used < len && (line[used] == ' ' || line[used] == '\t' || line[used] == '\r'))
		used++;
	if (o == NULL || jerr != json_tokener_success || used != len) {
		json_object_put(o);
		*err = jerr == json_tokener_error_depth ? "JSON nested too deeply"
							: "malformed JSON";
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		*err = "a request is a JSON object";
		return NULL;
	}
	return o;
}

static const char *const type_names[] = {
	[RPC_HEARTBEAT] = "heartbeat",
	[RPC_SET_STATUS] = "set_status",
	[RPC_SET_TITLE] = "set_title",
	[RPC_NOTIFY] = "notify",
	[RPC_SPAWN_AGENT] = "spawn_agent",
	[RPC_MERGE] = "merge",
	[RPC_CLOSE] = "close",
	[RPC_EXEC] = "exec",
	[RPC_CLIPBOARD_READ] = "clipboard_read",
};

const char *rpc_type_name(enum rpc_type t)
{
	return (size_t)t < WRX_ARRAY_LEN(type_names) ? type_names[t] : "?";
}

/*
 * Field readers: absent is fine unless required; present with another type
 * is an error. Messages are static so *err needs no freeing.
 */
enum { OPTIONAL, REQUIRED };

bool rpc_session_wellformed(const char *s)
{
	return str_is_word(s, RPC_SESSION_MAX);
}

static int get_str(json_object *o, const char *key, int need, size_t max, const char **out,
		   const char **err)
{
	json_object *v;
	*out = NULL;
	if (!json_object_object_get_ex(o, key, &v) || v == NULL) {
		if (need == REQUIRED) {
			*err = "a required string field is missing";
			return -EINVAL;
		}
		return 0;
	}
	if (!json_object_is_type(v, json_type_string)) {
		*err = "a field has the wrong type (string expected)";
		return -EINVAL;
	}
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);
	if (len > max || strlen(s) != len) {
		*err = len > max ? "a string field is too long" : "a string field contains NUL";
		return -EINVAL;
	}
	*out = s;
	return 0;
}

static int get_bool(json_object *o, const char *key, bool *out, const char **err)
{
	json_object *v;
	*out = false;
	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		*err = "a field has the wrong type (boolean expected)";
		return -EINVAL;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

json_object *rpc_usage_json(const struct rpc_usage *u)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "in", json_object_new_int64(u->in));
	json_object_object_add(o, "out", json_object_new_int64(u->out));
	if (u->cost_micro >= 0)
		json_object_object_add(o, "cost_micro", json_object_new_int64(u->cost_micro));
	return o;
}

json_object *rpc_usage_public(const struct rpc_usage *u)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "input_tokens", json_object_new_int64(u->in));
	json_object_object_add(o, "output_tokens", json_object_new_int64(u->out));
	if (u->cost_micro >= 0) {
		/* Written as dollars with the micro-dollars it has, no more: 0.42, not 0.41999... */
		char ds[32];
		int n = snprintf(ds, sizeof ds, "%lld.%06lld", (long long)(u->cost_micro / 1000000),
				 (long long)(u->cost_micro % 1000000));
		while (n > 0 && ds[n - 1] == '0' && ds[n - 2] != '.')
			ds[--n] = '\0';
		json_object_object_add(o, "cost_usd",
				       json_object_new_double_s((double)u->cost_micro / 1e6, ds));
	}
	return o;
}

bool rpc_usage_from_public(json_object *o, struct rpc_usage *u)
{
	json_object *in, *out, *cost;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "input_tokens", &in) ||
	    !json_object_object_get_ex(o, "output_tokens", &out))
		return false;
	u->in = json_object_get_int64(in);
	u->out = json_object_get_int64(out);
	u->cost_micro = json_object_object_get_ex(o, "cost_usd", &cost) && cost
				? (int64_t)(json_object_get_double(cost) * 1e6 + 0.5)
				: -1;
	return true;
}

void rpc_usage_short(const struct rpc_usage *u, char *out, size_t n)
{
	long long t = (long long)(u->in + u->out);
	if (u->cost_micro >= 0)
		snprintf(out, n, "$%lld.%02lld", (long long)(u->cost_micro / 1000000),
			 (long long)(u->cost_micro % 1000000 + 5000) / 10000 % 100);
	else if (t >= 1000000)
		snprintf(out, n, "%lld.%lldM tok", t / 1000000, t / 100000 % 10);
	else if (t >= 1000)
		snprintf(out, n, "%lldk tok", t / 1000);
	else
		snprintf(out, n, "%lld tok", t);
}

/* A count that is a count: a non-negative integer. */
static bool count_of(json_object *o, const char *key, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return true;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return false;
	*out = json_object_get_int64(v);
	return true;
}

/* set_status's usage {in, out, cost_micro?}: what the session used, or nothing. */
static int get_usage(json_object *o, struct rpc_req *r, const char **err)
{
	json_object *u;
	r->usage = (struct rpc_usage){.cost_micro = -1};
	if (!json_object_object_get_ex(o, "usage", &u) || u == NULL)
		return 0;
	if (!json_object_is_type(u, json_type_object) || !count_of(u, "in", &r->usage.in) ||
	    !count_of(u, "out", &r->usage.out) ||
	    !count_of(u, "cost_micro", &r->usage.cost_micro)) {
		*err = "usage is not {in, out, cost_micro}, counts";
		return -EINVAL;
	}
	r->has_usage = true;
	return 0;
}

static int decode_fields(json_object *o, struct rpc_req *r, const char **err)
{
	switch (r->type) {
	case RPC_HEARTBEAT:
		return 0;
	case RPC_SET_STATUS: {
		if (get_str(o, "status", REQUIRED, 16, &r->status, err) < 0 ||
		    get_str(o, "session", OPTIONAL, RPC_SESSION_MAX, &r->session, err) < 0 ||
		    get_str(o, "dir", OPTIONAL, RPC_DIR_MAX, &r->dir, err) < 0 ||
		    get_str(o, "why", OPTIONAL, RPC_WHY_MAX, &r->why, err) < 0 ||
		    get_bool(o, "quota", &r->quota, err) < 0)
			return -EINVAL;
		if (r->dir && r->dir[0] != '/') {
			*err = "dir is not an absolute path";
			return -EINVAL;
		}
		if (get_usage(o, r, err) < 0)
			return -EINVAL;
		json_object *at;
		if (json_object_object_get_ex(o, "at", &at) && at) {
			if (!json_object_is_type(at, json_type_int) ||
			    json_object_get_int64(at) < 0) {
				*err = "at is not a time (milliseconds)";
				return -EINVAL;
			}
			r->at = json_object_get_int64(at);
		}
		if (r->session && !rpc_session_wellformed(r->session)) {
			*err = "session is not a session id ([A-Za-z0-9._-], at most 128)";
			return -EINVAL;
		}
		enum wrx_status st;
		if (status_parse(r->status, &st) == 0)
			return 0;
		*err = "status must be working, waiting, done, failed or clear";
		return -EINVAL;
	}
	case RPC_SET_TITLE:
		return get_str(o, "title", REQUIRED, RPC_TITLE_MAX, &r->title, err);
	case RPC_NOTIFY:
		return get_str(o, "text", OPTIONAL, RPC_TEXT_MAX, &r->text, err);
	case RPC_SPAWN_AGENT:
		if (get_str(o, "branch", REQUIRED, 255, &r->branch, err) < 0 ||
		    get_str(o, "prompt", OPTIONAL, RPC_LINE_MAX, &r->prompt, err) < 0)
			return -EINVAL;
		return get_bool(o, "background", &r->background, err);
	case RPC_MERGE:
		if (get_str(o, "handle", OPTIONAL, 255, &r->handle, err) < 0 ||
		    get_bool(o, "rebase", &r->rebase, err) < 0 ||
		    get_bool(o, "squash", &r->squash, err) < 0 ||
		    get_bool(o, "keep", &r->keep, err) < 0 ||
		    get_bool(o, "ignore_uncommitted", &r->ignore_uncommitted, err) < 0)
			return -EINVAL;
		if (r->rebase && r->squash) {
			*err = "rebase and squash exclude each other";
			return -EINVAL;
		}
		return 0;
	case RPC_CLOSE:
		return get_str(o, "handle", OPTIONAL, 255, &r->handle, err);
	case RPC_EXEC: {
		/* Longer than a name may be, so that the verb says why it is not one. */
		if (get_str(o, "command", REQUIRED, 256, &r->command, err) < 0)
			return -EINVAL;
		json_object *a;
		if (!json_object_object_get_ex(o, "args", &a) || a == NULL)
			return 0;
		if (!json_object_is_type(a, json_type_array) ||
		    json_object_array_length(a) > 4096) {
			*err = "args must be an array of at most 4096 strings";
			return -EINVAL;
		}
		size_t n = json_object_array_length(a);
		r->args = xcalloc(n + 1, sizeof *r->args);
		for (size_t i = 0; i < n; i++) {
			json_object *s = json_object_array_get_idx(a, i);
			if (!json_object_is_type(s, json_type_string) ||
			    strlen(json_object_get_string(s)) !=
				    (size_t)json_object_get_string_len(s)) {
				*err = "args must be an array of strings";
				return -EINVAL;
			}
			r->args[r->nargs++] = json_object_get_string(s);
		}
		return 0;
	}
	case RPC_CLIPBOARD_READ:
		return get_str(o, "mime", OPTIONAL, 128, &r->mime, err);
	}
	*err = "unknown request type";
	return -EINVAL;
}

int rpc_decode(json_object *o, struct rpc_req *r, const char **err)
{
	memset(r, 0, sizeof *r);
	const char *type;
	if (get_str(o, "type", REQUIRED, 32, &type, err) < 0) {
		*err = "a request needs \"type\" (a string)";
		return -EINVAL;
	}
	size_t i;
	for (i = 0; i < WRX_ARRAY_LEN(type_names); i++)
		if (strcmp(type, type_names[i]) == 0)
			break;
	if (i == WRX_ARRAY_LEN(type_names)) {
		*err = "unknown request type";
		return -EINVAL;
	}
	r->type = (enum rpc_type)i;
	if (decode_fields(o, r, err) < 0) {
		rpc_req_free(r);
		return -EINVAL;
	}
	return 0;
}

void rpc_req_free(struct rpc_req *r)
{
	free(r->args);
	r->args = NULL;
	r->nargs = 0;
}

json_object *rpc_reply(const char *type)
{
	json_object *r = json_object_new_object();
	json_object_object_add(r, "type", json_object_new_string(type));
	return r;
}

json_object *rpc_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	json_object *r = rpc_reply("error");
	json_object_object_add(r, "message", json_object_new_string(msg));
	free(msg);
	return r;
}

/* ---- blocking line I/O ---- */

int rpc_send(int fd, json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	struct buf line = {0};
	buf_addstr(&line, s);
	buf_addch(&line, '\n');
	int rc = fd_write_all(fd, line.data, line.len);
	buf_free(&line);
	return rc;
}

int rpc_recv(int fd, struct buf *in, uint64_t deadline, json_object **out)
{
	*out = NULL;
	for (;;) {
		const char *line;
		size_t len;
		int r = rpc_next_line(in, RPC_LINE_MAX, &line, &len);
		if (r < 0)
			return -EPROTO;
		if (r > 0) {
			const char *err;
			*out = rpc_parse_line(line, len, &err);
			buf_consume(in, len + 1);
			return *out ? 0 : -EPROTO;
		}
		uint64_t now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int pr = poll(&pf, 1, (int)WRX_MIN(deadline - now, 60000));
		if (pr < 0 && errno != EINTR)
			return -errno;
		if (pr <= 0)
			continue;
		char tmp[65536];
		ssize_t n = read(fd, tmp, sizeof tmp);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -EIO;
		buf_add(in, tmp, (size_t)n);
	}
}

/* ---- the client ---- */

struct rpc_client {
	int fd;
	struct buf in;
};

int rpc_connect_unix(const char *path, char **cause)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		*cause = xasprintf("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*cause = xasprintf("socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		*cause = xasprintf("%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/*
 * host is an IP address, or a name from /etc/hosts (host.lima.internal,
 * names a backend added with --add-host). No DNS: the static guest cannot
 * load glibc's resolver modules, and the host picks an address it knows.
 */
int rpc_resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	memset(ss, 0, sizeof *ss);
	const char *h = host;
	char addr[64];
	FILE *f = NULL;
	for (;;) {
		if (inet_pton(AF_INET, h, &in4->sin_addr) == 1) {
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			*len = sizeof *in4;
			break;
		}
		if (inet_pton(AF_INET6, h, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*len = sizeof *in6;
			break;
		}
		/* Next /etc/hosts line naming host. */
		if (f == NULL && (f = fopen("/etc/hosts", "r")) == NULL)
			return -EHOSTUNREACH;
		char line[512];
		h = NULL;
		while (h == NULL && fgets(line, sizeof line, f)) {
			char *save, *tok = strtok_r(line, " \t\r\n", &save);
			if (tok == NULL || *tok == '#')
				continue;
			snprintf(addr, sizeof addr, "%s", tok);
			while ((tok = strtok_r(NULL, " \t\r\n", &save)) != NULL && *tok != '#')
				if (strcmp(tok, host) == 0)
					h = addr;
		}
		if (h == NULL) {
			fclose(f);
			return -EHOSTUNREACH;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

static int connect_tcp(const char *host, const char *port, char **cause)
{
	char *end;
	long p = strtol(port, &end, 10);
	struct sockaddr_storage ss;
	socklen_t len;
	if (*port == '\0' || *end || p < 1 || p > 65535) {
		*cause = xasprintf("WORKREX_RPC_PORT '%s' is not a port", port);
		return -EINVAL;
	}
	if (rpc_resolve(host, (int)p, &ss, &len) < 0) {
		*cause = xasprintf("WORKREX_RPC_HOST '%s' is neither an address nor in /etc/hosts",
				   host);
		return -EHOSTUNREACH;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*cause = xasprintf("socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;
		*cause = xasprintf("%s:%s: %s", host, port, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

int rpc_client_open(struct rpc_client **out, const char *socket_path, const char *host,
		    const char *port, const char *token, int timeout_ms, char **cause)
{
	*out = NULL;
	int fd =
		socket_path ? rpc_connect_unix(socket_path, cause) : connect_tcp(host, port, cause);
	if (fd < 0)
		return fd;
	struct rpc_client *c = xcalloc(1, sizeof *c);
	c->fd = fd;
	json_object *auth = json_object_new_object(), *r = NULL;
	json_object_object_add(auth, "token", json_object_new_string(token));
	int rc = rpc_send(fd, auth);
	json_object_put(auth);
	if (rc == 0)
		rc = rpc_recv(fd, &c->in, now_ms() + (uint64_t)timeout_ms, &r);
	json_object *t;
	if (rc == 0 && (!json_object_object_get_ex(r, "type", &t) ||
			strcmp(json_object_get_string(t), "ok") != 0)) {
		json_object *m;
		*cause = xasprintf("the dashboard refused the token: %s",
				   json_object_object_get_ex(r, "message", &m)
					   ? json_object_get_string(m)
					   : "no reason given");
		rc = -EACCES;
	} else if (rc < 0) {
		*cause = xasprintf("authenticating to the dashboard: %s",
				   rc == -ETIMEDOUT ? "no answer in time" : strerror(-rc));
	}
	json_object_put(r);
	if (rc < 0) {
		rpc_client_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int rpc_client_open_env(struct rpc_client **out, int timeout_ms, char **cause)
{
	const char *sock = getenv("WORKREX_RPC_SOCKET"), *host = getenv("WORKREX_RPC_HOST"),
		   *port = getenv("WORKREX_RPC_PORT"), *token = getenv("WORKREX_RPC_TOKEN");
	*out = NULL;
	if (sock && !*sock)
		sock = NULL;
	if (token == NULL || (sock == NULL && (host == NULL || port == NULL)))
		return -ENOENT;
	int rc = rpc_client_open(out, sock, host, port, token, timeout_ms, cause);
	/*
	 * An agent on a server, its link to the dashboard down (or no
	 * dashboard at all): its pane's keeper there answers instead, and
	 * keeps what it is told for the next dashboard.
	 */
	const char *kept = getenv("WORKREX_RPC_KEEPER");
	char *why = NULL;
	/*
	 * A dashboard that just went: its keeper listens once the socket is
	 * free, within a few of its 250 ms tries; until then, asked again
	 * (2 s at most), so that a hook of that moment is not lost.
	 */
	for (int tries = 0; rc < 0 && kept && *kept && tries < 20; tries++) {
		int k = rpc_client_open(out, kept, NULL, NULL, token, timeout_ms, &why);
		if (k == 0) {
			free(*cause);
			*cause = NULL;
			rc = 0;
		} else if (k != -ENOENT && k != -ECONNREFUSED) {
			break;
		} else {
			free(why);
			why = NULL;
			usleep(100 * 1000);
		}
	}
	free(why);
	return rc;
}

static bool is_final(const char *type)
{
	return strcmp(type, "exec_stdout") != 0 && strcmp(type, "exec_stderr") != 0;
}

int rpc_client_call(struct rpc_client *c, json_object *req, json_object **reply,
		    void (*on_partial)(json_object *r, void *arg), void *arg, int timeout_ms,
		    char **cause)
{
	*reply = NULL;
	int rc = rpc_send(c->fd, req);
	if (rc < 0) {
		*cause = xasprintf("writing to the dashboard: %s", strerror(-rc));
		return rc;
	}
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		json_object *r;
		rc = rpc_recv(c->fd, &c->in, deadline, &r);
		if (rc < 0) {
			*cause = xstrdup(rc == -ETIMEDOUT ? "the dashboard did not answer in time"
					 : rc == -EPROTO  ? "the dashboard sent a malformed reply"
							  : "the dashboard closed the connection");
			return rc;
		}
		json_object *t;
		const char *type = json_object_object_get_ex(r, "type", &t) &&
						   json_object_is_type(t, json_type_string)
					   ? json_object_get_string(t)
					   : "";
		if (is_final(type)) {
			*reply = r;
			return 0;
		}
		if (on_partial)
			on_partial(r, arg);
		json_object_put(r);
	}
}

void rpc_client_close(struct rpc_client *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	buf_free(&c->in);
	free(c);
}
