/*
 * Tests for src/term/screen.c: our screen layer against libvterm's own
 * screen, fed the same bytes. Random streams of text, controls, cursor
 * movement, erases, inserts and deletes, scroll regions (with left and right
 * margins), SGR, protected cells and selective erase, the alternate screen and
 * resizes must leave the same cells, cursor and scrollback in both. Wide
 * characters are tested on their own: there the two differ on purpose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/pane.h"
#include "term/screen.h"
#include "term/scrollback.h"
#include "term/vtfilter.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libvterm's own screen, its scrollback kept in the same compact form as ours. */
struct ref {
	VTerm *vt;
	VTermScreen *vs;
	struct sb *sb;
	struct vtfilter filter;
	struct wrx_cell line[512];
};

static void from_vterm(const VTermScreenCell *v, struct wrx_cell *c)
{
	memset(c, 0, sizeof *c);
	if (v->chars[0] != (uint32_t)-1)
		for (int i = 0; i < WRX_CELL_CHARS && v->chars[i]; i++)
			c->ch[i] = v->chars[i];
	c->width = v->chars[0] == (uint32_t)-1 ? 0 : (uint8_t)v->width;
	c->attrs = (uint16_t)((v->attrs.bold ? WRX_ATTR_BOLD : 0) |
			      (v->attrs.underline == VTERM_UNDERLINE_DOUBLE ? WRX_ATTR_DUNDERLINE
			       : v->attrs.underline                         ? WRX_ATTR_UNDERLINE
									    : 0) |
			      (v->attrs.italic ? WRX_ATTR_ITALIC : 0) |
			      (v->attrs.blink ? WRX_ATTR_BLINK : 0) |
			      (v->attrs.reverse ? WRX_ATTR_REVERSE : 0) |
			      (v->attrs.strike ? WRX_ATTR_STRIKE : 0));
	c->fg = screen_colour(&v->fg, true);
	c->bg = screen_colour(&v->bg, false);
}

static int ref_push(int cols, const VTermScreenCell *cells, void *user)
{
	struct ref *r = user;
	for (int i = 0; i < cols && i < 512; i++)
		from_vterm(&cells[i], &r->line[i]);
	sb_push(r->sb, r->line, WRX_MIN(cols, 512), false);
	return 1;
}

/* Lines come back only as text and colours of what the ASCII streams print. */
static int ref_pop(int cols, VTermScreenCell *cells, void *user)
{
	struct ref *r = user;
	if (sb_pop(r->sb, r->line, WRX_MIN(cols, 512), NULL) < 0)
		return 0;
	for (int i = 0; i < cols; i++) {
		VTermScreenCell *v = &cells[i];
		const struct wrx_cell *c = &r->line[WRX_MIN(i, 511)];
		memset(v, 0, sizeof *v);
		memcpy(v->chars, c->ch, sizeof v->chars);
		v->width = 1;
		v->attrs.bold = !!(c->attrs & WRX_ATTR_BOLD);
		v->attrs.underline = (c->attrs & WRX_ATTR_DUNDERLINE)  ? VTERM_UNDERLINE_DOUBLE
				     : (c->attrs & WRX_ATTR_UNDERLINE) ? VTERM_UNDERLINE_SINGLE
								       : 0;
		v->attrs.italic = !!(c->attrs & WRX_ATTR_ITALIC);
		v->attrs.blink = !!(c->attrs & WRX_ATTR_BLINK);
		v->attrs.reverse = !!(c->attrs & WRX_ATTR_REVERSE);
		v->attrs.strike = !!(c->attrs & WRX_ATTR_STRIKE);
		for (int k = 0; k < 2; k++) {
			uint32_t w = k ? c->bg : c->fg;
			VTermColor *col = k ? &v->bg : &v->fg;
			if (WRX_COLOUR_KIND(w) == WRX_COLOUR_INDEXED) {
				vterm_color_indexed(col, (uint8_t)w);
			} else if (WRX_COLOUR_KIND(w) == WRX_COLOUR_RGB) {
				vterm_color_rgb(col, (uint8_t)(w >> 16), (uint8_t)(w >> 8),
						(uint8_t)w);
			} else {
				vterm_color_indexed(col, 0);
				col->type |= k ? VTERM_COLOR_DEFAULT_BG : VTERM_COLOR_DEFAULT_FG;
			}
		}
	}
	return 1;
}

static const VTermScreenCallbacks ref_cbs = {.sb_pushline = ref_push, .sb_popline = ref_pop};

static void ref_open(struct ref *r, int rows, int cols)
{
	memset(r, 0, sizeof *r);
	r->sb = sb_new(1000);
	r->vt = vterm_new(rows, cols);
	vterm_set_utf8(r->vt, 1);
	r->vs = vterm_obtain_screen(r->vt);
	vterm_screen_set_callbacks(r->vs, &ref_cbs, r);
	vterm_screen_enable_altscreen(r->vs, 1);
	vterm_screen_reset(r->vs, 1);
	/* As screen_new: a restore before any save restores the reset state. */
	vterm_input_write(r->vt, "\0337", 2);
}

static void ref_close(struct ref *r)
{
	vterm_free(r->vt);
	sb_free(r->sb);
}

/*
 * The bytes as the pane gives them to libvterm (vtfilter first), but with
 * the SGRs as the program wrote them: the filter hands them to our screen
 * alone, and libvterm's own screen, the reference, needs them.
 */
static void ref_feed(struct ref *r, const char *s, size_t n)
{
	struct buf filtered = {0}, clean = {0};
	size_t used = vtfilter(&r->filter, s, n, &filtered);
	assert_int_equal(used, n);
	for (size_t i = 0; i < filtered.len;) {
		const char *m = memmem(filtered.data + i, filtered.len - i, "\033[?", 3);
		size_t at = m ? (size_t)(m - filtered.data) : filtered.len;
		buf_add(&clean, filtered.data + i, at - i);
		if (m == NULL)
			break;
		size_t k = at + 3 + strspn(m + 3, "0123456789;:");
		if (k + 1 < filtered.len && filtered.data[k] == '$' &&
		    filtered.data[k + 1] == 'm') {
			clean.len -= 3; /* the "\033[m" the filter puts before it */
			buf_addstr(&clean, "\033[");
			buf_add(&clean, m + 3, k - at - 3);
			buf_addch(&clean, 'm');
			i = k + 2;
		} else {
			buf_add(&clean, m, 3);
			i = at + 3;
		}
	}
	buf_free(&filtered);
	for (size_t off = 0; off < clean.len;)
		off += vterm_input_write(r->vt, clean.data + off, clean.len - off);
	vterm_screen_flush_damage(r->vs);
	buf_free(&clean);
}

static const char *cell_text(const struct wrx_cell *c, char *out)
{
	size_t n = 0;
	for (int i = 0; i < WRX_CELL_CHARS && c->ch[i]; i++)
		n += (size_t)utf8_encode(c->ch[i], out + n);
	out[n] = '\0';
	return out;
}

static void same_cells(const struct wrx_cell *want, const struct wrx_cell *got, int cols,
		       const char *where, int line)
{
	for (int c = 0; c < cols; c++) {
		char a[32], b[32];
		/*
		 * A blank cell shows nothing of its foreground. The scrollback
		 * keeps a wrapped line's trailing blanks as they were (for reflow),
		 * where libvterm's lines trim them.
		 */
		bool unseen_fg = want[c].ch[0] == 0 && want[c].attrs == 0;
		if (memcmp(want[c].ch, got[c].ch, sizeof want[c].ch) == 0 &&
		    want[c].width == got[c].width && want[c].attrs == got[c].attrs &&
		    (want[c].fg == got[c].fg || unseen_fg) && want[c].bg == got[c].bg)
			continue;
		fail_msg("%s line %d col %d: libvterm '%s' w%d a%x fg%x bg%x, ours '%s' w%d a%x "
			 "fg%x "
			 "bg%x",
			 where, line, c, cell_text(&want[c], a), want[c].width, want[c].attrs,
			 want[c].fg, want[c].bg, cell_text(&got[c], b), got[c].width, got[c].attrs,
			 got[c].fg, got[c].bg);
	}
}

static void same_screen(struct ref *r, struct pane *p, const char *input)
{
	int rows, cols;
	vterm_get_size(r->vt, &rows, &cols);
	assert_int_equal(rows, pane_rows(p));
	assert_int_equal(cols, pane_cols(p));
	struct wrx_cell want[512], got[512];
	for (int row = 0; row < rows; row++) {
		for (int c = 0; c < cols; c++) {
			VTermScreenCell v;
			vterm_screen_get_cell(r->vs, (VTermPos){.row = row, .col = c}, &v);
			from_vterm(&v, &want[c]);
		}
		assert_int_equal(pane_line(p, row, got, cols), 0);
		same_cells(want, got, cols, input, row);
	}
	VTermPos cur;
	vterm_state_get_cursorpos(vterm_obtain_state(r->vt), &cur);
	int crow, ccol, shape;
	bool visible;
	pane_cursor(p, &crow, &ccol, &visible, &shape);
	if (crow != cur.row || ccol != cur.col)
		fail_msg("after %s: cursor libvterm %d,%d ours %d,%d", input, cur.row, cur.col,
			 crow, ccol);
	if (sb_count(r->sb) != pane_history(p))
		fail_msg("after %s: history libvterm %zu ours %zu", input, sb_count(r->sb),
			 pane_history(p));
	for (size_t i = 0; i < sb_count(r->sb) && i < 40; i++) {
		sb_get(r->sb, i, want, cols);
		assert_int_equal(pane_line(p, -(int)i - 1, got, cols), 0);
		same_cells(want, got, cols, "history", (int)i);
	}
}

static void feeds(struct pane *p, const char *s)
{
	pane_feed(p, s, strlen(s));
}

/* One random piece of terminal output. */
static void random_piece(unsigned *seed, int rows, int cols, struct buf *out)
{
	static const char *words[] = {"agent", "x", "merge", "worktree ", "  ", "status-line", "$"};
	static const char *fixed[] = {
		"\r\n",      "\n",        "\r",        "\t",          "\b",          "\033M",
		"\033D",     "\033E",     "\033#8",    "\033[?1049h", "\033[?1049l", "\033[?47h",
		"\033[?47l", "\033[1\"q", "\033[0\"q", "\033[?J",     "\033[?1K",    "\033[?2K",
		"\033[4h",   "\033[4l",   "\033[?7l",  "\033[?7h",    "\033[?6h",    "\033[?6l",
		"\033[?69h", "\033[?69l", "\033[r",    "\033H",       "\033[3g",     "\0337",
		"\0338",     "\033[0m",   "\033c",     "\033[s",      "\033[u"};
	static const char verbs[] = "ABCDEFGHJKLMPSTX@`adefr";
	unsigned r = (unsigned)rand_r(seed) % 100;
	if (r < 35) {
		buf_addstr(out, words[rand_r(seed) % (int)WRX_ARRAY_LEN(words)]);
	} else if (r < 55) {
		buf_addstr(out, fixed[rand_r(seed) % (int)WRX_ARRAY_LEN(fixed)]);
	} else if (r < 75) {
		char v = verbs[rand_r(seed) % (int)(sizeof verbs - 1)];
		int a = rand_r(seed) % (WRX_MAX(rows, cols) + 2), b = rand_r(seed) % (cols + 2);
		if (v == 'r' || v == 'H')
			buf_addf(out, "\033[%d;%d%c", a % (rows + 1), 1 + b % (rows + 1), v);
		else if (v == 'J' || v == 'K')
			buf_addf(out, "\033[%d%c", a % 3, v);
		else
			buf_addf(out, "\033[%d%c", a, v);
	} else if (r < 78) {
		/* left and right margins (with ?69h) */
		/* One rand_r a statement: argument order would make each compiler's stream its own. */
		int l = 1 + rand_r(seed) % cols;
		int rm = 1 + rand_r(seed) % cols;
		buf_addf(out, "\033[%d;%ds", l, rm);
	} else {
		static const char *sgr[] = {"1",  "4", "21", "3",  "5",  "7",  "9",  "22", "24",
					    "27", "0", "31", "42", "39", "49", "97", "104"};
		int k = rand_r(seed) % 4;
		if (k == 0)
			buf_addf(out, "\033[38;5;%dm", rand_r(seed) % 256);
		else if (k == 1) {
			int red = rand_r(seed) % 256;
			int green = rand_r(seed) % 256;
			int blue = rand_r(seed) % 256;
			buf_addf(out, "\033[48;2;%d;%d;%dm", red, green, blue);
		} else
			buf_addf(out, "\033[%sm", sgr[rand_r(seed) % (int)WRX_ARRAY_LEN(sgr)]);
	}
}

static void test_random_streams_match_libvterm(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 60; round++) {
		unsigned seed = round * 7919 + 1;
		/*
		 * At least two rows: on a screen of one, libvterm erases the row a
		 * newline scrolls away; ours keeps it (test_one_row_keeps_lines).
		 */
		int rows = 2 + (int)(round % 12) * 3, cols = 2 + (int)((round * 13) % 70);
		struct ref r;
		ref_open(&r, rows, cols);
		struct pane *p = pane_new(rows, cols, 1000, NULL, NULL);
		struct buf piece = {0};
		for (int step = 0; step < 600; step++) {
			buf_consume(&piece, piece.len);
			/*
			 * Resizes on the main screen only: on the alternate one libvterm
			 * cuts the main screen's bottom, ours keeps it (tested below).
			 * And of the height only: at a new width ours rewraps the text
			 * where libvterm cuts it (test_reflow.c).
			 */
			if (rand_r(&seed) % 150 == 0 && !pane_alt_screen(p)) {
				int was_rows = rows, was_cols = cols;
				rows = 2 + rand_r(&seed) % 39;
				(void)rand_r(&seed);
				vterm_set_size(r.vt, rows, cols);
				if (rows < was_rows || cols < was_cols)
					screen_fit(r.vt);
				vterm_screen_flush_damage(r.vs);
				pane_resize(p, rows, cols);
				/*
				 * A cursor saved on the bigger screen and restored is
				 * outside, where libvterm's own screen writes out of
				 * bounds; ours brings it back (tested below).
				 */
				ref_feed(&r, "\0337", 2);
				feeds(p, "\0337");
				buf_addf(&piece, "resize %dx%d", rows, cols);
				same_screen(&r, p, piece.data);
				continue;
			}
			random_piece(&seed, rows, cols, &piece);
			pane_feed(p, piece.data, piece.len);
			ref_feed(&r, piece.data, piece.len);
			char where[160];
			int wl = snprintf(where, sizeof where, "round %u step %d ", round, step);
			for (size_t k = 0; k < piece.len && wl < (int)sizeof where - 5; k++)
				wl += snprintf(where + wl, sizeof where - (size_t)wl,
					       (unsigned char)piece.data[k] < 0x20 ? "\\x%02x"
										   : "%c",
					       (unsigned char)piece.data[k]);
			same_screen(&r, p, where);
		}
		buf_free(&piece);
		pane_free(p);
		ref_close(&r);
	}
}

static void expect_cursor(struct pane *p, int row, int col)
{
	int r, c, shape;
	bool visible;
	pane_cursor(p, &r, &c, &visible, &shape);
	if (r != row || c != col)
		fail_msg("cursor at %d,%d, not %d,%d", r, c, row, col);
}

static void expect_row(struct pane *p, int row, const char *want)
{
	char *got = pane_line_text(p, row);
	assert_string_equal(got, want);
	free(got);
}

/* Writing over either half of a wide character blanks the other half. */
static void test_wide_characters_stay_whole(void **state)
{
	(void)state;
	struct pane *p = pane_new(3, 10, 100, NULL, NULL);
	feeds(p, "\xe4\xb8\xad\xe6\x96\x87"
		 "ab"); /* 中文ab */
	struct wrx_cell c[10];
	pane_line(p, 0, c, 10);
	assert_int_equal(c[0].width, 2);
	assert_int_equal(c[1].width, 0);
	assert_int_equal(c[2].ch[0], 0x6587);
	/* A narrow character on the left half of 中: its right half goes blank. */
	feeds(p, "\r");
	feeds(p, "X");
	pane_line(p, 0, c, 10);
	assert_int_equal(c[0].ch[0], 'X');
	assert_int_equal(c[0].width, 1);
	assert_int_equal(c[1].ch[0], 0);
	assert_int_equal(c[1].width, 1);
	expect_row(p, 0,
		   "X \xe6\x96\x87"
		   "ab");
	/* On the right half of 文 (column 3): its left half goes blank. */
	feeds(p, "\033[1;4HY");
	pane_line(p, 0, c, 10);
	assert_int_equal(c[2].ch[0], 0);
	assert_int_equal(c[2].width, 1);
	assert_int_equal(c[3].ch[0], 'Y');
	expect_row(p, 0, "X  Yab");
	/* Deleting a character that splits a wide one shifts no half alone. */
	feeds(p, "\r\n\xe4\xb8\xad\xe6\x96\x87\r\033[P");
	pane_line(p, 1, c, 10);
	for (int i = 0; i < 10; i++)
		assert_true(c[i].width != 0 || (i > 0 && c[i - 1].width == 2));
	expect_row(p, 1, " \xe6\x96\x87");
	/* Inserting pushes a wide character off the right edge: none left halved. */
	feeds(p, "\r\n\033[9G\xe4\xb8\xad\r\033[@");
	pane_line(p, 2, c, 10);
	assert_true(c[9].width != 2);
	/* A narrower screen cuts a wide character at its edge: blank, not half. */
	feeds(p, "\033[2;1H\033[K\033[2;4H\xe4\xb8\xad");
	pane_resize(p, 3, 4);
	pane_line(p, 1, c, 4);
	assert_int_equal(c[3].width, 1);
	assert_int_equal(c[3].ch[0], 0);
	pane_free(p);
}

/* Lines scrolled off go to the history; a taller screen takes them back. */
static void test_scroll_and_resize_keep_lines(void **state)
{
	(void)state;
	struct pane *p = pane_new(3, 8, 100, NULL, NULL);
	feeds(p, "one\r\ntwo\r\nthree\r\nfour\r\nfive");
	assert_int_equal(pane_history(p), 2);
	expect_row(p, -1, "two");
	expect_row(p, -2, "one");
	expect_row(p, 0, "three");
	pane_resize(p, 5, 8);
	assert_int_equal(pane_history(p), 0);
	expect_row(p, 0, "one");
	expect_row(p, 4, "five");
	expect_cursor(p, 4, 4);
	pane_resize(p, 2, 8);
	expect_row(p, 0, "four");
	expect_row(p, 1, "five");
	assert_int_equal(pane_history(p), 3);
	/* The alternate screen scrolls nothing into the history. */
	feeds(p, "\033[?1049h");
	for (int i = 0; i < 10; i++)
		feeds(p, "alt\r\n");
	assert_int_equal(pane_history(p), 3);
	feeds(p, "\033[?1049l");
	expect_row(p, 1, "five");
	pane_free(p);
}

/*
 * libvterm 0.1.4 restores a cursor saved on a bigger screen outside the
 * smaller one: it comes back to the bottom row before anything is printed.
 */
static void test_saved_cursor_beyond_a_shrunk_screen(void **state)
{
	(void)state;
	struct pane *p = pane_new(24, 71, 100, NULL, NULL);
	feeds(p, "\033[12;20r\033[39f\0337");
	pane_resize(p, 18, 21);
	feeds(p, "\033[4h\0338status-line\033[@\033[2L\033[P\r\nmore\033[14T\033[3S");
	expect_cursor(p, 17, 4);
	feeds(p, "\033[Hhome");
	expect_row(p, 0, "home");
	pane_free(p);
}

/*
 * A program on the alternate screen while the pane shrinks and grows (an
 * editor while the terminal is resized): the main screen comes back whole,
 * the cursor where the shell left it; quitting while small lands on the line
 * after the command, moved up with the rest.
 */
static void test_resize_under_the_alternate_screen(void **state)
{
	(void)state;
	struct pane *p = pane_new(24, 20, 100, NULL, NULL);
	for (int i = 1; i <= 20; i++) {
		char line[16];
		snprintf(line, sizeof line, "l%d\r\n", i);
		feeds(p, line);
	}
	feeds(p, "wrx$ vim\r\n\033[?1049h\033[HALT");
	pane_resize(p, 10, 20);
	expect_row(p, 0, "ALT");
	pane_resize(p, 24, 20);
	feeds(p, "\033[?1049l");
	expect_row(p, 0, "l1");
	expect_row(p, 20, "wrx$ vim");
	assert_int_equal(pane_history(p), 0);
	expect_cursor(p, 21, 0);

	feeds(p, "\033[?1049hALT");
	pane_resize(p, 10, 20);
	feeds(p, "\033[?1049l");
	expect_row(p, 8, "wrx$ vim");
	expect_row(p, 0, "l13");
	assert_int_equal(pane_history(p), 12);
	expect_row(p, -1, "l12");
	expect_cursor(p, 9, 0);
	feeds(p, "wrx$");
	expect_row(p, 9, "wrx$");
	/* Grown on the main screen: lines come back above, the cursor moves with them. */
	pane_resize(p, 24, 20);
	expect_row(p, 0, "l1");
	expect_row(p, 20, "wrx$ vim");
	expect_row(p, 21, "wrx$");
	pane_free(p);
}

/*
 * A narrower pane rewraps what wrapped at the margin, on the screen and in
 * the history, and a wider one joins it again; the cursor stays on its
 * character; a line that ended with a newline stays a line of its own.
 */
static void test_reflow_narrow_and_widen(void **state)
{
	(void)state;
	struct pane *p = pane_new(4, 10, 100, NULL, NULL);
	feeds(p, "0123456789abcdefghij\r\n$ hello");
	expect_row(p, 0, "0123456789");
	expect_row(p, 1, "abcdefghij");
	expect_cursor(p, 2, 7);
	/* The cursor keeps its row (as in tmux): what its line grew by goes up. */
	pane_resize(p, 4, 5);
	assert_int_equal(pane_history(p), 3);
	expect_row(p, -3, "01234");
	expect_row(p, -2, "56789");
	expect_row(p, -1, "abcde");
	expect_row(p, 0, "fghij");
	expect_row(p, 1, "$ hel");
	expect_row(p, 2, "lo");
	expect_cursor(p, 2, 2);
	pane_resize(p, 4, 10);
	assert_int_equal(pane_history(p), 0);
	expect_row(p, 0, "0123456789");
	expect_row(p, 1, "abcdefghij");
	expect_row(p, 2, "$ hello");
	expect_cursor(p, 2, 7);
	/* Typing goes on where it was. */
	feeds(p, " world");
	expect_row(p, 2, "$ hello wo");
	expect_row(p, 3, "rld");
	pane_resize(p, 4, 20);
	expect_row(p, 1, "$ hello world");
	expect_cursor(p, 1, 13);
	pane_free(p);

	/* A newline at the margin is not a wrap; neither is a line erased to its end. */
	p = pane_new(3, 10, 100, NULL, NULL);
	feeds(p, "0123456789\r\nabc\r\n");
	pane_resize(p, 3, 20);
	expect_row(p, 0, "0123456789");
	expect_row(p, 1, "abc");
	feeds(p, "\033[H\033[2J0123456789012345678901234\033[1;15H\033[K\033[3;1H");
	pane_resize(p, 3, 40);
	expect_row(p, 0, "01234567890123");
	expect_row(p, 1, "01234");
	pane_free(p);
}

/* Each character of a long history survives narrowing and widening back. */
static void test_reflow_keeps_the_history(void **state)
{
	(void)state;
	struct pane *p = pane_new(5, 40, 1000, NULL, NULL);
	struct buf in = {0};
	for (int i = 0; i < 200; i++)
		buf_addf(&in,
			 "line %03d \xe4\xb8\xad\xe6\x96\x87 \033[1mbold\033[0m and some text "
			 "%d\r\n",
			 i, i * 7);
	pane_feed(p, in.data, in.len);
	size_t before = pane_history(p);
	char *want = pane_line_text(p, -1);
	pane_resize(p, 5, 9);
	assert_true(pane_history(p) > 3 * before);
	pane_resize(p, 5, 13);
	pane_resize(p, 5, 40);
	assert_int_equal(pane_history(p), before);
	char *got = pane_line_text(p, -1);
	assert_string_equal(got, want);
	free(got);
	for (int i = 0; i < 200 && i < (int)before; i++) {
		char *line = pane_line_text(p, -(int)before + i);
		char *expect = xasprintf("line %03d \xe4\xb8\xad\xe6\x96\x87 bold and some text %d",
					 i + 196 - (int)before, (i + 196 - (int)before) * 7);
		assert_string_equal(line, expect);
		free(expect);
		free(line);
	}
	free(want);
	buf_free(&in);
	pane_free(p);
}

/* A wide character wrapped early leaves no blank in the joined line. */
static void test_reflow_wide_at_the_margin(void **state)
{
	(void)state;
	struct pane *p = pane_new(3, 5, 100, NULL, NULL);
	feeds(p, "abcd\xe4\xb8\xad"
		 "ef");
	expect_row(p, 0, "abcd");
	expect_row(p, 1,
		   "\xe4\xb8\xad"
		   "ef");
	pane_resize(p, 3, 10);
	expect_row(p, 0,
		   "abcd\xe4\xb8\xad"
		   "ef");
	expect_cursor(p, 0, 8);
	pane_free(p);
}

/* The alternate screen is not rewrapped; the main one under it comes back as it was. */
static void test_reflow_not_on_the_alternate_screen(void **state)
{
	(void)state;
	struct pane *p = pane_new(3, 10, 100, NULL, NULL);
	feeds(p, "\033[?1049h0123456789abc");
	pane_resize(p, 3, 5);
	expect_row(p, 0, "01234");
	expect_row(p, 1, "abc");
	pane_resize(p, 3, 10);
	expect_row(p, 0, "01234");
	pane_free(p);
}

/*
 * What libvterm 0.1.4 drops or misreads reaches the cells: dim, conceal,
 * overline, the underline styles and colour, the colon colour forms; and a
 * saved cursor restores them.
 */
static void test_every_sgr_attribute(void **state)
{
	(void)state;
	struct pane *p = pane_new(3, 20, 100, NULL, NULL);
	struct wrx_cell c[20];
	feeds(p, "\033[2;8;53mA\033[22;28;55;4:3;58:2::1:2:3mB\033[4:0;59mC"
		 "\033[21mD\033[4:4mE\033[4:5;58;5;46mF\033[0;38:2::18:52:86;48:5:200mG"
		 "\033[0;38:2:1:2:3mH\033[0m");
	pane_line(p, 0, c, 20);
	assert_int_equal(c[0].attrs, WRX_ATTR_DIM | WRX_ATTR_CONCEAL | WRX_ATTR_OVERLINE);
	assert_int_equal(c[1].attrs, WRX_ATTR_CURLY);
	assert_int_equal(c[1].ul, WRX_COLOUR_RGB | 0x010203);
	assert_int_equal(c[2].attrs, 0);
	assert_int_equal(c[2].ul, WRX_COLOUR_DEFAULT);
	assert_int_equal(c[3].attrs, WRX_ATTR_DUNDERLINE);
	assert_int_equal(c[4].attrs, WRX_ATTR_DOTTED);
	assert_int_equal(c[5].attrs, WRX_ATTR_DASHED); /* 58;5;46 is no blink, no background */
	assert_int_equal(c[5].ul, WRX_COLOUR_INDEXED | 46);
	assert_int_equal(c[5].bg, WRX_COLOUR_DEFAULT);
	assert_int_equal(c[6].fg, WRX_COLOUR_RGB | 0x123456);
	assert_int_equal(c[6].bg, WRX_COLOUR_INDEXED | 200);
	assert_int_equal(c[7].fg, WRX_COLOUR_RGB | 0x010203);
	/* DECSC keeps the pen, dim and all; DECRC brings it back; RIS resets. */
	feeds(p, "\r\n\033[2;53m\0337\033[0mx\0338y");
	pane_line(p, 1, c, 20);
	assert_int_equal(c[0].attrs, WRX_ATTR_DIM | WRX_ATTR_OVERLINE);
	/* DECRC restores the character sets DECSC saved (libvterm 0.1.4 keeps them not). */
	feeds(p, "\r\033(0\0337\033(Bq\0338q\033(B");
	pane_line(p, 1, c, 20);
	assert_int_equal(c[0].ch[0], 0x2500);
	/* A reset ends mouse reporting too (libvterm 0.1.4's alone would not). */
	feeds(p, "\033[?1000h\033[?1006h");
	assert_true(pane_mouse_mode(p) != 0);
	feeds(p, "\033cz");
	assert_int_equal(pane_mouse_mode(p), 0);
	pane_line(p, 0, c, 20);
	assert_int_equal(c[0].attrs, 0);
	/* The scrollback keeps them. */
	feeds(p, "\033[4:3;58:5:9;2mq\r\n\n\n\n");
	assert_true(pane_history(p) >= 1);
	pane_line(p, -(int)pane_history(p), c, 20); /* "zq" */
	assert_int_equal(c[1].ch[0], 'q');
	assert_int_equal(c[1].attrs, WRX_ATTR_CURLY | WRX_ATTR_DIM);
	assert_int_equal(c[1].ul, WRX_COLOUR_INDEXED | 9);
	pane_free(p);
}

/*
 * A screen one row high scrolls its whole region at every newline: the row
 * goes to the history, as tmux keeps it (libvterm's own screen erases it).
 */
static void test_one_row_keeps_lines(void **state)
{
	(void)state;
	struct wrx_cell c[8];
	struct pane *p = pane_new(1, 8, 100, NULL, NULL);
	feeds(p, "one\r\ntwo\r\nthree");
	assert_int_equal(pane_history(p), 2);
	pane_line(p, -2, c, 8);
	assert_int_equal(c[0].ch[0], 'o');
	pane_line(p, -1, c, 8);
	assert_int_equal(c[0].ch[0], 't');
	pane_line(p, 0, c, 8);
	assert_int_equal(c[2].ch[0], 'r');
	/* Not from the alternate screen. */
	feeds(p, "\033[?1049hx\r\ny\r\nz");
	assert_int_equal(pane_history(p), 2);
	pane_free(p);
}

/*
 * clear (ED 2, ED 3) after a command line that wrapped: the history goes
 * with ED 3, and without it the history's last line no longer runs on
 * into the first row, so a resize does not join them (the '12 ' of
 * '12 tests pass' went to the end of the command line).
 */
static void test_clear_breaks_the_run_on(void **state)
{
	(void)state;
	const char *cmd = "$ workrex set-title 'writing tests'; workrex set-status working; "
			  "clear; echo 12\r\n";
	for (int e3 = 0; e3 <= 1; e3++) {
		struct pane *p = pane_new(3, 29, 100, NULL, NULL);
		feeds(p, cmd);
		assert_true(pane_history(p) >= 1);
		feeds(p, e3 ? "\033[H\033[2J\033[3J12 tests pass\r\n$ "
			    : "\033[H\033[2J12 tests pass\r\n$ ");
		assert_int_equal(pane_history(p) == 0, e3);
		pane_resize(p, 20, 45);
		char *row = pane_line_text(p, 0);
		assert_string_equal(row, "12 tests pass");
		free(row);
		pane_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_streams_match_libvterm),
		cmocka_unit_test(test_wide_characters_stay_whole),
		cmocka_unit_test(test_one_row_keeps_lines),
		cmocka_unit_test(test_clear_breaks_the_run_on),
		cmocka_unit_test(test_scroll_and_resize_keep_lines),
		cmocka_unit_test(test_saved_cursor_beyond_a_shrunk_screen),
		cmocka_unit_test(test_resize_under_the_alternate_screen),
		cmocka_unit_test(test_every_sgr_attribute),
		cmocka_unit_test(test_reflow_narrow_and_widen),
		cmocka_unit_test(test_reflow_keeps_the_history),
		cmocka_unit_test(test_reflow_wide_at_the_margin),
		cmocka_unit_test(test_reflow_not_on_the_alternate_screen),
	};
	return cmocka_run_group_tests_name("screen", tests, NULL, NULL);
}
