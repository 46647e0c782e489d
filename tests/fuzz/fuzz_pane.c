/*
 * fuzz_pane.c - libFuzzer target over the pane input path: program output
 * (split at fuzzer-chosen points, so OSC/DCS hold-back is exercised),
 * resizes, and input keys, then reading back every cell and history line
 * as the renderer and scroll mode do. The screen's own promises are checked
 * too: no half of a wide character without the other, the cursor inside;
 * and a second pane fed the same without the plain text path
 * (pane_plain_text) ends the same, cell for cell.
 */
#include "term/pane.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int sink_write(void *ctx, const char *b, size_t n)
{
	(void)ctx;
	(void)b;
	(void)n;
	return 0;
}

static void sink_resize(void *ctx, int r, int c)
{
	(void)ctx;
	(void)r;
	(void)c;
}

static void sink_close(void *ctx)
{
	(void)ctx;
}

/* p and q show the same: every cell, history line, wrap and the cursor. */
static void same(const struct pane *p, const struct pane *q)
{
	if (pane_history(p) != pane_history(q))
		abort();
	for (int l = -(int)pane_history(p); l < pane_rows(p); l++) {
		struct buf a = {0}, b = {0};
		pane_line_append_sgr(p, l, 0, &a);
		pane_line_append_sgr(q, l, 0, &b);
		if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len)) ||
		    pane_line_wrapped(p, l) != pane_line_wrapped(q, l))
			abort();
		buf_free(&a);
		buf_free(&b);
	}
	for (int r = 0; r < pane_rows(p); r++)
		for (int c = 0; c < pane_cols(p); c++) {
			struct wrx_cell x, y;
			pane_cell(p, r, c, &x);
			pane_cell(q, r, c, &y);
			if (memcmp(&x, &y, sizeof x))
				abort();
		}
	int r1, c1, r2, c2, s;
	bool v;
	pane_cursor(p, &r1, &c1, &v, &s);
	pane_cursor(q, &r2, &c2, &v, &s);
	if (r1 != r2 || c1 != c2)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int rows = 1 + data[0] % 40, cols = 1 + data[1] % 120;
	struct pane *p = pane_new(rows, cols, 64, NULL, NULL);
	struct pane *q = pane_new(rows, cols, 64, NULL, NULL);
	pane_plain_text(q, false);
	struct pane_io io = {sink_write, sink_resize, sink_close, NULL};
	pane_set_io(p, &io);
	size_t i = 2;
	while (i < size) {
		uint8_t op = data[i++];
		size_t n = op & 0x3f;
		if (n > size - i)
			n = size - i;
		switch (op >> 6) {
		case 0:
		case 1: /* output chunk */
			pane_feed(p, (const char *)data + i, n);
			pane_feed(q, (const char *)data + i, n);
			i += n;
			break;
		case 2: /* resize */
			if (i + 1 < size) {
				pane_resize(p, data[i] % 60, data[i + 1] % 200);
				pane_resize(q, data[i] % 60, data[i + 1] % 200);
				i += 2;
			}
			break;
		case 3: /* key, paste, mouse */
			pane_key(p, op & 0x0f, (op >> 4) & 3);
			pane_paste(p, (const char *)data + i, n);
			pane_mouse(p, data[i - 1] % 50, op % 90, op % 6, op & 1, 0);
			i += n;
			break;
		}
	}
	int width = pane_cols(p);
	struct wrx_cell *cells = calloc((size_t)width, sizeof *cells);
	for (int l = -(int)pane_history(p); l < pane_rows(p); l++) {
		pane_line(p, l, cells, width);
		free(pane_line_text(p, l));
		for (int x = 0; l >= 0 && x < width; x++) {
			if (cells[x].width == 0 && (x == 0 || cells[x - 1].width != 2))
				abort(); /* a right half without its left */
			if (cells[x].width == 2 && (x + 1 == width || cells[x + 1].width != 0))
				abort(); /* a left half without its right */
		}
	}
	free(cells);
	int r, c, shape;
	bool vis;
	pane_cursor(p, &r, &c, &vis, &shape);
	if (r < 0 || r >= pane_rows(p) || c < 0 || c >= pane_cols(p))
		abort();
	same(p, q);
	pane_free(p);
	pane_free(q);
	return 0;
}
