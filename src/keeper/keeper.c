/*
 * keeper.c - the keeper process, and starting one.
 *
 * One libuv loop: the pty (term/pty.c), the listening socket, its clients,
 * a frame timer and the signals. Output is parsed here, once; each client
 * is sent what changed since its last update, straight away when the pane
 * was quiet, then at most once a frame while output keeps coming. A client
 * whose socket is still full is skipped and catches up in one update when
 * it drains (the serials of sync.c make that free), so a slow viewer never
 * slows the pane. Nothing runs while nothing happens: the timer stops
 * when a frame passes without change.
 */
#include "keeper.h"

#include "../net/portfwd.h"
#include "../net/spec.h"
#include "../rpc/server.h"
#include "../rpc/status.h"
#include "../term/pane.h"
#include "../term/pty.h"
#include "../util/fault.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/util.h"
#include "mark.h"
#include "proto.h"
#include "sync.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#define FRAME_MS 16
/* A client that does not show the pane takes a held update at most this often. */
#define HELD_MS 250
/* A client with this much unsent is skipped until it drains. */
#define CLIENT_QUEUE_MAX (1024 * 1024)
/* How long a killed program has to go after its hang-up, before SIGKILL. */
#define KILL_GRACE_MS 3000

/* A helper (a command run with no dashboard) writes like a writer, but neither resizes nor takes over. */
enum role { ROLE_NONE, ROLE_QUERY, ROLE_OBSERVER, ROLE_HELPER, ROLE_WRITER };

struct client {
	uv_pipe_t h;
	struct keeper *k;
	struct buf in;
	enum role role;
	int version;
	struct sync_since since;
	int events;   /* PANE_EV_* since its last update */
	bool pending; /* skipped while full: send when it drains */
	bool demoted; /* a writer another took over from: writes again after it */
	/*
	 * A write failed: the peer went, or stopped reading as it closed. Its
	 * connection ends when its reads do, after what it sent last (a
	 * KM_KILL as it closes) was read.
	 */
	bool broken;
	bool closing;
	bool keyed;        /* it showed the keeper's key */
	bool hidden;       /* it does not show the pane (KM_VIEW): held updates */
	uint64_t held_due; /* now_ms() from which its next held update may go */
	struct client *next;
};

struct keeper {
	uv_loop_t *loop;
	struct pane *pane;
	uv_pipe_t listener;
	uv_timer_t frame, grace;
	uv_signal_t sigchld, sigterm, sigint;
	struct client *clients;
	bool dirty;
	bool ending;
	pid_t pid; /* the program */
	char *sock;
	json_object *hello; /* what clients are told (the pane's token: only keyed ones) */
	char *key;          /* what a writer or helper must show (proto.h); NULL: none asked */
	char *pane_token;   /* the pane's RPC token, for keyed clients' hellos */
	char *meta;         /* KM_META's JSON, or NULL */
	/*
	 * A sandboxed agent pane's RPC socket (its container mounts it): the
	 * dashboard serves it; while none is the writer, the keeper does, for
	 * this pane's token only, and records status, title and notes in meta.
	 */
	char *rpc_sock;
	char *token, *handle;
	char *mark; /* the agent's "keeper runs" mark: its session id goes there (runner.c) */
	char *cwd;  /* its program's directory (an agent pane's: the worktree) */
	int pane_id;
	struct rpc_server *rpc;
	uv_timer_t rpc_retry;
	int rpc_tries;
	/*
	 * A sandboxed agent's network proxy under policy: deny (net/proxy.h):
	 * it lives here, with the agent, dashboard or not. Its events go to
	 * the writer; while there is none, the latest EGRESS_KEPT wait.
	 */
	struct proxy_spec proxy_spec;
	struct proxy *proxy;
	/* Its ports (config ports), on the host's loopback, relayed into its sandbox (net/portfwd.h). */
	struct portfwd *ports;
	struct stat proxy_st; /* its socket file: removed at the end only if still ours */
	struct buf egress;    /* KM_EGRESS frames not sent yet */
	int egress_kept;
	/*
	 * Its connections tunnelled and refused: those a writer was given (or
	 * that were dropped unsent), told in the hello so that a dashboard's
	 * count goes on where the last one's stopped; and those waiting.
	 */
	long egress_ok, egress_refused, waiting_ok, waiting_refused;
	/*
	 * What removes the program's container when the pane ends (a sandbox
	 * on a server, where no dashboard is there to do it), or NULL.
	 */
	char **stop;
};

#define EGRESS_KEPT 200

static void flush(struct keeper *k);
static void send_egress(struct keeper *k);
static void program_ended(struct keeper *k, int wstatus);
static void meta_tell(struct keeper *k);
static void rpc_serve(struct keeper *k);
static void rpc_leave(struct keeper *k);

/* A client with CLIENT_QUEUE_MAX unsent: skipped (pending) until it drains. */
static bool backlogged(struct client *c)
{
	return uv_stream_get_write_queue_size((uv_stream_t *)&c->h) >= CLIENT_QUEUE_MAX;
}

static bool has_writer(const struct keeper *k)
{
	for (const struct client *c = k->clients; c; c = c->next)
		if (c->role == ROLE_WRITER && !c->closing)
			return true;
	return false;
}

/* Enough of an error pipe to say one line and go. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	ssize_t w = write(STDOUT_FILENO, s, strlen(s));
	(void)w;
	free(s);
}

static void on_client_closed(uv_handle_t *h)
{
	struct client *c = h->data;
	buf_free(&c->in);
	free(c);
}

static void set_role(struct client *c, enum role role, bool demoted);

static void client_close(struct client *c)
{
	if (c->closing)
		return;
	c->closing = true;
	struct client **pp = &c->k->clients;
	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	/* The writer went: the one it took over from (the newest such) writes again. */
	if (c->role == ROLE_WRITER)
		for (struct client *o = c->k->clients; o; o = o->next)
			if (o->demoted && !o->closing) {
				set_role(o, ROLE_WRITER, false);
				break;
			}
	if (!has_writer(c->k))
		rpc_serve(c->k);
	uv_close((uv_handle_t *)&c->h, on_client_closed);
}

struct wreq {
	uv_write_t req;
	struct client *c;
	char *data; /* owned */
};

static void on_written(uv_write_t *req, int status)
{
	struct wreq *w = (struct wreq *)req;
	struct client *c = w->c;
	free(w->data);
	free(w);
	if (c->closing)
		return;
	if (status < 0) {
		c->broken = true;
		return;
	}
	if (c->pending && !backlogged(c)) {
		c->pending = false;
		flush(c->k);
	}
}

/* Send f's bytes, which the write takes (f is left empty). */
static void send_buf(struct client *c, struct buf *f)
{
	if (c->broken) {
		buf_free(f);
		return;
	}
	struct wreq *w = xmalloc(sizeof *w);
	w->data = f->data;
	w->c = c;
	uv_buf_t b = uv_buf_init(w->data, (unsigned)f->len);
	*f = (struct buf){0};
	if (uv_write(&w->req, (uv_stream_t *)&c->h, &b, 1, on_written) < 0) {
		free(w->data);
		free(w);
		c->broken = true;
	}
}

static void send_frame(struct client *c, int type, const void *data, size_t len)
{
	struct buf f = {0};
	keeper_frame(&f, type, data, len);
	send_buf(c, &f);
}

/* The update written straight into its frame: the flood path copies it once. */
static void send_update(struct client *c)
{
	struct buf f = {0};
	size_t at = keeper_frame_open(&f, KM_UPDATE);
	/* Its end is shown whole, hidden or not: its last lines say why. */
	bool held = c->hidden && !pane_exited(c->k->pane, NULL);
	if (!sync_write(c->k->pane, &c->since, c->events, held, &f)) {
		buf_free(&f);
		return;
	}
	c->events = 0;
	keeper_frame_close(&f, at);
	send_buf(c, &f);
}

static void flush(struct keeper *k)
{
	k->dirty = false;
	uint64_t now = now_ms();
	for (struct client *c = k->clients, *next; c; c = next) {
		next = c->next;
		if (c->role < ROLE_OBSERVER || c->broken)
			continue;
		if (backlogged(c)) {
			c->pending = true;
			continue;
		}
		if (c->hidden && now < c->held_due && !pane_exited(k->pane, NULL)) {
			k->dirty = true; /* its turn comes: the frame timer goes on until then */
			continue;
		}
		send_update(c);
		if (c->hidden)
			c->held_due = now + HELD_MS;
	}
}

/* The client shows the pane, or stops: a full update answers at once. */
static void set_view(struct client *c, const char *data, size_t len)
{
	if (len < 1 || c->role < ROLE_OBSERVER)
		return;
	bool hidden = data[0] == 0;
	if (hidden == c->hidden)
		return;
	c->hidden = hidden;
	c->held_due = 0;
	if (hidden)
		return;
	c->since.force = true;
	if (backlogged(c))
		c->pending = true;
	else
		send_update(c);
}

static void on_frame(uv_timer_t *t)
{
	struct keeper *k = t->data;
	if (!k->dirty)
		return; /* a quiet frame: the timer stops */
	flush(k);
	uv_timer_start(&k->frame, on_frame, FRAME_MS, 0);
}

static void changed(struct keeper *k)
{
	k->dirty = true;
	if (uv_is_active((uv_handle_t *)&k->frame))
		return;
	flush(k);
	uv_timer_start(&k->frame, on_frame, FRAME_MS, 0);
}

static void on_pane_event(struct pane *p, int events, void *data)
{
	struct keeper *k = data;
	(void)p;
	for (struct client *c = k->clients; c; c = c->next)
		c->events |= events;
	/* A clipboard write is for the dashboard to allow or not, and only it. */
	if (events & PANE_EV_CLIPBOARD) {
		size_t len;
		const char *text = pane_clipboard(k->pane, &len);
		for (struct client *c = k->clients; c; c = c->next)
			if (c->role == ROLE_WRITER && !c->broken)
				send_frame(c, KM_CLIPBOARD, text, len);
	}
	if (events & PANE_EV_EXIT) {
		int status;
		pane_exited(k->pane, &status);
		json_object_object_add(k->hello, "exited", json_object_new_boolean(1));
		json_object_object_add(k->hello, "status", json_object_new_int(status));
		k->pid = -1;
		program_ended(k, status);
		if (k->ending)
			uv_stop(k->loop);
	}
	changed(k);
}

static void on_grace(uv_timer_t *t)
{
	struct keeper *k = t->data;
	if (k->pid > 0)
		kill(-k->pid, SIGKILL);
	uv_stop(k->loop);
}

/*
 * The container's removal, detached (its own session, reaped here at once):
 * it outlives the keeper, whose end does not wait for the engine.
 */
static void run_stop(struct keeper *k)
{
	if (k->stop == NULL || k->stop[0] == NULL)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		if (fork() == 0) {
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, STDIN_FILENO);
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
			}
			execvp(k->stop[0], k->stop);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* End the program (its hang-up, then SIGKILL after a grace), then the keeper. */
static void end(struct keeper *k)
{
	if (k->ending)
		return;
	k->ending = true;
	rpc_leave(k);
	unlink(k->sock);
	char *link = keeper_beside(k->sock, "agent");
	if (link)
		unlink(link);
	free(link);
	uv_close((uv_handle_t *)&k->listener, NULL);
	if (k->pid <= 0) {
		uv_stop(k->loop);
		return;
	}
	kill(-k->pid, SIGHUP);
	kill(-k->pid, SIGCONT);
	run_stop(k);
	uv_timer_start(&k->grace, on_grace, KILL_GRACE_MS, 0);
}

static void hello_to(struct client *c)
{
	json_object *h = json_object_get(c->k->hello);
	json_object_object_add(h, "meta", c->k->meta ? json_tokener_parse(c->k->meta) : NULL);
	if (c->k->proxy) {
		json_object_object_add(h, "egress_ok", json_object_new_int64(c->k->egress_ok));
		json_object_object_add(h, "egress_refused",
				       json_object_new_int64(c->k->egress_refused));
	}
	/* The pane's token: for a client of ours (a keeper of an older start asks no key). */
	json_object_object_del(h, "token");
	if (c->k->pane_token && (c->keyed || c->k->key == NULL))
		json_object_object_add(h, "token", json_object_new_string(c->k->pane_token));
	const char *s = json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN);
	send_frame(c, KM_HELLO, s, strlen(s));
	json_object_put(h);
}

/* A writer taken over watches meanwhile (KM_ROLE tells it), and writes again after. */
static void set_role(struct client *c, enum role role, bool demoted)
{
	c->role = role;
	c->demoted = demoted;
	const char *word = role == ROLE_WRITER ? "writer" : "observer";
	send_frame(c, KM_ROLE, word, strlen(word));
	if (role == ROLE_WRITER)
		send_egress(c->k);
}

/* The proxy's events kept so far, to the writer, if there is one. */
static void send_egress(struct keeper *k)
{
	if (k->egress.len == 0)
		return;
	for (struct client *c = k->clients; c; c = c->next)
		if (c->role == ROLE_WRITER && !c->closing && !c->broken) {
			struct buf f = {0};
			buf_add(&f, k->egress.data, k->egress.len);
			send_buf(c, &f);
			buf_consume(&k->egress, k->egress.len);
			k->egress_kept = 0;
			k->egress_ok += k->waiting_ok;
			k->egress_refused += k->waiting_refused;
			k->waiting_ok = k->waiting_refused = 0;
			return;
		}
}

static void on_hello(struct client *c, const char *data, size_t len)
{
	char *s = xstrndup(data, len);
	json_object *o = json_tokener_parse(s);
	free(s);
	json_object *v;
	const char *word =
		json_object_object_get_ex(o, "role", &v) ? json_object_get_string(v) : "";
	enum role role = !strcmp(word, "writer")     ? ROLE_WRITER
			 : !strcmp(word, "helper")   ? ROLE_HELPER
			 : !strcmp(word, "observer") ? ROLE_OBSERVER
						     : ROLE_QUERY;
	c->version = json_object_object_get_ex(o, "version", &v) ? json_object_get_int(v) : 0;
	const char *key =
		json_object_object_get_ex(o, "key", &v) ? json_object_get_string(v) : NULL;
	c->keyed =
		c->k->key && key && strlen(key) == RPC_TOKEN_LEN && rpc_token_equal(key, c->k->key);
	json_object_put(o); /* and word and key with it */
	if (c->version < 1) {
		client_close(c);
		return;
	}
	/* Being this user is not enough to write: the key is. */
	if (c->k->key && !c->keyed && (role == ROLE_WRITER || role == ROLE_HELPER)) {
		const char *why = "not a client of this keeper (no key): it only watches";
		send_frame(c, KM_BYE, why, strlen(why));
		client_close(c);
		return;
	}
	c->role = role;
	if (c->role == ROLE_WRITER)
		for (struct client *o2 = c->k->clients; o2; o2 = o2->next)
			if (o2 != c && o2->role == ROLE_WRITER)
				set_role(o2, ROLE_OBSERVER, true);
	/* A dashboard serves the agent's socket from now: ours goes first. */
	if (c->role == ROLE_WRITER)
		rpc_leave(c->k);
	hello_to(c);
	if (c->role >= ROLE_OBSERVER)
		send_update(c);
	if (c->role == ROLE_WRITER)
		send_egress(c->k);
}

/*
 * The user changed allowed_domains: the proxy matches the next request
 * against the new list (none holds on to an entry of the old one); a
 * tunnel already open stays open.
 */
static void policy_change(struct keeper *k, const char *data, size_t len)
{
	char *text = xstrndup(data, len), *cause = NULL;
	json_object *o = json_tokener_parse(text);
	struct net_policy p;
	if (o && proxy_policy_read(o, &p, &cause) == 0) {
		net_policy_free(&k->proxy_spec.policy);
		k->proxy_spec.policy = p;
	}
	free(cause);
	json_object_put(o);
	free(text);
}

static void on_message(struct client *c, int type, const char *data, size_t len)
{
	struct keeper *k = c->k;
	if (type == KM_HELLO) {
		if (c->role == ROLE_NONE)
			on_hello(c, data, len);
		return;
	}
	if (c->role == ROLE_NONE) {
		client_close(c); /* hello first */
		return;
	}
	if (type == KM_VIEW) {
		set_view(c, data, len);
		return;
	}
	/* Watchers and queries change nothing. */
	if (c->role < ROLE_HELPER)
		return;
	struct pane_input in;
	switch (type) {
	case KM_INPUT:
		if (keeper_input_get(data, len, &in) < 0)
			break;
		switch (in.kind) {
		case PANE_IN_KEY:
			pane_key(k->pane, in.key, in.mods);
			break;
		case PANE_IN_CHAR:
			pane_char(k->pane, in.cp, in.mods);
			break;
		case PANE_IN_PASTE:
			pane_paste(k->pane, in.buf, in.len);
			break;
		case PANE_IN_MOUSE:
			pane_mouse(k->pane, in.row, in.col, in.button, in.pressed, in.mods);
			break;
		case PANE_IN_FOCUS:
			pane_focus(k->pane, in.pressed);
			break;
		case PANE_IN_SCROLLBACK:
			pane_set_scrollback(k->pane, WRX_MIN(in.len, (size_t)1000000));
			changed(k);
			break;
		case PANE_IN_VIEW:
			break; /* KM_VIEW's, never an input */
		}
		break;
	case KM_WRITE:
		pane_write(k->pane, data, len);
		break;
	case KM_RESIZE:
		if (c->role == ROLE_WRITER && len >= 4) {
			uint16_t rc[2];
			memcpy(rc, data, sizeof rc);
			pane_resize(k->pane, WRX_MAX(rc[0], 1), WRX_MAX(rc[1], 1));
		}
		break;
	case KM_META:
		free(k->meta);
		k->meta = xstrndup(data, WRX_MIN(len, (size_t)65536));
		meta_tell(k);
		break;
	case KM_SEEN:
		if (pane_exited(k->pane, NULL))
			end(k);
		break;
	case KM_KILL:
		end(k);
		break;
	case KM_POLICY:
		if (c->role == ROLE_WRITER && k->proxy)
			policy_change(k, data, len);
		break;
	default:
		break; /* newer than us: skipped */
	}
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct client *c = h->data;
	(void)want;
	keeper_read_room(&c->in, 64 * 1024, b);
}

static int client_frame(void *arg, int type, const char *data, size_t len)
{
	struct client *c = arg;
	on_message(c, type, data, len);
	return c->closing;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct client *c = s->data;
	(void)b;
	if (n < 0) {
		client_close(c);
		return;
	}
	if (!c->closing && keeper_frames_read(&c->in, (size_t)n, client_frame, c) < 0 &&
	    !c->closing)
		client_close(c);
}

/* Only this user's processes are clients (the directory says so too). */
static bool peer_is_us(uv_pipe_t *h)
{
	int fd;
	struct ucred cr;
	socklen_t n = sizeof cr;
	return uv_fileno((uv_handle_t *)h, &fd) == 0 &&
	       getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.uid == getuid();
}

static void on_connection(uv_stream_t *server, int status)
{
	struct keeper *k = server->data;
	if (status < 0 || k->ending)
		return;
	struct client *c = xcalloc(1, sizeof *c);
	c->k = k;
	uv_pipe_init(k->loop, &c->h, 0);
	c->h.data = c;
	c->next = k->clients;
	k->clients = c;
	if (uv_accept(server, (uv_stream_t *)&c->h) < 0 || !peer_is_us(&c->h)) {
		client_close(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

/* meta's field key set to v (NULL: removed). */
static void meta_set(struct keeper *k, const char *key, const char *v)
{
	json_object *m = k->meta ? json_tokener_parse(k->meta) : NULL;
	if (!json_object_is_type(m, json_type_object)) {
		json_object_put(m);
		m = json_object_new_object();
	}
	json_object *old;
	/* A status is kept with when it began: its age outlives us. */
	if (!strcmp(key, "status") && (!json_object_object_get_ex(m, key, &old) || !v ||
				       strcmp(json_object_get_string(old), v) != 0)) {
		json_object_object_del(m, "since");
		json_object_object_del(m, "failure");
		if (v)
			json_object_object_add(m, "since", json_object_new_int64(wall_ms()));
	}
	json_object_object_del(m, key);
	if (v)
		json_object_object_add(m, key, json_object_new_string(v));
	free(k->meta);
	k->meta = xstrdup(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
	json_object_put(m);
}

/*
 * Is this hook's status late (rpc/status.h): older than the hook that set
 * the status meta holds? If not, its time is kept with the status.
 */
static bool meta_late(struct keeper *k, enum wrx_status st, int64_t at)
{
	json_object *m = k->meta ? json_tokener_parse(k->meta) : NULL, *v;
	enum wrx_status cur = WRX_STATUS_NONE;
	if (json_object_object_get_ex(m, "status", &v))
		(void)status_parse_reached(json_object_get_string(v), &cur);
	int64_t last = json_object_object_get_ex(m, "at", &v) ? json_object_get_int64(v) : 0;
	bool late = status_late((uint64_t)at, (uint64_t)WRX_MAX(last, 0), st, cur);
	if (!late && at > 0) {
		if (!json_object_is_type(m, json_type_object)) {
			json_object_put(m);
			m = json_object_new_object();
		}
		json_object_object_add(m, "at", json_object_new_int64(at));
		free(k->meta);
		k->meta = xstrdup(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
	}
	json_object_put(m);
	return late;
}

/* What the session used, as the dashboard keeps it in meta (keep.c): {in, out, cost_micro?}. */
static void meta_usage(struct keeper *k, const struct rpc_usage *u)
{
	json_object *m = k->meta ? json_tokener_parse(k->meta) : NULL;
	if (!json_object_is_type(m, json_type_object)) {
		json_object_put(m);
		m = json_object_new_object();
	}
	json_object_object_add(m, "usage", rpc_usage_json(u));
	free(k->meta);
	k->meta = xstrdup(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
	json_object_put(m);
}

/* The meta as it is now, to each observer (a web view follows status so). */
static void meta_tell(struct keeper *k)
{
	const char *m = k->meta ? k->meta : "{}";
	for (struct client *c = k->clients; c; c = c->next)
		if (c->role == ROLE_OBSERVER && !c->broken && !c->closing)
			send_frame(c, KM_META, m, strlen(m));
}

/*
 * What the agent reported while no dashboard runs, or how its program
 * ended: into the agent's mark too (mark.h), which outlives a reboot (the
 * keeper does not), so that the next start resumes that session and shows
 * what it was. Only into a mark that exists. Told to the observers too.
 */
static void mark_save(struct keeper *k)
{
	meta_tell(k);
	if (k->mark == NULL)
		return;
	json_object *m = k->meta ? json_tokener_parse(k->meta) : NULL, *v;
	const char *session =
		json_object_object_get_ex(m, "session", &v) ? json_object_get_string(v) : NULL;
	(void)mark_write(k->mark, session, k->meta, false);
	json_object_put(m);
}

/*
 * The agent's program ended, on its own (not ended by us): unless it said
 * it was done, failed, with how and the last line it printed (what a
 * dashboard says, core/session.c), for the next one to show.
 */
static void program_ended(struct keeper *k, int wstatus)
{
	if (k->mark == NULL || k->ending)
		return;
	json_object *m = k->meta ? json_tokener_parse(k->meta) : NULL, *v;
	const char *said =
		json_object_object_get_ex(m, "status", &v) ? json_object_get_string(v) : "";
	bool settled = !strcmp(said, STATUS_DONE) || !strcmp(said, STATUS_FAILED);
	json_object_put(m);
	if (settled)
		return;
	char how[48];
	if (status_ended(wstatus, how, sizeof how) == WRX_STATUS_DONE) {
		meta_set(k, "status", STATUS_DONE);
	} else {
		char *why = pane_failure(k->pane, how);
		meta_set(k, "status", STATUS_FAILED);
		meta_set(k, "failure", why);
		free(why);
	}
	mark_save(k);
}

static void on_rpc(struct rpc_call *call, const struct rpc_req *req, void *data)
{
	struct keeper *k = data;
	enum wrx_status st;
	switch (req->type) {
	case RPC_SET_STATUS:
		if (status_parse(req->status, &st) < 0) {
			rpc_call_finish(call, rpc_error("status must be %s", status_choices()));
			return;
		}
		/* A shared daemon's hook, of a session that ran elsewhere: not this agent's. */
		if (req->dir && k->cwd && strcmp(req->dir, k->cwd) != 0 &&
		    (strncmp(req->dir, k->cwd, strlen(k->cwd)) != 0 ||
		     req->dir[strlen(k->cwd)] != '/')) {
			rpc_call_finish(call, rpc_error("that hook ran in %s, not in this agent's "
							"worktree; nothing kept",
							req->dir));
			return;
		}
		/* Late (an older hook's, arriving after): kept as it is, said as taken. */
		if (meta_late(k, st, req->at))
			break;
		meta_set(k, "status", st == WRX_STATUS_NONE ? NULL : status_word(st));
		if (st == WRX_STATUS_FAILED)
			meta_set(k, "failure", req->why ? req->why : "it said it failed");
		else if (st == WRX_STATUS_WAITING && req->why)
			meta_set(k, "note",
				 req->why); /* a rate limit's reset, as the CLI said it */
		if (req->has_usage)
			meta_usage(k, &req->usage);
		if (req->session)
			meta_set(k, "session", req->session);
		mark_save(k);
		break;
	case RPC_SET_TITLE:
		meta_set(k, "title", req->title);
		mark_save(k);
		break;
	case RPC_NOTIFY:
		meta_set(k, "note", req->text ? req->text : "");
		mark_save(k);
		break;
	case RPC_HEARTBEAT:
		break;
	default:
		rpc_call_finish(call,
				rpc_error("no dashboard runs now; status, title and notify "
					  "are kept for the next one, the rest waits for it"));
		return;
	}
	rpc_call_finish(call, rpc_reply("ok"));
}

static const struct rpc_ops rpc_ops = {.request = on_rpc};

static void on_rpc_retry(uv_timer_t *t)
{
	rpc_serve(t->data);
}

/* Listen on the agent's socket (a dashboard that just went may still hold it: retried). */
static void rpc_serve(struct keeper *k)
{
	if (k->rpc_sock == NULL || k->token == NULL || k->rpc || k->ending || has_writer(k))
		return;
	struct rpc_server *s = rpc_server_new(k->loop, &rpc_ops, k);
	char *cause = NULL;
	if (rpc_server_token_adopt(s, k->pane_id, k->handle, k->token) < 0 ||
	    rpc_server_listen_unix(s, k->rpc_sock, false, k->handle, &cause) < 0) {
		free(cause);
		rpc_server_free(s);
		if (k->rpc_tries++ < 40)
			uv_timer_start(&k->rpc_retry, on_rpc_retry, 250, 0);
		return;
	}
	k->rpc = s;
	k->rpc_tries = 0;
}

/* A dashboard takes the socket over. */
static void rpc_leave(struct keeper *k)
{
	uv_timer_stop(&k->rpc_retry);
	k->rpc_tries = 0;
	if (k->rpc == NULL)
		return;
	rpc_server_unlisten(k->rpc, k->rpc_sock);
	rpc_server_free(k->rpc);
	k->rpc = NULL;
}

static void on_sigchld(uv_signal_t *h, int sig)
{
	(void)h;
	(void)sig;
	pty_reap();
}

static void on_sigterm(uv_signal_t *h, int sig)
{
	(void)sig;
	end(h->data);
}

/* The socket: a stale one (nobody answers) is replaced, a live one is an error. */
static int listen_on(struct keeper *k, char **cause)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(k->sock) >= sizeof sa.sun_path) {
		*cause = xasprintf("socket path too long: %s", k->sock);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", k->sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
		close(fd);
		*cause = xasprintf("a keeper already listens on %s", k->sock);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	unlink(k->sock);
	uv_pipe_init(k->loop, &k->listener, 0);
	k->listener.data = k;
	mode_t old = umask(077);
	int rc = uv_pipe_bind(&k->listener, k->sock);
	umask(old);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&k->listener, 16, on_connection);
	if (rc < 0) {
		*cause = xasprintf("%s: %s", k->sock, uv_strerror(rc));
		return rc;
	}
	return 0;
}

/* Who it is for, readable without a connection (proto.h). */
static void agent_link(struct keeper *k, const char *handle)
{
	char *link = keeper_beside(k->sock, "agent");
	if (link && handle && *handle) {
		unlink(link);
		/* Without it the keeper is asked, as one of an older start is. */
		int rc = symlink(handle, link);
		(void)rc;
	}
	free(link);
}

static int get_int(json_object *o, const char *key, int def)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_int(v) : def;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* The pane's RPC token in its environment, or NULL. */
static const char *token_of(char **env)
{
	for (char **e = env; *e; e++)
		if (!strncmp(*e, "WORKREX_RPC_TOKEN=", 18))
			return *e + 18;
	return NULL;
}

/* What a client is told: the spec without its argv and environment, with the token. */
static json_object *hello_of(json_object *spec, const char *token, pid_t pid)
{
	json_object *h = json_object_new_object();
	static const char *keep[] = {"pane",      "handle",     "label",
				     "sandboxed", "agent_pane", "container"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(keep); i++) {
		json_object *v;
		if (json_object_object_get_ex(spec, keep[i], &v))
			json_object_object_add(h, keep[i], json_object_get(v));
	}
	json_object_object_add(h, "version", json_object_new_int(KEEPER_VERSION));
	json_object_object_add(h, "pid", json_object_new_int(pid));
	json_object_object_add(h, "keeper", json_object_new_int(getpid()));
	if (token)
		json_object_object_add(h, "token", json_object_new_string(token));
	return h;
}

/* A proxy event's status counted (wrx_egress's way): waiting, or given. */
static void egress_count(struct keeper *k, int status, bool waiting)
{
	if (status == 200)
		(*(waiting ? &k->waiting_ok : &k->egress_ok))++;
	else if (status)
		(*(waiting ? &k->waiting_refused : &k->egress_refused))++;
}

/* A connection through the proxy ended: for the dashboard (KM_EGRESS), now or later. */
static void on_egress(void *arg, const struct proxy_event *ev)
{
	struct keeper *k = arg;
	json_object *o = proxy_event_json(ev);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (k->egress_kept >= EGRESS_KEPT) {
		/* The oldest goes (counted): a detached agent cannot grow the keeper without end. */
		size_t off = 0;
		int type;
		const char *data;
		size_t len;
		if (keeper_frame_next(&k->egress, &off, &type, &data, &len) == 1) {
			char *text = xstrndup(data, len);
			json_object *old = json_tokener_parse(text), *v;
			int st = json_object_object_get_ex(old, "status", &v)
					 ? json_object_get_int(v)
					 : 0;
			k->waiting_ok -= st == 200;
			k->waiting_refused -= st && st != 200;
			egress_count(k, st, false); /* never to be given: counted as given */
			json_object_put(old);
			free(text);
			buf_consume(&k->egress, off);
			k->egress_kept--;
		}
	}
	keeper_frame(&k->egress, KM_EGRESS, s, strlen(s));
	k->egress_kept++;
	egress_count(k, ev->status, true);
	json_object_put(o);
	send_egress(k);
}

/*
 * A sandbox no socket reaches (sandbox.container.share_sockets): the proxy
 * listens on TCP as well, and its port goes in a file of the agent's RPC
 * directory, which the sandbox's firewall step reads (mounted read-only).
 * Written whole (a rename), so it never reads half a number.
 */
static int proxy_tcp(struct keeper *k, char **cause)
{
	int port = 0;
	int rc = proxy_listen_tcp(k->proxy, k->proxy_spec.tcp_host, &port, cause);
	if (rc < 0)
		return rc;
	char text[16];
	int n = snprintf(text, sizeof text, "%d\n", port);
	char *tmp = xasprintf("%s.%ld", k->proxy_spec.port_file, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && fd_write_all(fd, text, (size_t)n) == 0;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (!ok || rename(tmp, k->proxy_spec.port_file) < 0) {
		rc = -errno;
		*cause = xasprintf("the proxy's port file %s: %s", k->proxy_spec.port_file,
				   strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

static int proxy_start(struct keeper *k, json_object *spec, char **cause)
{
	if (proxy_spec_read(spec, &k->proxy_spec, cause) < 0)
		return -EINVAL;
	struct proxy_opts o = {.token = k->proxy_spec.token,
			       .policy = &k->proxy_spec.policy,
			       .max_connections = k->proxy_spec.max_connections,
			       .head_ms = k->proxy_spec.head_ms,
			       .connect_ms = k->proxy_spec.connect_ms,
			       .idle_ms = k->proxy_spec.idle_ms,
			       .event = on_egress,
			       .arg = k};
	k->proxy = proxy_new(k->loop, &o);
	int rc = proxy_listen(k->proxy, k->proxy_spec.socket, cause);
	if (rc == 0 && lstat(k->proxy_spec.socket, &k->proxy_st) < 0)
		memset(&k->proxy_st, 0, sizeof k->proxy_st);
	if (rc == 0 && k->proxy_spec.tcp_host)
		rc = proxy_tcp(k, cause);
	return rc;
}

/*
 * The agent's ports, listened on for as long as the keeper lives (a detach,
 * a dashboard gone, change nothing). One that cannot be is in the hello,
 * for the dashboard to say.
 */
static void ports_start(struct keeper *k, json_object *spec)
{
	json_object *o;
	if (!json_object_object_get_ex(spec, "ports", &o))
		return;
	log_open(); /* (what its connections meet is told there: the log, as the dashboard's) */
	struct portfwd_spec ps;
	char *cause = NULL, *refused = NULL;
	if (portfwd_spec_read(o, &ps, &cause) == 0)
		k->ports = portfwd_start(k->loop, &ps, &refused);
	portfwd_spec_free(&ps);
	const char *why = cause ? cause : refused;
	if (why) {
		log_msg("%s: its ports: %s", get_str(spec, "handle"), why);
		json_object_object_add(k->hello, "ports_refused", json_object_new_string(why));
	}
	free(cause);
	free(refused);
}

int keeper_main(void)
{
	/* Not its session's leader (spawn): no terminal can become its own. */
	pid_t pid = fork();
	if (pid < 0) {
		say("the keeper could not fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid > 0)
		_exit(0);
	closefrom(STDERR_FILENO + 1);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	struct buf in = {0};
	char chunk[4096];
	ssize_t n;
	while ((n = read(STDIN_FILENO, chunk, sizeof chunk)) > 0 && in.len < 16 * 1024 * 1024)
		buf_add(&in, chunk, (size_t)n);
	json_object *spec = in.len ? json_tokener_parse(in.data) : NULL;
	if (in.data)
		explicit_bzero(in.data, in.len);
	buf_free(&in);
	if (spec == NULL) {
		say("the keeper was given no spec\n");
		return 1;
	}

	struct keeper k = {.loop = uv_default_loop(), .pid = -1};
	k.sock = xstrdup(get_str(spec, "socket") ? get_str(spec, "socket") : "");
	char **argv = json_strv(json_object_object_get(spec, "argv"));
	char **env = json_strv(json_object_object_get(spec, "env"));
	json_object *stop = json_object_object_get(spec, "stop");
	k.stop = stop ? json_strv(stop) : NULL;
	int rows = get_int(spec, "rows", 24), cols = get_int(spec, "cols", 80);
	int scrollback = get_int(spec, "scrollback", 10000);
	char *cause = NULL;
	int rc = argv[0] ? 0 : -EINVAL;
	if (rc < 0)
		cause = xstrdup("the keeper was given nothing to run");
	FAULT("keeper.spec");
	if (rc == 0)
		rc = listen_on(&k, &cause);
	FAULT("keeper.listening");
	/* The agent's network is there before the agent. */
	json_object *pspec;
	if (rc == 0 && json_object_object_get_ex(spec, "proxy", &pspec) &&
	    (rc = proxy_start(&k, pspec, &cause)) < 0)
		unlink(k.sock);
	if (rc == 0) {
		k.pane = pane_new(rows, cols, (size_t)WRX_MAX(scrollback, 0), on_pane_event, &k);
		struct pty_spawn sp = {.argv = argv, .cwd = get_str(spec, "cwd"), .env = env};
		uv_signal_init(k.loop, &k.sigchld);
		uv_signal_start(&k.sigchld, on_sigchld, SIGCHLD);
		rc = pty_start(k.loop, k.pane, &sp, &cause);
		if (rc < 0)
			unlink(k.sock);
	}
	if (rc < 0) {
		say("%s\n", cause ? cause : "the keeper could not start");
		free(cause);
		free(k.sock);
		strv_free(argv);
		strv_free(env);
		strv_free(k.stop);
		json_object_put(spec);
		proxy_spec_free(&k.proxy_spec);
		return 1;
	}
	k.pid = pty_pid(k.pane);
	FAULT("keeper.spawned");
	const char *token = token_of(env);
	k.hello = hello_of(spec, NULL, k.pid);
	ports_start(&k, spec);
	agent_link(&k, get_str(spec, "handle"));
	FAULT("keeper.linked");
	k.pane_token = token ? xstrdup(token) : NULL;
	if (get_str(spec, "mark"))
		k.mark = xstrdup(get_str(spec, "mark"));
	if (get_str(spec, "cwd"))
		k.cwd = xstrdup(get_str(spec, "cwd"));
	/*
	 * Its key: given (an older dashboard made it), or made here and kept
	 * in the state directory for the dashboard to read (proto.h), so that
	 * the dashboard's loop creates no file for a new pane. Before "ok".
	 */
	const char *key = get_str(spec, "key");
	char made[RPC_TOKEN_LEN + 1];
	if (key == NULL && json_object_get_boolean(json_object_object_get(spec, "make_key")) &&
	    keeper_key_make(k.sock, made) == 0)
		key = made;
	k.key = key && strlen(key) == RPC_TOKEN_LEN ? xstrdup(key) : NULL;
	FAULT("keeper.keyed");
	if (get_str(spec, "rpc_socket")) {
		k.rpc_sock = xstrdup(get_str(spec, "rpc_socket"));
		k.handle = xstrdup(get_str(spec, "handle") ? get_str(spec, "handle") : "");
		k.pane_id = get_int(spec, "pane", 0);
		k.token = token ? xstrdup(token) : NULL;
	}
	strv_free(argv);
	strv_free(env);
	json_object_put(spec);

	uv_timer_init(k.loop, &k.frame);
	uv_timer_init(k.loop, &k.grace);
	uv_timer_init(k.loop, &k.rpc_retry);
	k.frame.data = k.grace.data = k.rpc_retry.data = &k;
	uv_signal_init(k.loop, &k.sigterm);
	uv_signal_init(k.loop, &k.sigint);
	k.sigterm.data = k.sigint.data = &k;
	uv_signal_start(&k.sigterm, on_sigterm, SIGTERM);
	uv_signal_start(&k.sigint, on_sigterm, SIGINT);

	/* Started: the error pipe closes, and stdio goes quiet. */
	say("ok\n");
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}

	uv_run(k.loop, UV_RUN_DEFAULT);

	if (k.key)
		keeper_key_forget(k.sock);
	for (struct client *c = k.clients, *next; c; c = next) {
		next = c->next;
		const char *why = "the pane ended";
		send_frame(c, KM_BYE, why, strlen(why));
	}
	unlink(k.sock);
	/* The agent's next keeper may listen there already (its panes opened again). */
	struct stat st;
	if (k.proxy && lstat(k.proxy_spec.socket, &st) == 0 && st.st_ino == k.proxy_st.st_ino &&
	    st.st_dev == k.proxy_st.st_dev)
		unlink(k.proxy_spec.socket);
	proxy_spec_free(&k.proxy_spec);
	return 0;
}
