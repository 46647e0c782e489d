/*
 * clipboard.c - see clipboard.h. A read is two children on the loop
 * (run_stream): the tool lists the clipboard's types, then gives the
 * bytes of the best image type; osascript has no listing and gives PNG
 * data as hex. Writing the image (up to 20 MiB, util/image.c) is the
 * thread pool's work (uv_queue_work), so the loop never waits on the disk.
 */
#include "clipboard.h"

#include "../util/image.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/util.h"
#include "run.h"
#include "session.h"
#include "children.h"
#include "wrx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TYPE "\001" /* in a reader's argv: the type chosen */

static const struct reader {
	const char *tool;
	const char *needs; /* an environment variable that says this clipboard is there */
	const char *const list[7];
	const char *const read[7];
} readers[] = {
	{"wl-paste",
	 "WAYLAND_DISPLAY",
	 {"wl-paste", "--list-types"},
	 {"wl-paste", "--no-newline", "--type", TYPE}},
	{"xclip",
	 "DISPLAY",
	 {"xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"},
	 {"xclip", "-selection", "clipboard", "-t", TYPE, "-o"}},
	{"osascript",
	 NULL,
	 {NULL},
	 {"osascript", "-e",
	  "the clipboard as \xc2\xab"
	  "class PNGf\xc2\xbb"}},
};

/* The image types taken, best first. */
static const char *const types[] = {"image/png", "image/jpeg", "image/webp", "image/gif"};

struct read {
	struct wrx *w;
	char *worktree;
	char *host, *handle; /* owned: an agent on a server (remote.hosts), staged there */
	const struct reader *r;
	bool listing;
	const char *type; /* chosen */
	struct buf out, err;
	bool too_big;
	uv_work_t work; /* the image written off the loop */
	const char *kind;
	char *path; /* owned: where it was written */
	int rc;
	clipboard_done_fn *done;
	void *arg;
};

static void end(struct read *x, const char *path, const char *why)
{
	x->done(x->w, path, why, x->arg);
	buf_free(&x->out);
	buf_free(&x->err);
	free(x->worktree);
	free(x->host);
	free(x->handle);
	free(x->path);
	free(x);
}

static void output(void *arg, int stream, const char *p, size_t n)
{
	struct read *x = arg;
	struct buf *b = stream == 1 ? &x->out : &x->err;
	/* As hex, osascript's is twice the size and some. */
	size_t cap = stream == 1 ? 2 * CLIPBOARD_MAX + 64 : 4096;
	if (b->len + n > cap) {
		x->too_big = stream == 1;
		return;
	}
	buf_add(b, p, n);
}

static long backlog(void *arg)
{
	return ((struct read *)arg)->too_big ? -1 : 0;
}

static int start(struct read *x);

/* osascript's «data PNGf89504E47...»: the bytes, in place. */
static bool unhex(struct buf *b)
{
	char *s = b->data ? strstr(b->data, "PNGf") : NULL;
	if (s == NULL)
		return false;
	s += 4;
	size_t n = 0;
	for (; s[0] && s[1] && strchr("0123456789abcdefABCDEF", s[0]) &&
	       strchr("0123456789abcdefABCDEF", s[1]);
	     s += 2) {
		char h[3] = {s[0], s[1], 0};
		b->data[n++] = (char)strtol(h, NULL, 16);
	}
	b->len = n;
	return n > 0;
}

static void write_image(uv_work_t *work)
{
	struct read *x = work->data;
	x->rc = image_stage(x->worktree, x->out.data, x->out.len, x->kind, &x->path);
}

static void written(uv_work_t *work, int status)
{
	struct read *x = work->data;
	if (status < 0 || x->rc < 0) {
		char *why = xasprintf("%s/.workrex/tmp: %s", x->worktree,
				      strerror(status < 0 ? ECANCELED : -x->rc));
		end(x, NULL, why);
		free(why);
		return;
	}
	end(x, x->path, NULL);
}

/* The child's last line: {"path": where it is there}, or why not. */
static void staged_there(void *arg, int status, const char *output, const char *last)
{
	struct read *x = arg;
	(void)output;
	json_object *o = status == 0 ? json_tokener_parse(last) : NULL;
	const char *path = json_str(o, "path");
	if (path)
		end(x, path, NULL);
	else
		end(x, NULL, *last ? wrx_outcome(last) : "workrex __remote-paste said nothing");
	json_object_put(o);
}

/* An agent on a server: the image goes there through the host's link, by a child. */
static void stage_there(struct read *x)
{
	char *const more[] = {x->host, x->handle, NULL};
	char **argv = child_argv(x->w, "remote-paste", more);
	struct run_opts o = {.argv = argv,
			     .cwd = x->w->root,
			     .input = x->out.data,
			     .input_len = x->out.len,
			     .done = staged_there,
			     .arg = x};
	int rc = run_start(x->w->loop, &o);
	child_argv_free(argv);
	if (rc < 0)
		end(x, NULL, "cannot run workrex __remote-paste");
}

/* x->out holds what the clipboard gave: an image, staged off the loop, or why not. */
static void got_image(struct read *x)
{
	if (x->out.len > CLIPBOARD_MAX) {
		end(x, NULL, "the clipboard's image is over 20 MiB");
		return;
	}
	const char *kind = image_kind(x->out.data, x->out.len);
	if (kind == NULL) {
		end(x, NULL, "what the clipboard gave is not an image (PNG, JPEG, GIF, WebP)");
		return;
	}
	x->kind = kind;
	if (x->host) {
		stage_there(x);
		return;
	}
	/* Up to 20 MiB to disk, and a directory pruned: in the thread pool, not on the loop. */
	x->work.data = x;
	if (uv_queue_work(x->w->loop, &x->work, write_image, written) < 0)
		end(x, NULL, "could not write the image");
}

static void exited(void *arg, int code)
{
	struct read *x = arg;
	if (x->too_big) {
		end(x, NULL, "the clipboard's image is over 20 MiB");
		return;
	}
	if (code != 0) {
		/* Its own words: "Error: target image/png not available", "Nothing is copied". */
		char *nl = x->err.data ? strchr(x->err.data, '\n') : NULL;
		if (nl)
			*nl = '\0';
		char *why = xasprintf("%s: %s", x->r->tool,
				      x->err.len ? x->err.data : "the clipboard is empty");
		log_msg("clipboard: %s (status %d)", why, code);
		end(x, NULL, why);
		free(why);
		return;
	}
	if (x->listing) {
		for (size_t i = 0; i < WRX_ARRAY_LEN(types) && x->type == NULL; i++) {
			const char *p = x->out.data;
			size_t n = strlen(types[i]);
			for (; p && (p = strstr(p, types[i])); p += n)
				if ((p == x->out.data || p[-1] == '\n') &&
				    (p[n] == '\n' || p[n] == '\0' || p[n] == '\r')) {
					x->type = types[i];
					break;
				}
		}
		if (x->type == NULL) {
			end(x, NULL, "no image on the clipboard");
			return;
		}
		x->listing = false;
		buf_consume(&x->out, x->out.len);
		if (start(x) < 0)
			end(x, NULL, "the clipboard tool did not start");
		return;
	}
	if (strcmp(x->r->tool, "osascript") == 0 && !unhex(&x->out)) {
		end(x, NULL, "no image on the clipboard");
		return;
	}
	got_image(x);
}

static int start(struct read *x)
{
	const char *const *src = x->listing ? x->r->list : x->r->read;
	char *argv[8] = {0};
	for (int i = 0; i < 7 && src[i]; i++)
		argv[i] = (char *)(strcmp(src[i], TYPE) == 0 ? x->type : src[i]);
	struct run_stream rs = {.argv = argv,
				.timeout_ms = CLIPBOARD_TIMEOUT_MS,
				.output = output,
				.backlog = backlog,
				.exit = exited,
				.arg = x};
	return run_stream(x->w->loop, &rs);
}

static void from_terminal(struct wrx *w, const char *data, size_t len, const char *why, void *arg)
{
	struct read *x = arg;
	(void)w;
	if (data == NULL) {
		end(x, NULL, why);
		return;
	}
	buf_add(&x->out, data, len);
	got_image(x);
}

/* Ask the outer terminal (OSC 5522); false when it does not offer its clipboard. */
static bool from_terminal_start(struct read *x)
{
	const struct wrx_hooks *h = x->w->hooks;
	return h->terminal_clipboard && h->terminal_clipboard(x->w->ui, from_terminal, x) == 0;
}

bool clipboard_over_ssh(void)
{
	const char *a = getenv("SSH_CONNECTION"), *b = getenv("SSH_TTY");
	return (a && *a) || (b && *b);
}

void clipboard_stage(struct wrx *w, const struct agent *a, clipboard_done_fn *done, void *arg)
{
	struct read *x = xcalloc(1, sizeof *x);
	x->w = w;
	x->worktree = xstrdup(a->path);
	if (a->remote.host) {
		x->host = xstrdup(a->remote.host);
		x->handle = xstrdup(a->handle);
	}
	x->done = done;
	x->arg = arg;
	/* Over SSH the user's clipboard is where their terminal is: ask it first. */
	bool remote = clipboard_over_ssh();
	if (remote && from_terminal_start(x))
		return;
	for (size_t i = 0; i < WRX_ARRAY_LEN(readers) && x->r == NULL; i++) {
		const char *v = readers[i].needs ? getenv(readers[i].needs) : NULL;
		bool there = readers[i].needs == NULL || (v && *v);
		if (there && path_has(readers[i].tool))
			x->r = &readers[i];
	}
	if (x->r == NULL) {
		if (!remote && from_terminal_start(x))
			return;
		end(x, NULL,
		    getenv("WAYLAND_DISPLAY") ? "no clipboard tool: install wl-clipboard (wl-paste)"
		    : getenv("DISPLAY")       ? "no clipboard tool: install xclip"
					      : "no clipboard here: neither WAYLAND_DISPLAY nor "
						"DISPLAY is set (and no osascript), and the "
						"terminal does not offer its clipboard (OSC 5522)");
		return;
	}
	x->listing = x->r->list[0] != NULL;
	x->type = x->listing ? NULL : "image/png";
	if (start(x) < 0)
		end(x, NULL, "the clipboard tool did not start");
}

/* ---- a pane's clipboard writes (OSC 52) ---- */

/* After the user refuses a pane's write, its next ones are refused unasked this long. */
#define REFUSED_QUIET_MS 60000

struct clip_ask {
	int pane;
	char *text;
	size_t len;
};

static void clip_answered(struct wrx *w, bool yes, void *arg)
{
	struct clip_ask *k = arg;
	struct wpane *wp = session_find_pane(w->s, k->pane);
	if (yes && wp && w->hooks->set_clipboard)
		w->hooks->set_clipboard(w->ui, k->text, k->len);
	else if (wp)
		wp->clip_refused = now_ms();
	free(k->text);
	free(k);
}

/* The first characters of text, fit for one line of the dashboard. */
static char *preview(const char *text, size_t len)
{
	struct buf b = {0};
	size_t n = 0;
	for (size_t i = 0; i < len && n < 40; i++, n++) {
		unsigned char c = (unsigned char)text[i];
		buf_addch(&b, c < 0x20 || c == 0x7f || c >= 0x80 ? '.' : (char)c);
	}
	if (n < len)
		buf_addstr(&b, "...");
	return b.data ? b.data : xstrdup("");
}

void clipboard_pane_write(struct wrx *w, struct wpane *wp, const char *text, size_t len)
{
	const char *policy = wp->sandboxed ? w->cfg.clipboard_sandboxed : w->cfg.clipboard_host;
	const char *key = wp->sandboxed ? "clipboard.sandboxed_panes" : "clipboard.host_panes";
	const char *handle = wp->agent->handle;
	if (policy && strcmp(policy, "allow") == 0) {
		if (w->hooks->set_clipboard)
			w->hooks->set_clipboard(w->ui, text, len);
		return;
	}
	if (policy == NULL || strcmp(policy, "ask") != 0) {
		log_msg("clipboard: %s pane %d: a write of %zu bytes refused (%s: deny)", handle,
			wp->id, len, key);
		wrx_message(w, true, "%s: its clipboard write was refused (%s: deny)", handle, key);
		return;
	}
	if (wp->clip_refused && now_ms() - wp->clip_refused < REFUSED_QUIET_MS) {
		log_msg("clipboard: %s pane %d: a write of %zu bytes refused (refused just before)",
			handle, wp->id, len);
		return;
	}
	struct clip_ask *k = xcalloc(1, sizeof *k);
	k->pane = wp->id;
	k->text = xmalloc(len ? len : 1);
	memcpy(k->text, text, len);
	k->len = len;
	char *shown = preview(text, len);
	char *q = xasprintf("%s%s sets the clipboard to \"%s\" (%zu bytes). Allow?", handle,
			    wp->sandboxed ? " (sandboxed)" : "", shown, len);
	free(shown);
	if (w->hooks->ask == NULL || w->hooks->ask(w->ui, q, handle, clip_answered, k) < 0) {
		/* Its questions are on the status line already: this one is only counted. */
		log_msg("clipboard: %s pane %d: a write of %zu bytes refused (its questions wait)",
			handle, wp->id, len);
		free(k->text);
		free(k);
	}
	free(q);
}
