/*
 * feed.c - the keepers and records of a project, as a web view follows them.
 */
#include "feed.h"

#include "../git/comments.h"
#include "../git/git.h"
#include "../git/worktree.h"
#include "../keeper/client.h"
#include "../keeper/proto.h"
#include "../term/cell.h"
#include "../term/colour.h"
#include "../term/pane.h"
#include "../util/log.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One keeper the feed observes. */
struct watched {
	int pane;
	char *path;
	char *handle; /* its hello's; NULL until it came */
	bool agent_pane, sandboxed;
	json_object *meta; /* what it last said of its agent */
	struct pane *mirror;
	struct keeper_conn *conn;
	int shown;        /* pages that show it */
	bool pending;     /* its screen changed since the last frame was told */
	uint64_t told_at; /* now_ms() of the last frame told */
	bool gone;
	struct feed *f;
	struct watched *next;
};

struct feed {
	uv_loop_t *loop;
	struct repo *repo;
	char *dir; /* the keepers' */
	feed_fn *fn;
	void *data;
	uv_fs_event_t watch;
	uv_timer_t frame, rescan;
	struct watched *keepers;
	/*
	 * The agents' records, read again only when the keepers came or went
	 * or a page's action ended (feed_records_changed): a status changes
	 * far more often, and reading records is libgit2's work on the loop.
	 */
	struct agent_rec *recs;
	size_t nrecs;
	bool recs_stale;
};

static void on_rescan(uv_timer_t *t);
static void recs_free(struct feed *f);
static void on_frame(uv_timer_t *t);

static void told_agents(struct feed *f)
{
	f->fn(f, FEED_AGENTS, -1, f->data);
}

static void on_meta(struct keeper_conn *c, const char *json, size_t len, void *data)
{
	struct watched *k = data;
	(void)c;
	char *s = xstrndup(json, len);
	json_object_put(k->meta);
	k->meta = json_tokener_parse(s);
	free(s);
	if (k->agent_pane)
		told_agents(k->f);
}

static void on_hello(struct keeper_conn *c, const struct keeper_info *info, void *data)
{
	struct watched *k = data;
	(void)c;
	free(k->handle);
	k->handle = info->handle ? xstrdup(info->handle) : NULL;
	k->agent_pane = info->agent_pane;
	k->sandboxed = info->sandboxed;
	json_object_put(k->meta);
	k->meta = info->meta ? json_tokener_parse(info->meta) : NULL;
	told_agents(k->f);
}

static void on_gone(struct keeper_conn *c, const char *why, void *data)
{
	struct watched *k = data;
	(void)c, (void)why;
	k->gone = true;
	uv_timer_start(&k->f->rescan, on_rescan, 0, 0);
}

static void on_event(struct pane *p, int events, void *data)
{
	struct watched *k = data;
	(void)p;
	if (!(events & (PANE_EV_DAMAGE | PANE_EV_TITLE | PANE_EV_EXIT)) || k->shown == 0)
		return;
	/* The first change after a quiet spell goes at once; the rest wait for the frame. */
	uint64_t now = now_ms();
	if (!k->pending && now - k->told_at >= FEED_FRAME_MS) {
		k->told_at = now;
		k->f->fn(k->f, FEED_PANE, k->pane, k->f->data);
		return;
	}
	k->pending = true;
	if (!uv_is_active((uv_handle_t *)&k->f->frame))
		uv_timer_start(&k->f->frame, on_frame,
			       FEED_FRAME_MS - WRX_MIN(now - k->told_at, FEED_FRAME_MS - 1), 0);
}

static void watched_free(struct watched *k)
{
	if (k->mirror)
		pane_free(k->mirror); /* closes its connection */
	json_object_put(k->meta);
	free(k->handle);
	free(k->path);
	free(k);
}

static struct watched *find(struct feed *f, int pane)
{
	for (struct watched *k = f->keepers; k; k = k->next)
		if (k->pane == pane)
			return k;
	return NULL;
}

/* Observe the keeper of pane at path; NULL when nobody answers there. */
static struct watched *observe(struct feed *f, int pane, const char *path)
{
	char *cause = NULL;
	int fd = keeper_conn_open(path, "observer", &cause);
	if (fd < 0) {
		free(cause);
		return NULL;
	}
	struct watched *k = xcalloc(1, sizeof *k);
	k->f = f;
	k->pane = pane;
	k->path = xstrdup(path);
	k->mirror = pane_mirror_new(24, 80, 0, on_event, k);
	pane_view(k->mirror, false);
	k->conn = keeper_conn_new(f->loop, fd, k->mirror, on_gone, k);
	keeper_conn_on_hello(k->conn, on_hello);
	keeper_conn_on_meta(k->conn, on_meta);
	return k;
}

/* The keepers there now: new ones observed, gone ones dropped. */
static void rescan(struct feed *f)
{
	bool changed = false;
	for (struct watched **pp = &f->keepers; *pp;) {
		struct watched *k = *pp;
		if (k->gone) {
			*pp = k->next;
			watched_free(k);
			changed = true;
		} else {
			pp = &k->next;
		}
	}
	DIR *d = opendir(f->dir);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		int pane, end = 0;
		if (sscanf(e->d_name, "%d.sock%n", &pane, &end) != 1 || e->d_name[end] ||
		    find(f, pane))
			continue;
		char *path = xasprintf("%s/%s", f->dir, e->d_name);
		struct watched *k = observe(f, pane, path);
		free(path);
		if (k) {
			k->next = f->keepers;
			f->keepers = k;
		}
	}
	if (d)
		closedir(d);
	f->recs_stale = true; /* an agent's keepers come as it is added, go as it is removed */
	if (changed)
		told_agents(f);
}

static void on_rescan(uv_timer_t *t)
{
	rescan(t->data);
}

static void on_dir(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct feed *f = h->data;
	(void)name, (void)events, (void)status;
	/* A keeper starting makes several files at once: one look after them. */
	uv_timer_start(&f->rescan, on_rescan, 50, 0);
}

static void on_frame(uv_timer_t *t)
{
	struct feed *f = t->data;
	for (struct watched *k = f->keepers; k; k = k->next)
		if (k->pending && !k->gone) {
			k->pending = false;
			k->told_at = now_ms();
			f->fn(f, FEED_PANE, k->pane, f->data);
		}
}

struct feed *feed_new(uv_loop_t *loop, struct repo *repo, feed_fn *fn, void *data, char **cause)
{
	char *dir = keeper_dir(repo_root(repo), cause);
	if (dir == NULL)
		return NULL;
	struct feed *f = xcalloc(1, sizeof *f);
	f->loop = loop;
	f->repo = repo;
	f->dir = dir;
	f->fn = fn;
	f->data = data;
	f->recs_stale = true;
	uv_timer_init(loop, &f->frame);
	uv_timer_init(loop, &f->rescan);
	f->frame.data = f->rescan.data = f;
	uv_fs_event_init(loop, &f->watch);
	f->watch.data = f;
	int rc = uv_fs_event_start(&f->watch, on_dir, dir, 0);
	if (rc < 0)
		log_msg("web: cannot watch %s (%s): agents started later are not seen", dir,
			uv_strerror(rc));
	rescan(f);
	return f;
}

static void on_closed(uv_handle_t *h)
{
	struct feed *f = h->data;
	if (h == (uv_handle_t *)&f->rescan)
		free(f);
}

void feed_free(struct feed *f)
{
	if (f == NULL)
		return;
	while (f->keepers) {
		struct watched *k = f->keepers;
		f->keepers = k->next;
		watched_free(k);
	}
	recs_free(f);
	free(f->dir);
	uv_close((uv_handle_t *)&f->watch, NULL);
	uv_close((uv_handle_t *)&f->frame, NULL);
	uv_close((uv_handle_t *)&f->rescan, on_closed);
}

static const char *meta_str(json_object *m, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(m, key, &v) ? json_object_get_string(v) : NULL;
}

static struct watched *agent_keeper(struct feed *f, const char *handle)
{
	for (struct watched *k = f->keepers; k; k = k->next)
		if (k->agent_pane && k->handle && !k->gone && !strcmp(k->handle, handle))
			return k;
	return NULL;
}

static int by_number(const void *x, const void *y)
{
	const struct agent_rec *a = x, *b = y;
	int na = a->number ? a->number : INT32_MAX, nb = b->number ? b->number : INT32_MAX;
	return na != nb ? (na < nb ? -1 : 1) : strcmp(a->handle, b->handle);
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *agent_json(struct feed *f, const struct agent_rec *a)
{
	json_object *o = json_object_new_object(), *v;
	struct watched *ak = agent_keeper(f, a->handle);
	json_object_object_add(o, "number", json_object_new_int(a->number));
	json_object_object_add(o, "handle", json_object_new_string(a->handle));
	json_object_object_add(o, "branch", str_or_null(a->branch));
	json_object_object_add(
		o, "status",
		str_or_null(a->missing ? "missing" : meta_str(ak ? ak->meta : NULL, "status")));
	if (ak && json_object_object_get_ex(ak->meta, "since", &v))
		json_object_object_add(o, "since", json_object_get(v));
	json_object_object_add(o, "title", str_or_null(meta_str(ak ? ak->meta : NULL, "title")));
	json_object_object_add(o, "failure",
			       str_or_null(meta_str(ak ? ak->meta : NULL, "failure")));
	json_object_object_add(o, "group", str_or_null(a->group));
	/* The dashboard's questions of this agent's, while that dashboard runs (keep_asks). */
	json_object *asks, *by, *list;
	if (ak && json_object_object_get_ex(ak->meta, "asks", &asks) &&
	    json_object_object_get_ex(asks, "by", &by) &&
	    json_object_object_get_ex(asks, "list", &list) && json_object_get_int(by) > 0 &&
	    kill(json_object_get_int(by), 0) == 0)
		json_object_object_add(o, "asks", json_object_get(list));
	json_object_object_add(o, "sandboxed", json_object_new_boolean(ak && ak->sandboxed));
	json_object_object_add(o, "remote", str_or_null(a->remote));
	json_object_object_add(o, "comments",
			       json_object_new_int(comments_count(repo_root(f->repo), a->handle)));
	json_object *panes = json_object_new_array();
	for (struct watched *k = f->keepers; k; k = k->next) {
		if (k->gone || !k->handle || strcmp(k->handle, a->handle))
			continue;
		json_object *p = json_object_new_object();
		json_object_object_add(p, "pane", json_object_new_int(k->pane));
		json_object_object_add(p, "agent", json_object_new_boolean(k->agent_pane));
		json_object_array_add(panes, p);
	}
	json_object_object_add(o, "panes", panes);
	return o;
}

static void recs_free(struct feed *f)
{
	for (size_t i = 0; i < f->nrecs; i++)
		agent_rec_free(&f->recs[i]);
	free(f->recs);
	f->recs = NULL;
	f->nrecs = 0;
}

/* The records, by number, read again when stale. */
static void recs_read(struct feed *f)
{
	char *cause = NULL;
	if (!f->recs_stale)
		return;
	f->recs_stale = false;
	recs_free(f);
	if (agent_list(f->repo, &f->recs, &f->nrecs, &cause) < 0) {
		log_msg("web: the agents: %s", cause);
		free(cause);
		f->recs = NULL;
		f->nrecs = 0;
		return;
	}
	qsort(f->recs, f->nrecs, sizeof *f->recs, by_number);
}

void feed_records_changed(struct feed *f)
{
	f->recs_stale = true;
	told_agents(f);
}

json_object *feed_agents(struct feed *f)
{
	json_object *arr = json_object_new_array();
	recs_read(f);
	for (size_t i = 0; i < f->nrecs; i++)
		json_object_array_add(arr, agent_json(f, &f->recs[i]));
	return arr;
}

bool feed_known(struct feed *f, const char *handle)
{
	recs_read(f);
	for (size_t i = 0; i < f->nrecs; i++)
		if (!strcmp(f->recs[i].handle, handle))
			return true;
	return false;
}

void feed_show(struct feed *f, int pane, int delta)
{
	struct watched *k = find(f, pane);
	if (k == NULL || k->gone)
		return;
	k->shown = WRX_MAX(k->shown + delta, 0);
	pane_view(k->mirror, k->shown > 0);
	if (k->shown > 0 && !pane_held(k->mirror))
		f->fn(f, FEED_PANE, k->pane, f->data); /* shown already to another page */
}

/* A colour as CSS's "#rrggbb", or null for the default. */
static void colour_json(struct buf *out, uint32_t c)
{
	uint32_t rgb;
	if (WRX_COLOUR_KIND(c) == WRX_COLOUR_INDEXED)
		rgb = colour_256_to_rgb((int)(c & 0xff));
	else if (WRX_COLOUR_KIND(c) == WRX_COLOUR_RGB)
		rgb = c & 0xffffff;
	else {
		buf_addstr(out, "null");
		return;
	}
	buf_addf(out, "\"#%06x\"", rgb);
}

/* text as a JSON string's contents: every byte of it text, never markup (the page's job). */
static void text_json(struct buf *out, const char *s, size_t n)
{
	json_object *o = json_object_new_string_len(s, (int)n);
	buf_addstr(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/* Row r as runs of one look: [[text, fg, bg, attrs], ...]. */
static void row_json(struct pane *p, int r, int cols, struct buf *out)
{
	struct buf text = {0};
	struct wrx_cell c, run = {0};
	bool open = false;
	buf_addch(out, '[');
	for (int col = 0; col <= cols; col++) {
		if (col < cols) {
			pane_cell(p, r, col, &c);
			if (c.width == 0)
				continue; /* a wide character's right half */
		}
		bool same = open && col < cols && c.fg == run.fg && c.bg == run.bg &&
			    c.attrs == run.attrs;
		if (open && !same) {
			buf_addch(out, '[');
			text_json(out, text.data ? text.data : "", text.len);
			buf_addch(out, ',');
			colour_json(out, run.fg);
			buf_addch(out, ',');
			colour_json(out, run.bg);
			buf_addf(out, ",%u],", run.attrs);
			text.len = 0;
			open = false;
		}
		if (col == cols)
			break;
		if (!open) {
			run = c;
			open = true;
		}
		if (c.ch[0] == 0) {
			buf_addch(&text, ' ');
			continue;
		}
		for (int i = 0; i < WRX_CELL_CHARS && c.ch[i]; i++) {
			char u[8];
			int n = utf8_encode(c.ch[i] < 0x20 ? 0xfffd : c.ch[i], u);
			buf_add(&text, u, (size_t)n);
		}
	}
	if (out->data[out->len - 1] == ',')
		out->len--;
	buf_addch(out, ']');
	buf_free(&text);
}

bool feed_frame(struct feed *f, int pane, uint64_t *since, int *rows, int *cols, struct buf *out)
{
	struct watched *k = find(f, pane);
	if (k == NULL || k->gone || pane_held(k->mirror))
		return false;
	struct pane *p = k->mirror;
	int nr = pane_rows(p), nc = pane_cols(p);
	uint64_t from = nr == *rows && nc == *cols ? *since : 0;
	int row, col, shape;
	bool visible;
	pane_cursor(p, &row, &col, &visible, &shape);
	buf_addf(out,
		 "{\"t\":\"pane\",\"pane\":%d,\"rows\":%d,\"cols\":%d,\"full\":%s,\"title\":", pane,
		 nr, nc, from == 0 ? "true" : "false");
	text_json(out, pane_title(p), strlen(pane_title(p)));
	buf_addf(out, ",\"cursor\":[%d,%d,%s],\"lines\":{", row, col, visible ? "true" : "false");
	bool any = false;
	for (int r = 0; r < nr; r++) {
		if (from && !pane_row_changed(p, r, from))
			continue;
		buf_addf(out, "%s\"%d\":", any ? "," : "", r);
		row_json(p, r, nc, out);
		any = true;
	}
	buf_addstr(out, "}}");
	*since = pane_sync_take(p);
	*rows = nr;
	*cols = nc;
	return true;
}
