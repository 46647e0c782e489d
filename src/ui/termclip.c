/*
 * termclip.c - the outer terminal's clipboard, read through kitty's
 * clipboard protocol (OSC 5522), for a dashboard that runs over SSH: the
 * user's clipboard is where their terminal is, not where workrex runs.
 *
 * At start, where the clipboard tools cannot be the user's (over SSH, or
 * with no display), the dashboard asks whether the terminal knows mode
 * 5522 (DECRQM, CSI ? 5522 $ p); the answer (CSI ? 5522 ; Ps $ y, Ps 1-3:
 * yes) comes in as a key curses was taught. A read sends
 *
 *   OSC 5522 ; type=read ; base64("image/png image/jpeg image/webp image/gif") ST
 *
 * and the terminal answers status=OK, then status=DATA packets (mime and
 * data in base64, in chunks), then status=DONE; or an error status (EPERM
 * when the user said no). Only while a read is awaited are ESC ] strings
 * taken out of the input (read here, in bulk: termclip_tty); a read that is not answered in 30 s (the terminal
 * may ask its user first) ends with a reason, and so does one over 20 MiB.
 */
#include "../core/clipboard.h"
#include "../util/log.h"
#include "ui.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_TIMEOUT_MS 30000
#define PACKET_MAX (1u << 20) /* kitty sends 4 KiB */
#define IMAGE_TYPES "image/png image/jpeg image/webp image/gif"

/* The read under way. */
struct termclip {
	wrx_clip_fn *done;
	void *arg;
	struct buf data;  /* the first image type's bytes */
	char *mime;       /* which type that is */
	bool ok;          /* status=OK came */
	int esc;          /* 0; 1: ESC held; 2: in the string; 3: ESC in it */
	struct buf osc;   /* the string so far */
	const char *fail; /* set: the read failed, ignore the rest until DONE */
};

static bool remote_or_headless(void)
{
	if (clipboard_over_ssh())
		return true;
	const char *d = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
	return !(d && *d) && !(wl && *wl);
}

void termclip_query(struct ui *ui)
{
	if (remote_or_headless())
		buf_addstr(&ui->tty.raw, "\033[?5522$p");
}

void termclip_answer(struct ui *ui, bool yes)
{
	ui->clip5522 = yes ? 1 : -1;
	log_msg("the terminal %s kitty's clipboard protocol (OSC 5522)",
		yes ? "offers" : "does not offer");
}

static void finish(struct ui *ui, const char *why)
{
	struct termclip *t = ui->termclip;
	ui->termclip = NULL;
	uv_timer_stop(&ui->timer.clip);
	if (why == NULL && t->data.len == 0)
		why = "no image on the terminal's clipboard";
	t->done(ui->w, why ? NULL : t->data.data, t->data.len, why, t->arg);
	/* An ESC held for a reply that was a key after all goes on now. */
	if (t->esc == 1)
		input_key(ui, 27, 0);
	buf_free(&t->data);
	buf_free(&t->osc);
	free(t->mime);
	free(t);
}

static void on_timeout(uv_timer_t *h)
{
	struct ui *ui = h->data;
	if (ui->termclip)
		finish(ui, "the terminal did not answer its clipboard read (OSC 5522)");
}

/* The value of key in a 5522 packet's metadata (k=v:k=v), or NULL; caller frees. */
static char *meta_value(const char *meta, size_t n, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < n;) {
		size_t end = i;
		while (end < n && meta[end] != ':')
			end++;
		if (end - i > kl && !strncmp(meta + i, key, kl) && meta[i + kl] == '=')
			return xstrndup(meta + i + kl + 1, end - i - kl - 1);
		i = end + 1;
	}
	return NULL;
}

/* One packet, "5522;meta;payload". */
static void packet(struct ui *ui, const char *s, size_t n)
{
	struct termclip *t = ui->termclip;
	if (n < 5 || strncmp(s, "5522;", 5) != 0)
		return;
	s += 5, n -= 5;
	const char *semi = memchr(s, ';', n);
	size_t mlen = semi ? (size_t)(semi - s) : n;
	char *type = meta_value(s, mlen, "type"), *status = meta_value(s, mlen, "status");
	if (type == NULL || strcmp(type, "read") != 0 || status == NULL) {
		free(type);
		free(status);
		return;
	}
	if (!strcmp(status, "OK")) {
		t->ok = true;
	} else if (!strcmp(status, "DATA") && t->ok && !t->fail && semi) {
		char *m64 = meta_value(s, mlen, "mime");
		struct buf mime = {0};
		if (m64 && base64_decode(&mime, m64, strlen(m64)) == 0 && mime.data &&
		    !strncmp(mime.data, "image/", 6)) {
			/* The first type sent is the one kept; chunks of others are dropped. */
			if (t->mime == NULL)
				t->mime = xstrdup(mime.data);
			if (!strcmp(t->mime, mime.data) &&
			    base64_decode(&t->data, semi + 1, n - mlen - 1) < 0)
				t->fail = "the terminal sent malformed clipboard data";
			else if (t->data.len > CLIPBOARD_MAX)
				t->fail = "the clipboard's image is over 20 MiB";
			if (t->fail)
				buf_free(&t->data);
		}
		buf_free(&mime);
		free(m64);
	} else if (!strcmp(status, "DONE")) {
		free(type);
		free(status);
		finish(ui, t->fail);
		return;
	} else if (strcmp(status, "DATA") != 0) {
		/* EPERM (the user said no), ENOSYS, EBUSY, ...: the read ends here. */
		char *why = xasprintf("the terminal refused to read its clipboard (%s)", status);
		log_msg("%s", why);
		finish(ui, why);
		free(why);
	}
	free(type);
	free(status);
}

/*
 * One byte while a read is under way: the terminal's, or the user's (into
 * keys). false once the read is over: the byte was not looked at.
 */
static bool feed_byte(struct ui *ui, unsigned char c, struct buf *keys)
{
	struct termclip *t = ui->termclip;
	if (t == NULL)
		return false;
	switch (t->esc) {
	case 0:
		if (c == 27)
			t->esc = 1;
		else
			buf_addch(keys, (char)c);
		return true;
	case 1:
		t->esc = 0;
		if (c == ']') {
			t->esc = 2;
			buf_consume(&t->osc, t->osc.len);
			return true;
		}
		buf_addch(keys, 27);
		return feed_byte(ui, c, keys);
	case 2:
		if (c == 27) {
			t->esc = 3;
		} else if (c == 7) {
			t->esc = 0;
			packet(ui, t->osc.data ? t->osc.data : "", t->osc.len);
		} else if (t->osc.len >= PACKET_MAX) {
			t->fail = "a clipboard packet from the terminal was over 1 MiB";
		} else {
			buf_addch(&t->osc, (char)c);
		}
		return true;
	default: /* ESC in the string: ST, or the string was cut short */
		if (c == '\\') {
			t->esc = 0;
			packet(ui, t->osc.data ? t->osc.data : "", t->osc.len);
			return true;
		}
		t->esc = 1;
		return feed_byte(ui, c, keys);
	}
}

/*
 * curses reads its input one byte per read(2), a few microseconds each: a
 * screenshot's megabytes of base64 would take seconds. While a read is
 * under way the terminal is read here in bulk instead (curses holds
 * nothing unread then: input_read drained it), and what the user typed
 * meanwhile goes back to curses (ungetch) to be decoded as keys.
 */
bool termclip_tty(struct ui *ui)
{
	if (ui->termclip == NULL)
		return false;
	char in[1 << 16];
	ssize_t n = read(ui->tty.fd, in, sizeof in);
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	struct buf keys = {0};
	for (ssize_t i = 0; i < n; i++)
		if (!feed_byte(ui, (unsigned char)in[i], &keys))
			buf_add(&keys, in + i, (size_t)(n - i)), i = n;
	/* Back to curses a few at a time (its queue is short), last byte first. */
	for (size_t done = 0; done < keys.len;) {
		size_t k = WRX_MIN(keys.len - done, 64);
		for (size_t j = done + k; j > done; j--)
			ungetch((unsigned char)keys.data[j - 1]);
		done += k;
		input_read(ui);
	}
	buf_free(&keys);
	return true;
}

int termclip_read(void *data, wrx_clip_fn *done, void *arg)
{
	struct ui *ui = data;
	if (ui->clip5522 <= 0)
		return -ENOTSUP;
	if (ui->termclip)
		return -EBUSY;
	struct termclip *t = xcalloc(1, sizeof *t);
	t->done = done;
	t->arg = arg;
	ui->termclip = t;
	buf_addstr(&ui->tty.raw, "\033]5522;type=read;");
	base64_encode(&ui->tty.raw, IMAGE_TYPES, strlen(IMAGE_TYPES));
	buf_addstr(&ui->tty.raw, "\033\\");
	ui_dirty(ui);
	uv_timer_start(&ui->timer.clip, on_timeout, READ_TIMEOUT_MS, 0);
	return 0;
}

void termclip_close(struct ui *ui)
{
	if (ui->termclip)
		finish(ui, "the dashboard is closing");
}
