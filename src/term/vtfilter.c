/*
 * vtfilter.c - see vtfilter.h. A small scanner over escape sequences; plain
 * text between them is copied in runs found with memchr(), so the cost on a
 * flood of text is a memcpy.
 *
 * Each sequence handler gets j, the index of the first byte after the ESC
 * (and after any control bytes, which the caller has already emitted), and
 * returns the index after the sequence, or 0 when the input ends inside it.
 */
#include "vtfilter.h"

#include "width.h"

#include <string.h>

#define ESC 0x1b
#define CAN 0x18
#define SUB 0x1a
#define BEL 0x07
#define CSI_ARGS_MAX 16
/* REP beyond the widest line is clamped by the terminal anyway. */
#define REP_MAX 4096

/* Remember the last graphic character of a run of text. */
static void note_text(struct vtfilter *f, const char *s, size_t n)
{
	/* Controls at the end do not count: look before them. */
	while (n > 0 && ((unsigned char)s[n - 1] < 0x20 || s[n - 1] == 0x7f))
		n--;
	if (n == 0)
		return;
	size_t k = n - 1;
	unsigned char c;
	while (k > 0 && n - k < 4 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	c = (unsigned char)s[k];
	size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	if (c < 0x20 || c == 0x7f || want != n - k)
		return; /* a partial or broken character: leave it */
	memcpy(f->last, s + k, want);
	f->lastlen = (int)want;
}

/* CSI n b: repeat the last graphic character n times. */
static void expand_rep(struct vtfilter *f, const char *args, size_t n, struct buf *out)
{
	long count = 0;
	for (size_t k = 0; k < n; k++) {
		if (args[k] < '0' || args[k] > '9')
			break;
		count = count * 10 + (args[k] - '0');
		if (count > REP_MAX)
			count = REP_MAX;
	}
	if (count == 0)
		count = 1;
	if (f->lastlen == 0)
		return;
	for (long k = 0; k < count; k++)
		buf_add(out, f->last, (size_t)f->lastlen);
}

/* Bytes libvterm executes wherever they appear (C0 but ESC, CAN, SUB; DEL). */
static bool executed(unsigned char c)
{
	return (c < 0x20 && c != ESC && c != CAN && c != SUB) || c == 0x7f;
}

static bool string_intro(unsigned char c)
{
	return c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X';
}

static void emit_executed(const char *data, size_t from, size_t to, struct buf *out)
{
	for (size_t k = from; k < to; k++)
		if (executed((unsigned char)data[k]))
			buf_addch(out, data[k]);
}

static void emit_rest(const char *data, size_t from, size_t to, struct buf *out)
{
	for (size_t k = from; k < to; k++)
		if (!executed((unsigned char)data[k]))
			buf_addch(out, data[k]);
}

/*
 * OSC 52 never reaches libvterm (whose string buffer would cut it at 64
 * bytes): a write's "Pc;Pd" goes to vf->clip, the newest replacing any
 * before it; a read ("?") is dropped, never answered.
 */
static void clipboard(struct vtfilter *vf, const char *data, size_t from, size_t to)
{
	if (vf->clip == NULL)
		return;
	struct buf body = {0};
	emit_rest(data, from, to, &body);
	size_t semi = body.data ? strcspn(body.data, ";") : 0;
	if (body.len > 0 && semi < body.len && strcmp(body.data + semi + 1, "?") != 0) {
		buf_consume(vf->clip, vf->clip->len);
		buf_add(vf->clip, body.data, body.len);
		vf->clip_set = true;
	}
	buf_free(&body);
}

/* OSC, DCS, APC, PM, SOS: data[j] is the introducer. */
static size_t do_string(struct vtfilter *vf, const char *data, size_t j, size_t len,
			struct buf *out)
{
	size_t t = j + 1;
	while (t < len) {
		unsigned char c = (unsigned char)data[t];
		if (c == BEL || c == CAN || c == SUB || c == ESC)
			break;
		t++;
	}
	if (t >= len || ((unsigned char)data[t] == ESC && t + 1 >= len))
		return 0;
	unsigned char c = (unsigned char)data[t];
	if (c == CAN || c == SUB)
		return t + 1; /* cancelled: nothing reaches libvterm */
	size_t end = c == BEL ? t + 1 : data[t + 1] == '\\' ? t + 2 : t;
	if (data[j] == ']' && t - j > 3 && !memcmp(data + j + 1, "52;", 3)) {
		clipboard(vf, data, j + 4, t);
		return end;
	}
	/*
	 * APC, PM, SOS: libvterm 0.1.4 knows none of them and would print the
	 * body as text, raw bytes and all (its UTF-8 decoder then holds a
	 * broken sequence over into later text: found by fuzz_pane). xterm
	 * and tmux show nothing of them; neither do we.
	 */
	if (data[j] != ']' && data[j] != 'P')
		return end;
	buf_addch(out, ESC);
	buf_addch(out, data[j]);
	emit_rest(data, j + 1, t, out); /* the body, without control bytes */
	if (c == BEL) {
		buf_addch(out, BEL);
		return t + 1;
	}
	buf_add(out, "\033\\", 2);
	/* ESC \ is the terminator; any other ESC ends the string and starts anew. */
	return data[t + 1] == '\\' ? t + 2 : t;
}

static void save_charsets(struct vtfilter *vf);
static void restore_charsets(struct vtfilter *vf, struct buf *out);

/*
 * A mode that keeps text off the plain path set (f 'h') or reset (f 'l').
 * Set by any list it is in; reset only when it is the whole list, as
 * libvterm may read the first parameter alone: kept on wrongly is only
 * slower, kept off wrongly would put text where libvterm would not.
 */
static void quirk(struct vtfilter *vf, unsigned q, bool alone, char f)
{
	if (f == 'h')
		vf->quirks |= q;
	else if (alone)
		vf->quirks &= ~q;
}

/* Whether the parameters p (NUL-terminated) have the number v; alone: as their only one. */
static bool param_has(const char *p, long v, bool *alone)
{
	bool hit = false;
	int n = 0;
	const char *a = p;
	for (;; a++) {
		long x = 0;
		for (; *a >= '0' && *a <= '9'; a++)
			x = x < 100000 ? x * 10 + (*a - '0') : x;
		hit |= x == v;
		n++;
		if (*a != ';' && *a != ':')
			break;
	}
	*alone = hit && n == 1 && *a == '\0';
	return hit;
}

/* A run of printable ASCII at out's offset at, noted if it may take the plain path. */
static void plain_text(struct vtfilter *f, size_t at, size_t n)
{
	if (f->quirks & VTFILTER_Q_SINGLE) {
		f->quirks &= ~VTFILTER_Q_SINGLE; /* this run's first character was shifted */
		return;
	}
	if (f->runs == NULL || n < VTFILTER_RUN_MIN || f->quirks || f->g[f->shifted] != 0)
		return;
	struct vtfilter_run run = {(uint32_t)at, (uint32_t)n, VTFILTER_TEXT};
	buf_add(f->runs, &run, sizeof run);
}

/* A restore of the cursor just went out: noted, whatever the quirks. */
static void split_here(struct vtfilter *f, const struct buf *out)
{
	if (f->runs == NULL)
		return;
	struct vtfilter_run run = {(uint32_t)out->len, 0, VTFILTER_SPLIT};
	buf_add(f->runs, &run, sizeof run);
}

/* The SGR with parameters p, just put in out at at, noted if the pane may take it itself. */
static void plain_sgr(struct vtfilter *f, size_t at, const char *p, size_t np, struct buf *out)
{
	if (f->runs == NULL || (f->quirks & (VTFILTER_Q_ORIGIN | VTFILTER_Q_SIZED)))
		return;
	for (size_t k = 0, digits = 0; k < np; k++) {
		digits = p[k] >= '0' && p[k] <= '9' ? digits + 1 : 0;
		if (digits > 9 || (digits == 0 && p[k] != ';' && p[k] != ':'))
			return; /* a number libvterm would keep otherwise, or a byte it reads */
	}
	struct vtfilter_run run = {(uint32_t)at, (uint32_t)(out->len - at), VTFILTER_SGR};
	buf_add(f->runs, &run, sizeof run);
}

/*
 * CSI ? Pm h or l: 47 becomes 1047 (libvterm 0.1.4 has only the latter),
 * DECCOLM (3) clears and homes, and a save (1048, 1049 set) or restore
 * (reset) of the cursor is told.
 */
static void dec_mode(struct vtfilter *vf, const char *p, size_t np, char f, struct buf *out)
{
	bool saves = false, deccolm = false, alone;
	if (param_has(p + 1, 6, &alone))
		quirk(vf, VTFILTER_Q_ORIGIN, alone, f);
	buf_add(out, "\033[?", 3);
	for (size_t k = 1; k < np;) {
		size_t n = strspn(p + k, "0123456789");
		if (n == 2 && !strncmp(p + k, "47", 2))
			buf_addstr(out, "1047");
		else
			buf_add(out, p + k, n);
		long v = 0; /* as libvterm reads it: 01049 is 1049 */
		for (size_t d = 0; d < n && v < 100000; d++)
			v = v * 10 + (p[k + d] - '0');
		saves |= n > 0 && (v == 1048 || v == 1049);
		deccolm |= n == 1 && p[k] == '3';
		k += n;
		if (k < np)
			buf_addch(out, p[k++]);
	}
	buf_addch(out, f);
	if (saves && f == 'l')
		split_here(vf, out);
	/* DECCOLM: the pane keeps its width; the screen is cleared and homed (as tmux). */
	if (deccolm)
		buf_addstr(out, "\033[H\033[2J");
	if (saves && f == 'h')
		save_charsets(vf);
	else if (saves)
		restore_charsets(vf, out);
	if (saves)
		buf_addstr(out, f == 'h' ? VTFILTER_SAVE : VTFILTER_RESTORE);
}

/* The SGR whose parameters are p, for screen.c (it is on the flood path: no printf). */
static void sgr_again(const char *p, size_t np, struct buf *out)
{
	buf_add(out, (const char[]){ESC, '[', VTFILTER_LEADER}, 3);
	buf_add(out, p, np);
	buf_add(out, VTFILTER_INTERMED "m", 2);
}

/*
 * The SGR a flood is full of (digits, ';' and ':' then 'm', numbers of at
 * most 9 digits): out as do_csi puts it, and noted, without its general
 * reading. 0 when it is not one such (do_csi reads it).
 */
static size_t sgr_fast(struct vtfilter *vf, const char *data, size_t j, size_t len, struct buf *out)
{
	size_t t = j + 1, digits = 0;
	int seps = 0;
	for (; t < len && t - j < 64; t++) {
		char c = data[t];
		if (c >= '0' && c <= '9') {
			if (++digits > 9)
				return 0;
		} else if (c == ';' || c == ':') {
			digits = 0;
			seps++;
		} else {
			break;
		}
	}
	if (t >= len || data[t] != 'm' || seps >= CSI_ARGS_MAX)
		return 0;
	size_t at = out->len;
	buf_add(out, "\033[m", 3);
	sgr_again(data + j + 1, t - j - 1, out);
	if (vf->runs && !(vf->quirks & (VTFILTER_Q_ORIGIN | VTFILTER_Q_SIZED))) {
		struct vtfilter_run run = {(uint32_t)at, (uint32_t)(out->len - at), VTFILTER_SGR};
		buf_add(vf->runs, &run, sizeof run);
	}
	return t + 1;
}

/* CSI: data[j] is '['. */
static size_t do_csi(struct vtfilter *vf, const char *data, size_t j, size_t len, struct buf *out)
{
	size_t fast = sgr_fast(vf, data, j, len, out);
	if (fast)
		return fast;
	size_t t = j + 1;
	int seps = 0;
	bool controls = false; /* bytes libvterm runs inside it */
	while (t < len) {
		unsigned char c = (unsigned char)data[t];
		if ((c >= 0x40 && c != 0x7f) || c == ESC || c == CAN || c == SUB)
			break;
		seps += c == ';' || c == ':';
		controls |= c < 0x20 || c == 0x7f;
		t++;
	}
	if (t >= len)
		return 0;
	unsigned char f = (unsigned char)data[t];
	if (controls)
		emit_executed(data, j + 1, t, out); /* libvterm runs them mid-sequence */
	if (f == ESC)
		return t; /* aborted by a new sequence */
	if (f == CAN || f == SUB)
		return t + 1;
	if (f >= 0x80)
		return t; /* no valid final byte: drop the sequence, keep the byte */
	if (seps >= CSI_ARGS_MAX)
		return t + 1; /* more arguments than libvterm can hold: drop */
	if (f == 'b') {
		expand_rep(vf, data + j + 1, t - j - 1, out);
		return t + 1;
	}
	/* The parameter bytes, without the control bytes already sent. */
	char p[256];
	size_t np = 0;
	if (!controls && t - j - 1 < sizeof p) {
		np = t - j - 1;
		memcpy(p, data + j + 1, np);
	} else {
		for (size_t k = j + 1; k < t && np < sizeof p; k++)
			if (!executed((unsigned char)data[k]))
				p[np++] = data[k];
	}
	if (np == sizeof p) { /* parameters no program means: as they are */
		buf_add(out, "\033[", 2);
		emit_rest(data, j + 1, t + 1, out);
		return t + 1;
	}
	p[np] = '\0';
	bool leader = np && p[0] >= 0x3c && p[0] <= 0x3f;
	bool intermed = np && p[np - 1] >= 0x20 && p[np - 1] <= 0x2f;
	if (leader && p[0] == VTFILTER_LEADER && intermed && p[np - 1] == '$' &&
	    (f == 'm' || f == 's' || f == 'u' || f == 'J'))
		return t + 1; /* ours: never the program's */
	if (f == 'J' && np == 1 && p[0] == '3') {
		buf_addstr(out, VTFILTER_CLEAR_HISTORY);
		return t + 1;
	}
	if (p[0] == '?' && (f == 'h' || f == 'l')) {
		dec_mode(vf, p, np, (char)f, out);
		return t + 1;
	}
	bool alone;
	if ((f == 'h' || f == 'l') && !leader && !intermed && param_has(p, 4, &alone))
		quirk(vf, VTFILTER_Q_INSERT, alone, (char)f); /* IRM */
	if (f == 'q' && intermed && p[np - 1] == '"')
		vf->quirks |= VTFILTER_Q_PROTECT; /* DECSCA: until a reset */
	if (f == 'm' && !leader && !intermed) {
		/*
		 * libvterm's pen goes unused, so it need not read the SGR; but a CSI
		 * it handles also brings a cursor past the right margin back
		 * (DECSLRM), and one it does not, ours, would not: it gets the
		 * shortest SGR for that, then ours.
		 */
		size_t at = out->len;
		buf_add(out, "\033[m", 3);
		sgr_again(p, np, out);
		plain_sgr(vf, at, p, np, out);
		return t + 1;
	}
	buf_add(out, "\033[", 2);
	emit_rest(data, j + 1, t + 1, out);
	if (f == 'p' && np == 1 && p[0] == '!') /* DECSTR: the pen as reset */
		sgr_again("", 0, out);
	return t + 1;
}

static void save_charsets(struct vtfilter *vf)
{
	memcpy(vf->saved_g, vf->g, sizeof vf->g);
	vf->saved_shifted = vf->shifted;
}

/* After libvterm restored the cursor: the character sets saved with it. */
static void restore_charsets(struct vtfilter *vf, struct buf *out)
{
	memcpy(vf->g, vf->saved_g, sizeof vf->g);
	vf->shifted = vf->saved_shifted;
	vf->quirks &= ~VTFILTER_Q_LOCKED; /* by the SI or SO below */
	static const char which[] = "()*+";
	for (int k = 0; k < 4; k++)
		buf_add(out, (const char[]){ESC, which[k], vf->g[k] ? vf->g[k] : 'B'}, 3);
	buf_addch(out, vf->shifted ? 0x0e : 0x0f);
}

/* ESC, intermediates (0x20-0x2f), a final byte (0x30-0x7e). */
static size_t do_escape(struct vtfilter *vf, const char *data, size_t j, size_t len,
			struct buf *out)
{
	size_t t = j;
	while (t < len) {
		unsigned char c = (unsigned char)data[t];
		if (!(executed(c) || (c >= 0x20 && c <= 0x2f)))
			break;
		t++;
	}
	if (t >= len)
		return 0;
	emit_executed(data, j, t, out);
	unsigned char f = (unsigned char)data[t];
	if (f == ESC)
		return t;
	if (f == CAN || f == SUB)
		return t + 1;
	if (f >= 0x7f)
		return t; /* no valid final byte: drop the ESC */
	/*
	 * libvterm looks for '[' and the string introducers before it looks at
	 * intermediates: to it ESC ! [ starts a CSI (and ESC SP ] an OSC) that
	 * this filter never saw, so what follows would reach libvterm raw (a
	 * bare REP: the endless loop; a string: the overflows above). In
	 * ECMA-48 these are escape sequences of no meaning; xterm ignores them
	 * and prints what follows. So do we: the sequence is dropped.
	 */
	if (t > j && (f == '[' || string_intro(f)))
		return t + 1;
	buf_addch(out, ESC);
	emit_rest(data, j, t + 1, out);
	/* The last intermediate, for a designation: ESC ( 0 and the like. */
	const char *gi = t > j ? memchr("()*+", data[t - 1], 4) : NULL;
	if (gi && data[t - 1] != 0)
		vf->g[gi - "()*+"] = f == 'B' ? 0 : (char)f;
	if (t == j && f == '7') { /* DECSC */
		save_charsets(vf);
		buf_addstr(out, VTFILTER_SAVE);
	}
	if (t == j && f == '8') { /* DECRC */
		split_here(vf, out);
		restore_charsets(vf, out);
		buf_addstr(out, VTFILTER_RESTORE);
	}
	if (t == j && (f == 'N' || f == 'O'))
		vf->quirks |= VTFILTER_Q_SINGLE; /* SS2, SS3 */
	if (t == j && (f == 'n' || f == 'o'))
		vf->quirks |= VTFILTER_Q_LOCKED; /* LS2, LS3 */
	if (t == j + 1 && data[j] == '#' && f >= '3' && f <= '6')
		vf->quirks |= VTFILTER_Q_SIZED; /* DECDHL, DECSWL, DECDWL: until a reset */
	if (t == j && f == 'c') { /* RIS: what a restore then restores is the reset state */
		memset(vf->g, 0, sizeof vf->g);
		vf->shifted = false;
		vf->quirks = 0;
		save_charsets(vf);
		/* libvterm 0.1.4's reset leaves mouse reporting on; xterm's and tmux's do not. */
		buf_addstr(out, "\033[?1000;1002;1003;1004;1005;1006;1015l\0337" VTFILTER_SAVE);
	}
	return t + 1;
}

/*
 * Text: as it is, but for a character whose width libvterm counts otherwise
 * than the C library, which goes as its stand-in (width.h). Returns the
 * bytes taken: all, but an unfinished UTF-8 sequence at the end of the input.
 */
static size_t add_text(struct vtfilter *f, const char *s, size_t n, bool at_end, struct buf *out)
{
	size_t mark = out->len, i = 0;
	while (i < n) {
		size_t k = i;
		while (k < n && (unsigned char)s[k] < 0x80) {
			if (s[k] >= 0x20 && s[k] < 0x7f) {
				size_t e = k + 1;
				while (e < n && s[e] >= 0x20 && s[e] < 0x7f)
					e++;
				plain_text(f, out->len + (k - i), e - k);
				k = e;
				continue;
			}
			if (s[k] == 0x0e || s[k] == 0x0f) { /* SO, SI */
				f->shifted = s[k] == 0x0e;
				f->quirks &= ~VTFILTER_Q_LOCKED;
			}
			k++;
		}
		buf_add(out, s + i, k - i);
		if (k == n) {
			i = n;
			break;
		}
		unsigned char c = (unsigned char)s[k];
		size_t want = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 1;
		if (c >= 0xf5 || (c >= 0x80 && c < 0xc2))
			want = 1;
		if (k + want > n && at_end && want > 1) {
			i = k; /* the rest of it comes with the next read */
			break;
		}
		uint32_t cp = want == 2 ? c & 0x1f : want == 3 ? c & 0x0f : c & 0x07;
		bool ok = want > 1 && k + want <= n;
		for (size_t m = 1; ok && m < want; m++) {
			unsigned char x = (unsigned char)s[k + m];
			ok = (x & 0xc0) == 0x80;
			cp = cp << 6 | (x & 0x3f);
		}
		/*
		 * Not UTF-8 (a lead byte without its continuation), or UTF-8 for a
		 * surrogate, an overlong form, past U+10FFFF, or a C1 control
		 * (U+009B would be a CSI this filter never saw): U+FFFD, so that
		 * libvterm never judges a byte by where a read happened to end
		 * (found by fuzz_pane: the cursor at column -1).
		 */
		bool banned = ok && ((cp >= 0x80 && cp < 0xa0) || (cp >= 0xd800 && cp < 0xe000) ||
				     cp > 0x10ffff || (want == 3 && cp < 0x800) ||
				     (want == 4 && cp < 0x10000));
		if (!ok || banned) {
			buf_add(out, "\xef\xbf\xbd", 3);
			i = k + (banned ? want : 1);
			continue;
		}
		uint32_t v = width_for_vterm(cp);
		if (v == cp) {
			buf_add(out, s + k, want);
		} else {
			char u[4];
			buf_add(out, u, (size_t)utf8_encode(v, u));
		}
		i = k + want;
	}
	if (out->len > mark) /* (out->data is NULL until something is added) */
		note_text(f, out->data + mark, out->len - mark);
	return i;
}

size_t vtfilter(struct vtfilter *f, const char *data, size_t len, struct buf *out)
{
	size_t i = 0;
	while (i < len) {
		const char *e = memchr(data + i, ESC, len - i);
		if (e == NULL) {
			size_t took = add_text(f, data + i, len - i, true, out);
			return i + took;
		}
		size_t at = (size_t)(e - data);
		add_text(f, data + i, at - i, false, out);
		/* Control bytes after the ESC run first; then see what it introduces. */
		size_t j = at + 1;
		while (j < len && executed((unsigned char)data[j]))
			j++;
		if (j >= len)
			return at;
		size_t mark = out->len;
		buf_add(out, data + at + 1, j - at - 1);
		unsigned char c = (unsigned char)data[j];
		size_t next;
		if (c == ESC) /* ESC ESC: the first one is void */
			next = j;
		else if (c == CAN || c == SUB)
			next = j + 1;
		else if (c == '[')
			next = do_csi(f, data, j, len, out);
		else if (string_intro(c))
			next = do_string(f, data, j, len, out);
		else
			next = do_escape(f, data, j, len, out);
		if (next == 0) {
			out->len = mark; /* unfinished: nothing of it goes out yet */
			if (out->data)
				out->data[mark] = '\0';
			return at;
		}
		i = next;
	}
	return len;
}
