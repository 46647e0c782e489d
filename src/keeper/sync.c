/*
 * sync.c - updates from a pane to its mirror.
 *
 * An update, in this machine's byte order (both ends run here):
 *
 *   u16 rows, cols        the emulator's size
 *   u16 row, col          the cursor
 *   u8  flags             SYNC_VISIBLE | SYNC_ALT | SYNC_EXITED | SYNC_HELD
 *   u8  shape, mouse, events
 *   i32 exit status
 *   u32 n, title[n]
 *                         (a held update ends here: its size is the one sent last)
 *   u8  reset             1: the history below replaces the mirror's
 *   u32 capacity, count   the emulator's history: lines kept, lines held
 *   u32 n, n x (u32 len, line[len])    history lines, oldest first
 *   u16 n, n x (u16 row, u8 wrapped, cols x struct wrx_cell)   rows of the screen
 *
 * Rows go as cells, exactly; they are few. The history is capped at what
 * the largest scrollback keeps after a reflow.
 */
#include "sync.h"

#include "../term/scrollback.h"

#include <stdlib.h>
#include <string.h>

#define SYNC_MAX_HISTORY (10u * 1000000u)

enum { SYNC_VISIBLE = 1, SYNC_ALT = 2, SYNC_EXITED = 4, SYNC_HELD = 8 };

static void put(struct buf *out, const void *v, size_t n)
{
	buf_add(out, v, n);
}
#define PUT(out, type, v)                                                                          \
	do {                                                                                       \
		type put_v_ = (type)(v);                                                           \
		put(out, &put_v_, sizeof put_v_);                                                  \
	} while (0)

/* A line as bytes, preceded by its length. */
static void put_line(struct buf *out, const void *data, size_t len)
{
	PUT(out, uint32_t, len);
	put(out, data, len);
}

/* The cursor, modes, title and events: every update begins so. */
static void put_state(struct buf *out, const int *state, int rows, int cols, int flags, int events,
		      const char *title)
{
	PUT(out, uint16_t, rows);
	PUT(out, uint16_t, cols);
	PUT(out, uint16_t, state[0]);
	PUT(out, uint16_t, state[1]);
	PUT(out, uint8_t,
	    (state[2] ? SYNC_VISIBLE : 0) | (state[7] ? SYNC_ALT : 0) |
		    (state[4] ? SYNC_EXITED : 0) | flags);
	PUT(out, uint8_t, state[3]);
	PUT(out, uint8_t, state[6]);
	PUT(out, uint8_t, events);
	PUT(out, int32_t, state[5]);
	put_line(out, title, strlen(title));
}

bool sync_write(struct pane *p, struct sync_since *since, int events, bool held, struct buf *out)
{
	int rows = pane_rows(p), cols = pane_cols(p);
	const struct sb *sb = pane_scrollback(p);
	uint64_t pushed = sb_pushed(sb), gen = sb_generation(sb);
	size_t count = sb_count(sb);
	int crow, ccol, shape, status = 0;
	bool visible;
	pane_cursor(p, &crow, &ccol, &visible, &shape);
	bool exited = pane_exited(p, &status);
	const char *title = pane_title(p);
	int state[SYNC_STATE] = {
		crow, ccol, visible, shape, exited, status, pane_mouse_mode(p), pane_alt_screen(p)};
	uint32_t th = str_hash(WRX_HASH_INIT, title);
	bool same = !since->force && events == 0 && !memcmp(state, since->state, sizeof state) &&
		    th == since->title;
	held = held && since->sent;
	if (held) {
		if (same)
			return false;
		int shown[SYNC_STATE];
		memcpy(shown, state, sizeof shown);
		shown[0] = WRX_MIN(shown[0], since->rows - 1); /* within the size sent */
		shown[1] = WRX_MIN(shown[1], since->cols - 1);
		put_state(out, shown, since->rows, since->cols, SYNC_HELD, events, title);
		memcpy(since->state, state, sizeof state);
		since->title = th;
		return true;
	}
	bool reset = !since->sent || gen != since->gen || pushed - since->pushed > count;
	size_t lines = reset ? count : (size_t)(pushed - since->pushed);
	bool resized = !since->sent || rows != since->rows || cols != since->cols;
	int nrows = 0;
	for (int r = 0; r < rows; r++)
		nrows += resized || pane_row_changed(p, r, since->serial);
	if (since->sent && !reset && lines == 0 && nrows == 0 && same)
		return false;
	put_state(out, state, rows, cols, 0, events, title);

	PUT(out, uint8_t, reset);
	PUT(out, uint32_t, sb_capacity(sb));
	PUT(out, uint32_t, count);
	PUT(out, uint32_t, lines);
	for (size_t i = lines; i-- > 0;) {
		size_t len;
		const void *data = sb_line_data(sb, i, &len);
		put_line(out, data, len);
	}

	PUT(out, uint16_t, nrows);
	struct wrx_cell *cells = xcalloc((size_t)cols, sizeof *cells);
	for (int r = 0; r < rows; r++) {
		if (!resized && !pane_row_changed(p, r, since->serial))
			continue;
		pane_line(p, r, cells, cols);
		PUT(out, uint16_t, r);
		PUT(out, uint8_t, pane_line_wrapped(p, r));
		put(out, cells, (size_t)cols * sizeof *cells);
	}
	free(cells);

	since->sent = true;
	since->force = false;
	since->serial = pane_sync_take(p);
	since->pushed = pushed;
	since->gen = gen;
	since->rows = rows;
	since->cols = cols;
	memcpy(since->state, state, sizeof state);
	since->title = th;
	return true;
}

struct reader {
	const char *p, *end;
	bool bad;
};

static void get(struct reader *rd, void *v, size_t n)
{
	if (rd->bad || (size_t)(rd->end - rd->p) < n) {
		rd->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, rd->p, n);
	rd->p += n;
}
#define GET(rd, type)                                                                              \
	({                                                                                         \
		type get_v_;                                                                       \
		get(rd, &get_v_, sizeof get_v_);                                                   \
		get_v_;                                                                            \
	})

/* The next length-prefixed bytes, or NULL (rd bad). */
static const char *get_line(struct reader *rd, size_t *len)
{
	*len = GET(rd, uint32_t);
	if (rd->bad || (size_t)(rd->end - rd->p) < *len) {
		rd->bad = true;
		return NULL;
	}
	const char *at = rd->p;
	rd->p += *len;
	return at;
}

int sync_apply(struct pane *m, const char *data, size_t len)
{
	struct reader rd = {data, data + len, false};
	struct sb *sb = pane_mirror_scrollback(m);
	if (sb == NULL)
		return -1;
	int rows = GET(&rd, uint16_t), cols = GET(&rd, uint16_t);
	struct pane_state st = {0};
	st.row = GET(&rd, uint16_t);
	st.col = GET(&rd, uint16_t);
	int flags = GET(&rd, uint8_t);
	st.cursor_visible = flags & SYNC_VISIBLE;
	st.alt_screen = flags & SYNC_ALT;
	st.exited = flags & SYNC_EXITED;
	st.cursor_shape = GET(&rd, uint8_t);
	st.mouse_mode = GET(&rd, uint8_t);
	st.events = GET(&rd, uint8_t);
	st.exit_status = GET(&rd, int32_t);
	size_t n;
	const char *title = get_line(&rd, &n);
	if (rd.bad || rows < 1 || cols < 1 || rows > PANE_MAX_ROWS || cols > PANE_MAX_COLS)
		return -1;
	char *t = xstrndup(title, n);
	st.title = t;
	if (flags & SYNC_HELD) {
		/* Rows and history owed: the mirror keeps its own until they come. */
		st.held = true;
		if (rd.p != rd.end)
			rd.bad = true;
		else
			pane_mirror_state(m, &st);
		free(t);
		return rd.bad ? -1 : 0;
	}

	int reset = GET(&rd, uint8_t);
	size_t capacity = GET(&rd, uint32_t), count = GET(&rd, uint32_t);
	size_t lines = GET(&rd, uint32_t);
	if (capacity > SYNC_MAX_HISTORY)
		rd.bad = true;
	if (reset)
		sb_trim_to(sb, 0);
	if (!rd.bad && sb_capacity(sb) != capacity)
		sb_set_limit(sb, capacity);
	for (size_t i = 0; i < lines && !rd.bad; i++) {
		const char *line = get_line(&rd, &n);
		if (line && sb_push_data(sb, line, n) < 0)
			rd.bad = true;
	}
	sb_trim_to(sb, count);

	if (rows != pane_rows(m) || cols != pane_cols(m))
		pane_mirror_size(m, rows, cols);
	int nrows = GET(&rd, uint16_t);
	struct wrx_cell *cells = xcalloc((size_t)cols, sizeof *cells);
	for (int i = 0; i < nrows && !rd.bad; i++) {
		int r = GET(&rd, uint16_t);
		bool wrapped = GET(&rd, uint8_t);
		get(&rd, cells, (size_t)cols * sizeof *cells);
		for (int c = 0; c < cols && !rd.bad; c++) {
			struct wrx_cell *x = &cells[c];
			if (x->width > 2 || (x->width == 0 && c == 0))
				rd.bad = true;
			for (int k = 0; k < WRX_CELL_CHARS; k++)
				if (x->ch[k] > 0x10ffff ||
				    (x->ch[k] >= 0xd800 && x->ch[k] < 0xe000))
					x->ch[k] = 0xfffd;
		}
		if (r >= rows)
			rd.bad = true;
		if (!rd.bad)
			pane_mirror_row(m, r, cells, cols, wrapped);
	}
	free(cells);
	if (!rd.bad && rd.p != rd.end)
		rd.bad = true;
	if (!rd.bad)
		pane_mirror_state(m, &st);
	free(t);
	return rd.bad ? -1 : 0;
}
