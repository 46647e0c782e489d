/*
 * server.c - the web view's HTTP and WebSocket ends (libwebsockets on our
 * libuv loop), its pages, its pairing and its actions.
 */
#include "server.h"

#include "../core/actions.h"
#include "../core/children.h"
#include "../config/config.h"
#include "../core/wrx.h"
#include "../core/run.h"
#include "../git/git.h"
#include "../git/worktree.h"
#include "../util/log.h"
#include "../util/util.h"
#include "auth.h"
#include "feed.h"

#include <arpa/inet.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* The page's files, from assets/web/ (the Makefile compiles them in). */
extern const char asset_web_index[], asset_web_js[], asset_web_css[];

/* At most this many pages at once; a message from one at most WS_RX_MAX bytes. */
#define PAGES_MAX 16
#define WS_RX_MAX 65536
/* Messages waiting for a page that does not read: past this it is closed. */
#define OUT_MAX 64

#define CSP                                                                                        \
	"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "            \
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

struct msg {
	struct msg *next;
	size_t len;
	unsigned char data[]; /* LWS_PRE bytes, then the message */
};

/* One connection: a request for a file, or a page's WebSocket. */
struct conn {
	struct web *w;
	struct lws *wsi;
	/* HTTP: the body still to write (a file's, or a few words) */
	const char *body;
	size_t left;
	/* WebSocket */
	bool page;
	unsigned id;
	struct msg *out, **out_tail;
	int nout;
	bool agents_due, asks_due;
	int pane; /* shown, or -1 */
	bool pane_due;
	uint64_t since;
	int rows, cols;
	struct buf rx;
	struct conn *next;
};

struct web {
	uv_loop_t *loop;
	struct repo *repo;
	struct web_opts o;
	char *root;
	struct lws_context *ctx;
	struct feed *feed;
	struct web_limit limit;
	struct conn *pages;
	int npages;
	unsigned next_id;
	char *agents; /* the list as JSON, NULL: to be made again */
	int port;
};

static void queue_msg(struct conn *c, const char *s, size_t n)
{
	if (c->nout >= OUT_MAX) {
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_ACK, LWS_TO_KILL_ASYNC);
		return;
	}
	struct msg *m = xmalloc(sizeof *m + LWS_PRE + n);
	m->next = NULL;
	m->len = n;
	memcpy(m->data + LWS_PRE, s, n);
	*c->out_tail = m;
	c->out_tail = &m->next;
	c->nout++;
	lws_callback_on_writable(c->wsi);
}

static void queue_json(struct conn *c, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	queue_msg(c, s, strlen(s));
	json_object_put(o);
}

static struct conn *page_by_id(struct web *w, unsigned id)
{
	for (struct conn *c = w->pages; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* The feed's news: to every page, when it can take it. */
static void on_feed(struct feed *f, enum feed_what what, int pane, void *data)
{
	struct web *w = data;
	(void)f;
	if (what == FEED_AGENTS) {
		free(w->agents);
		w->agents = NULL;
	}
	for (struct conn *c = w->pages; c; c = c->next) {
		if (what == FEED_AGENTS)
			c->agents_due = true;
		else if (c->pane == pane)
			c->pane_due = true;
		else
			continue;
		lws_callback_on_writable(c->wsi);
	}
}

/* ---- HTTP ---- */

static int header(struct lws *wsi, enum lws_token_indexes t, char *out, int n)
{
	out[0] = '\0';
	return lws_hdr_copy(wsi, out, n, t);
}

/* Is the request from where this server is? Host, and the Origin when one was sent. */
static bool from_here(struct web *w, struct lws *wsi, bool origin_needed)
{
	char host[256], origin[300];
	/* HTTP/2 names the host as :authority (HTTP/1.1 only is offered; a client may not ask). */
	if (header(wsi, WSI_TOKEN_HOST, host, sizeof host) <= 0 &&
	    header(wsi, WSI_TOKEN_HTTP_COLON_AUTHORITY, host, sizeof host) <= 0)
		return false;
	if (!web_host_ok(host, w->o.host, w->o.names))
		return false;
	if (header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof origin) <= 0)
		return !origin_needed;
	return web_origin_ok(origin, host, w->o.tls_cert != NULL);
}

/*
 * Does the request carry this project's cookie? A wrong one counts as a
 * wrong token; the right one is never refused for others' wrong ones (a
 * flood of bad cookies must not lock the user's page out).
 */
static bool paired(struct web *w, struct lws *wsi)
{
	char cookies[2048], value[RPC_TOKEN_LEN + 2];
	struct web_secrets s;
	char *cause = NULL;
	if (web_secrets_load(w->root, false, &s, &cause) < 0) {
		free(cause);
		return false;
	}
	if (header(wsi, WSI_TOKEN_HTTP_COOKIE, cookies, sizeof cookies) <= 0 ||
	    !web_cookie_find(cookies, s.cookie, value, sizeof value))
		return false;
	if (web_secret_is(value, s.session))
		return true;
	web_limit_fail(&w->limit, now_ms());
	return false;
}

static int respond(struct conn *c, struct lws *wsi, int status, const char *type, const char *body,
		   const char *cookie)
{
	unsigned char buf[LWS_PRE + 2048], *start = buf + LWS_PRE, *p = start,
					   *end = buf + sizeof buf - 1;
	size_t len = strlen(body);
	static const struct {
		const char *name, *value;
	} always[] = {
		{"content-security-policy:", CSP},   {"x-content-type-options:", "nosniff"},
		{"referrer-policy:", "no-referrer"}, {"x-frame-options:", "DENY"},
		{"cache-control:", "no-store"},
	};
	if (lws_add_http_common_headers(wsi, (unsigned)status, type, len, &p, end))
		return 1;
	for (size_t i = 0; i < WRX_ARRAY_LEN(always); i++)
		if (lws_add_http_header_by_name(wsi, (const unsigned char *)always[i].name,
						(const unsigned char *)always[i].value,
						(int)strlen(always[i].value), &p, end))
			return 1;
	if (cookie && lws_add_http_header_by_name(wsi, (const unsigned char *)"set-cookie:",
						  (const unsigned char *)cookie,
						  (int)strlen(cookie), &p, end))
		return 1;
	if (lws_finalize_write_http_header(wsi, start, &p, end))
		return 1;
	c->body = body;
	c->left = len;
	lws_callback_on_writable(wsi);
	return 0;
}

/* GET /pair with "Authorization: Bearer TOKEN": the cookie for it. */
static int pair(struct conn *c, struct lws *wsi)
{
	struct web *w = c->w;
	char auth[200];
	struct web_secrets s;
	char *cause = NULL;
	if (!web_limit_open(&w->limit, now_ms()))
		return respond(c, wsi, 429, "text/plain", "too many wrong tokens: wait a minute\n",
			       NULL);
	if (web_secrets_load(w->root, false, &s, &cause) < 0) {
		log_msg("web: %s", cause);
		free(cause);
		return respond(c, wsi, 403, "text/plain", "no token: run workrex web again\n",
			       NULL);
	}
	if (header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, auth, sizeof auth) <= 0 ||
	    strncmp(auth, "Bearer ", 7) != 0 || !web_secret_is(auth + 7, s.token)) {
		web_limit_fail(&w->limit, now_ms());
		return respond(c, wsi, 403, "text/plain", "wrong token\n", NULL);
	}
	char cookie[200];
	snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s", s.cookie,
		 s.session, w->o.tls_cert ? "; Secure" : "");
	return respond(c, wsi, 204, "text/plain", "", cookie);
}

static int http(struct conn *c, struct lws *wsi, const char *uri)
{
	static const struct {
		const char *path, *type;
		const char *body;
	} files[] = {
		{"/", "text/html; charset=utf-8", asset_web_index},
		{"/app.js", "text/javascript; charset=utf-8", asset_web_js},
		{"/app.css", "text/css; charset=utf-8", asset_web_css},
	};
	if (!from_here(c->w, wsi, false))
		return respond(c, wsi, 403, "text/plain", "not this server's name\n", NULL);
	if (!lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI))
		return respond(c, wsi, 405, "text/plain", "GET only\n", NULL);
	if (!strcmp(uri, "/pair"))
		return pair(c, wsi);
	for (size_t i = 0; i < WRX_ARRAY_LEN(files); i++)
		if (!strcmp(uri, files[i].path))
			return respond(c, wsi, 200, files[i].type, files[i].body, NULL);
	return respond(c, wsi, 404, "text/plain", "not found\n", NULL);
}

static int http_write(struct conn *c, struct lws *wsi)
{
	unsigned char buf[LWS_PRE + 16384];
	size_t n = WRX_MIN(c->left, sizeof buf - LWS_PRE);
	memcpy(buf + LWS_PRE, c->body, n);
	bool last = n == c->left;
	if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) !=
	    (int)n)
		return -1;
	c->body += n;
	c->left -= n;
	if (!last) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* ---- the page's WebSocket ---- */

/* A workrex command a page asked for, running: its answer goes to that page, if still there. */
struct act {
	struct web *w;
	unsigned page;
	int id;
	char *handle;
	const char *mode; /* a diff's: "branch", "wip" */
	struct buf out;   /* a diff's text */
	bool cut;         /* past DIFF_MAX: the rest left out */
};

/* A diff larger than this is cut for the page (the terminal's review view has it all). */
#define DIFF_MAX (4u << 20)

static void act_free(struct act *a)
{
	free(a->handle);
	buf_free(&a->out);
	free(a);
}

static json_object *answer(const char *t, int id)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "t", json_object_new_string(t));
	json_object_object_add(o, "id", json_object_new_int(id));
	return o;
}

static void reply_error(struct conn *c, int id, const char *why)
{
	json_object *o = answer("done", id);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(why));
	queue_json(c, o);
}

/* A command's end: ok, or the last line it said; the list made again (a comment counted). */
static void acted(void *arg, int status, const char *output, const char *last)
{
	struct act *a = arg;
	struct conn *c = page_by_id(a->w, a->page);
	(void)output;
	feed_records_changed(a->w->feed);
	if (c) {
		json_object *o = answer("done", a->id);
		json_object_object_add(o, "ok", json_object_new_boolean(status == 0));
		if (status != 0)
			json_object_object_add(o, "error",
					       json_object_new_string(last && *last
									      ? wrx_outcome(last)
									      : "failed"));
		queue_json(c, o);
	}
	act_free(a);
}

/* Run workrex ROW MORE... for page c; done hears its end. */
static void act_run(struct conn *c, struct act *a, const char *row, char *const *more,
		    run_done_fn *done)
{
	struct web *w = c->w;
	char **argv = child_argv_of(w->o.self_exe, row, more);
	struct run_opts ro = {.argv = argv, .cwd = w->root, .done = done, .arg = a};
	if (run_start(w->loop, &ro) < 0) {
		reply_error(c, a->id, "could not start workrex");
		act_free(a);
	}
	child_argv_free(argv);
}

static struct act *act_new(struct conn *c, int id, const char *handle)
{
	struct act *a = xcalloc(1, sizeof *a);
	a->w = c->w;
	a->page = c->id;
	a->id = id;
	a->handle = xstrdup(handle);
	return a;
}

/* What merge --preview said, as the question C-b m asks. */
static void merge_previewed(void *arg, int status, const char *output, const char *last)
{
	struct act *a = arg;
	struct conn *c = page_by_id(a->w, a->page);
	(void)output;
	last = last ? last : "";
	if (c) {
		bool anyway = status != 0 && strstr(last, "--ignore-uncommitted");
		json_object *o = answer("ask", a->id);
		json_object_object_add(o, "handle", json_object_new_string(a->handle));
		if (status != 0 && !anyway) {
			json_object_put(o);
			o = answer("done", a->id);
			json_object_object_add(o, "ok", json_object_new_boolean(0));
			json_object_object_add(o, "error",
					       json_object_new_string(wrx_outcome(last)));
		} else {
			char *q = anyway ? actions_merge_anyway_question(last)
					 : actions_merge_question(a->handle, wrx_outcome(last));
			json_object_object_add(o, "question", json_object_new_string(q));
			json_object_object_add(o, "anyway", json_object_new_boolean(anyway));
			free(q);
		}
		queue_json(c, o);
	}
	act_free(a);
}

static void diff_output(void *arg, int stream, const char *p, size_t n)
{
	struct act *a = arg;
	if (stream != 1 || a->cut)
		return;
	if (a->out.len + n > DIFF_MAX) {
		n = DIFF_MAX - a->out.len;
		a->cut = true;
	}
	buf_add(&a->out, p, n);
}

static void diff_exit(void *arg, int code)
{
	struct act *a = arg;
	struct conn *c = page_by_id(a->w, a->page);
	if (c && code != 0) {
		reply_error(c, a->id, "workrex diff failed");
	} else if (c) {
		json_object *o = answer("diff", a->id);
		json_object_object_add(o, "handle", json_object_new_string(a->handle));
		json_object_object_add(o, "mode", json_object_new_string(a->mode));
		json_object_object_add(o, "text",
				       json_object_new_string_len(a->out.data ? a->out.data : "",
								  (int)a->out.len));
		json_object_object_add(o, "cut", json_object_new_boolean(a->cut));
		queue_json(c, o);
	}
	act_free(a);
}

static void act_diff(struct conn *c, int id, const char *handle, const char *mode)
{
	struct act *a = act_new(c, id, handle);
	a->mode = !strcmp(mode, "wip") ? "wip" : "branch";
	char *flag = xasprintf("--%s", a->mode);
	char *const more[] = {flag, "--", (char *)handle, NULL};
	char **argv = child_argv_of(c->w->o.self_exe, "diff", more);
	struct run_stream rs = {.argv = argv,
				.cwd = c->w->root,
				.timeout_ms = 60000,
				.output = diff_output,
				.exit = diff_exit,
				.arg = a};
	if (run_stream(c->w->loop, &rs) < 0) {
		reply_error(c, id, "could not start workrex diff");
		act_free(a);
	}
	child_argv_free(argv);
	free(flag);
}

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : "";
}

static bool bool_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* A page's request about an agent: t says which; the agent checked first. */
static void act_on_agent(struct conn *c, json_object *o, const char *t, int id)
{
	const char *h = str_of(o, "handle");
	struct act *a;
	if (!handle_valid(h) || !feed_known(c->w->feed, h))
		return reply_error(c, id, "no such agent");
	if (!strcmp(t, "diff"))
		return act_diff(c, id, h, str_of(o, "mode"));
	if (c->w->o.read_only)
		return reply_error(c, id, "this view is read-only");
	a = act_new(c, id, h);
	if (!strcmp(t, "key") && !strcmp(str_of(o, "key"), "escape")) {
		char *const more[] = {(char *)h, "Escape", NULL};
		act_run(c, a, "send-keys", more, acted);
	} else if (!strcmp(t, "send") || !strcmp(t, "key")) {
		/* The quick answers: y or n, then Enter; Enter alone; Escape above. */
		const char *key = str_of(o, "key");
		const char *text = !strcmp(t, "send")                       ? str_of(o, "text")
				   : !strcmp(key, "y") || !strcmp(key, "n") ? key
				   : !strcmp(key, "enter")                  ? ""
									    : NULL;
		if (text == NULL) {
			reply_error(c, id, "no such key");
			return act_free(a);
		}
		char *const more[] = {(char *)h, (char *)text, NULL};
		act_run(c, a, "send", more, acted);
	} else if (!strcmp(t, "comment")) {
		json_object *v;
		int line = json_object_object_get_ex(o, "line", &v) ? json_object_get_int(v) : 0;
		char *where = line > 0 ? xasprintf("%s:%d", str_of(o, "file"), line)
				       : xstrdup(str_of(o, "file"));
		char *const more[] = {where, "--", (char *)h, (char *)str_of(o, "text"), NULL};
		act_run(c, a, "review-comment", more, acted);
		free(where);
	} else if (!strcmp(t, "review-send")) {
		char *const more[] = {"--", (char *)h, NULL};
		act_run(c, a, "review-send", more, acted);
	} else if (!strcmp(t, "merge-ask")) {
		char *const more[] = {"--", (char *)h, NULL};
		act_run(c, a, "merge-preview", more, merge_previewed);
	} else if (!strcmp(t, "merge")) {
		bool anyway = bool_of(o, "anyway");
		char *const more[] = {anyway ? "--ignore-uncommitted" : "--",
				      anyway ? "--" : (char *)h, anyway ? (char *)h : NULL, NULL};
		act_run(c, a, "merge", more, acted);
	} else {
		reply_error(c, id, "no such request");
		act_free(a);
	}
}

static void show(struct conn *c, int pane)
{
	if (c->pane == pane)
		return;
	if (c->pane >= 0)
		feed_show(c->w->feed, c->pane, -1);
	c->pane = pane;
	c->since = 0;
	c->rows = c->cols = 0;
	if (pane >= 0)
		feed_show(c->w->feed, pane, +1);
}

/*
 * The user's answer to a dashboard's question, from the page (C-b a's y or
 * n): to the dashboard that serves the page, or through workrex answer to
 * the one that runs beside this server.
 */
static void answer_asked(struct conn *c, int id, int64_t ask, bool yes)
{
	const struct web_asks *a = c->w->o.asks;
	if (c->w->o.read_only)
		return reply_error(c, id, "this view is read-only");
	if (ask <= 0 || ask > UINT32_MAX)
		return reply_error(c, id, "no such question");
	if (a == NULL) {
		char n[16];
		snprintf(n, sizeof n, "%lld", (long long)ask);
		char *const more[] = {n, yes ? "yes" : "no", NULL};
		return act_run(c, act_new(c, id, ""), "answer", more, acted);
	}
	if (a->answer(a->arg, (unsigned)ask, yes) < 0)
		return reply_error(c, id, "that question is no longer waiting");
	json_object *o = answer("done", id);
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	queue_json(c, o);
}

static void page_said(struct conn *c, const char *s, size_t n)
{
	json_object *o = json_tokener_parse(s), *v;
	(void)n;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return; /* not a request: nothing to answer */
	}
	const char *t = str_of(o, "t");
	int id = json_object_object_get_ex(o, "id", &v) ? json_object_get_int(v) : 0;
	if (!strcmp(t, "view"))
		show(c,
		     json_object_object_get_ex(o, "pane", &v) && v ? json_object_get_int(v) : -1);
	else if (!strcmp(t, "answer"))
		answer_asked(c, id,
			     json_object_object_get_ex(o, "ask", &v) ? json_object_get_int64(v) : 0,
			     bool_of(o, "yes"));
	else
		act_on_agent(c, o, t, id);
	json_object_put(o);
}

static void page_open(struct conn *c, struct lws *wsi)
{
	struct web *w = c->w;
	c->page = true;
	c->wsi = wsi;
	c->id = ++w->next_id;
	c->pane = -1;
	c->out_tail = &c->out;
	c->next = w->pages;
	w->pages = c;
	w->npages++;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "t", json_object_new_string("hello"));
	json_object_object_add(o, "read_only", json_object_new_boolean(w->o.read_only));
	/* The questions come as their own message here, else with each agent (feed.h). */
	json_object_object_add(o, "asks_here", json_object_new_boolean(w->o.asks != NULL));
	const char *base = strrchr(w->root, '/');
	json_object_object_add(o, "project", json_object_new_string(base ? base + 1 : w->root));
	queue_json(c, o);
	c->agents_due = true;
	c->asks_due = w->o.asks != NULL;
}

static void page_close(struct conn *c)
{
	struct web *w = c->w;
	show(c, -1);
	for (struct conn **pp = &w->pages; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			w->npages--;
			break;
		}
	while (c->out) {
		struct msg *m = c->out;
		c->out = m->next;
		free(m);
	}
	buf_free(&c->rx);
	c->page = false;
}

static int ws_write(struct conn *c, struct lws *wsi, unsigned char *data, size_t n)
{
	return lws_write(wsi, data, n, LWS_WRITE_TEXT) < (int)n ? -1 : 0;
}

/* One message to the page; asked again while more wait. */
static int page_write(struct conn *c, struct lws *wsi)
{
	struct web *w = c->w;
	int rc = 0;
	if (c->out) {
		struct msg *m = c->out;
		c->out = m->next;
		if (c->out == NULL)
			c->out_tail = &c->out;
		c->nout--;
		rc = ws_write(c, wsi, m->data + LWS_PRE, m->len);
		free(m);
	} else if (c->agents_due) {
		c->agents_due = false;
		if (w->agents == NULL) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "t", json_object_new_string("agents"));
			json_object_object_add(o, "agents", feed_agents(w->feed));
			w->agents =
				xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
			json_object_put(o);
		}
		struct buf b = {0};
		buf_reserve(&b, LWS_PRE + strlen(w->agents));
		b.len = LWS_PRE;
		buf_addstr(&b, w->agents);
		rc = ws_write(c, wsi, (unsigned char *)b.data + LWS_PRE, b.len - LWS_PRE);
		buf_free(&b);
	} else if (c->asks_due) {
		c->asks_due = false;
		json_object *o = json_object_new_object();
		json_object_object_add(o, "t", json_object_new_string("asks"));
		json_object_object_add(o, "asks",
				       w->o.asks ? w->o.asks->list(w->o.asks->arg)
						 : json_object_new_array());
		const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		struct buf b = {0};
		buf_reserve(&b, LWS_PRE + strlen(js));
		b.len = LWS_PRE;
		buf_addstr(&b, js);
		rc = ws_write(c, wsi, (unsigned char *)b.data + LWS_PRE, b.len - LWS_PRE);
		buf_free(&b);
		json_object_put(o);
	} else if (c->pane_due) {
		c->pane_due = false;
		struct buf b = {0};
		buf_reserve(&b, LWS_PRE + 4096);
		b.len = LWS_PRE;
		if (feed_frame(w->feed, c->pane, &c->since, &c->rows, &c->cols, &b))
			rc = ws_write(c, wsi, (unsigned char *)b.data + LWS_PRE, b.len - LWS_PRE);
		buf_free(&b);
	}
	if (rc == 0 && (c->out || c->agents_due || c->asks_due || c->pane_due))
		lws_callback_on_writable(wsi);
	return rc;
}

static int page_read(struct conn *c, struct lws *wsi, const char *in, size_t len)
{
	if (c->rx.len + len > WS_RX_MAX)
		return -1;
	buf_add(&c->rx, in, len);
	if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
		return 0;
	page_said(c, c->rx.data ? c->rx.data : "", c->rx.len);
	c->rx.len = 0;
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct conn *c = user;
	struct web *w = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		c->w = w;
		return http(c, wsi, in);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c->body ? http_write(c, wsi) : 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* The upgrade: from a page of this server, paired, and not one too many. */
		if (!from_here(w, wsi, true) || !paired(w, wsi) || w->npages >= PAGES_MAX)
			return -1;
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		memset(c, 0, sizeof *c);
		c->w = w;
		page_open(c, wsi);
		return 0;
	case LWS_CALLBACK_CLOSED:
		if (c->page)
			page_close(c);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c->page ? page_write(c, wsi) : 0;
	case LWS_CALLBACK_RECEIVE:
		return c->page ? page_read(c, wsi, in, len) : -1;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{"wrx", callback, sizeof(struct conn), WS_RX_MAX, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

/* What libwebsockets says: errors only, into our log (capped there). */
static void lws_said(int level, const char *line)
{
	(void)level;
	log_msg("web: %.*s", (int)strcspn(line, "\n"), line);
}

struct web *web_start(uv_loop_t *loop, struct repo *repo, const struct web_opts *o, char **cause)
{
	struct web *w = xcalloc(1, sizeof *w);
	w->loop = loop;
	w->repo = repo;
	w->o = *o;
	w->root = xstrdup(repo_root(repo));
	lws_set_log_level(LLL_ERR, lws_said);
	void *loops[1] = {loop};
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = o->port;
	info.iface = o->host;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DISABLE_IPV6;
	info.foreign_loops = loops;
	info.user = w;
	info.gid = (gid_t)-1;
	info.uid = (uid_t)-1;
	info.vhost_name = "workrex";
	info.max_http_header_data = 4096;
	info.timeout_secs = 10;
	if (o->tls_cert) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = o->tls_cert;
		info.ssl_private_key_filepath = o->tls_key;
		info.alpn = "http/1.1"; /* one protocol to check: no HTTP/2, no WebSocket over it */
	}
	w->ctx = lws_create_context(&info);
	if (w->ctx == NULL) {
		*cause = xasprintf("cannot listen on %s:%d (taken, or not an address here)",
				   o->host, o->port);
		free(w->root);
		free(w);
		return NULL;
	}
	struct lws_vhost *vh = lws_get_vhost_by_name(w->ctx, "workrex");
	w->port = vh ? lws_get_vhost_listen_port(vh) : o->port;
	w->feed = feed_new(loop, repo, on_feed, w, cause);
	if (w->feed == NULL) {
		web_stop(w);
		return NULL;
	}
	return w;
}

/* "HOST:PORT" into host (size n) and *port; false when it is not one. */
static bool split_listen(const char *s, char *host, size_t n, int *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	if (colon == NULL || colon == s || (size_t)(colon - s) >= n)
		return false;
	long p = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || p < 0 || p > 65535)
		return false;
	snprintf(host, n, "%.*s", (int)(colon - s), s);
	*port = (int)p;
	struct in_addr a;
	return inet_pton(AF_INET, host, &a) == 1;
}

int web_opts_read(const struct config *c, const char *listen, bool insecure, struct web_opts *o,
		  char **cause)
{
	char host[64], self[4096];
	int port;
	memset(o, 0, sizeof *o);
	if (listen == NULL)
		listen = c->web_listen ? c->web_listen : WEB_LISTEN;
	if (!split_listen(listen, host, sizeof host, &port)) {
		*cause = xasprintf("listen on '%s'? an IPv4 address and a port: %s", listen,
				   WEB_LISTEN);
		return -1;
	}
	bool tls = c->web_tls_cert && c->web_tls_key;
	if (strncmp(host, "127.", 4) != 0 && !tls && !insecure) {
		*cause =
			xasprintf("%s is not loopback: anyone who reaches it could type into your "
				  "agents. Set web.tls_cert and web.tls_key, reach it over ssh -L, "
				  "or say --insecure-listen",
				  host);
		return -1;
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		*cause = xstrdup("cannot find this program (/proc/self/exe)");
		return -1;
	}
	self[n] = '\0';
	const char **names = xcalloc(c->web_names.n + 1, sizeof *names);
	for (size_t i = 0; i < c->web_names.n; i++)
		names[i] = c->web_names.v[i];
	*o = (struct web_opts){
		.host = xstrdup(host),
		.port = port,
		.names = names,
		.read_only = c->web_read_only,
		.tls_cert = tls ? c->web_tls_cert : NULL,
		.tls_key = tls ? c->web_tls_key : NULL,
		.self_exe = xstrdup(self),
	};
	return 0;
}

void web_opts_free(struct web_opts *o)
{
	free((char *)o->host);
	free((void *)o->names);
	free((char *)o->self_exe);
	memset(o, 0, sizeof *o);
}

void web_asks_changed(struct web *w)
{
	for (struct conn *c = w->pages; c; c = c->next) {
		c->asks_due = true;
		lws_callback_on_writable(c->wsi);
	}
}

int web_port(const struct web *w)
{
	return w->port;
}

void web_stop(struct web *w)
{
	if (w == NULL)
		return;
	feed_free(w->feed);
	if (w->ctx)
		lws_context_destroy(w->ctx);
	free(w->agents);
	free(w->root);
	free(w);
}
