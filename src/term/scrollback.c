/*
 * scrollback.c - a ring of compactly encoded lines.
 *
 * A line is one allocation: a header, its attribute runs, then its text.
 * The text holds one entry per cell: a wide character is preceded by the
 * byte 0x02 (its right half is implied), a combining mark by 0x01, a blank
 * cell is a space. Control bytes never reach a cell, so the markers are
 * unambiguous. Runs give the attributes and colours from a cell onwards;
 * a typical shell line has one or two.
 */
#include "scrollback.h"

#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

struct sb_run {
	uint16_t start; /* first cell */
	uint16_t attrs;
	uint32_t fg, bg;
};

struct sb_line {
	uint16_t ncells;
	uint16_t nruns;
	uint32_t textlen;
	/* struct sb_run runs[nruns]; char text[textlen]; */
};

struct sb {
	struct sb_line **ring; /* owned; capacity `limit` */
	size_t limit;
	size_t head; /* index of the oldest line */
	size_t count;
	size_t bytes;
};

#define MARK_COMBINING 0x01
#define MARK_WIDE 0x02

struct sb *sb_new(size_t limit)
{
	struct sb *sb = xcalloc(1, sizeof *sb);
	sb->limit = limit;
	sb->ring = xcalloc(limit ? limit : 1, sizeof *sb->ring);
	return sb;
}

static size_t line_size(const struct sb_line *l)
{
	return sizeof *l + l->nruns * sizeof(struct sb_run) + l->textlen;
}

void sb_free(struct sb *sb)
{
	if (sb == NULL)
		return;
	for (size_t i = 0; i < sb->count; i++)
		free(sb->ring[(sb->head + i) % sb->limit]);
	free(sb->ring);
	free(sb);
}

size_t sb_count(const struct sb *sb)
{
	return sb->count;
}

size_t sb_bytes(const struct sb *sb)
{
	return sb->bytes + sb->limit * sizeof *sb->ring;
}

static void drop_oldest(struct sb *sb)
{
	struct sb_line *l = sb->ring[sb->head];
	sb->bytes -= line_size(l);
	free(l);
	sb->ring[sb->head] = NULL;
	sb->head = (sb->head + 1) % sb->limit;
	sb->count--;
}

void sb_set_limit(struct sb *sb, size_t limit)
{
	if (limit == 0)
		limit = 1;
	while (sb->count > limit)
		drop_oldest(sb);
	struct sb_line **ring = xcalloc(limit, sizeof *ring);
	for (size_t i = 0; i < sb->count; i++)
		ring[i] = sb->ring[(sb->head + i) % sb->limit];
	free(sb->ring);
	sb->ring = ring;
	sb->limit = limit;
	sb->head = 0;
}

static int cell_blank(const struct wrx_cell *c)
{
	return (c->ch[0] == 0 || c->ch[0] == ' ') && c->attrs == 0 && c->bg == WRX_COLOUR_DEFAULT;
}

void sb_push(struct sb *sb, const struct wrx_cell *cells, int ncols)
{
	if (sb->limit == 0)
		return;
	int n = ncols;
	while (n > 0 && cell_blank(&cells[n - 1]))
		n--;
	if (n > UINT16_MAX)
		n = UINT16_MAX;

	/*
	 * Encode into scratch space that only grows (one thread, and this is
	 * the flood path), then copy into one exact allocation.
	 */
	static char *text;
	static struct sb_run *runs;
	static size_t scratch_cells;
	if ((size_t)n + 1 > scratch_cells) {
		scratch_cells = (size_t)n + 1;
		text = xrealloc(text, scratch_cells * (WRX_CELL_CHARS * 5 + 1));
		runs = xrealloc(runs, scratch_cells * sizeof *runs);
	}
	size_t tl = 0, nr = 0;
	for (int i = 0; i < n; i++) {
		const struct wrx_cell *c = &cells[i];
		if (c->width == 0 && i > 0)
			continue; /* right half of a wide character */
		if (nr == 0 || runs[nr - 1].attrs != c->attrs || runs[nr - 1].fg != c->fg ||
		    runs[nr - 1].bg != c->bg) {
			runs[nr].start = (uint16_t)i;
			runs[nr].attrs = c->attrs;
			runs[nr].fg = c->fg;
			runs[nr].bg = c->bg;
			nr++;
		}
		if (c->width == 2)
			text[tl++] = MARK_WIDE;
		if (c->ch[0] == 0 || c->ch[0] < 0x20) {
			text[tl++] = ' ';
			continue;
		}
		tl += (size_t)utf8_encode(c->ch[0], text + tl);
		for (int k = 1; k < WRX_CELL_CHARS && c->ch[k]; k++) {
			text[tl++] = MARK_COMBINING;
			tl += (size_t)utf8_encode(c->ch[k], text + tl);
		}
	}
	struct sb_line *l = xmalloc(sizeof *l + nr * sizeof *runs + tl);
	l->ncells = (uint16_t)n;
	l->nruns = (uint16_t)nr;
	l->textlen = (uint32_t)tl;
	memcpy(l + 1, runs, nr * sizeof *runs);
	memcpy((char *)(l + 1) + nr * sizeof *runs, text, tl);
	if (sb->count == sb->limit)
		drop_oldest(sb);
	sb->ring[(sb->head + sb->count) % sb->limit] = l;
	sb->count++;
	sb->bytes += line_size(l);
}

/* Decode one UTF-8 sequence; invalid bytes decode as U+FFFD. */
static uint32_t utf8_next(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp;
	uint32_t c = *p++;
	int extra = 0;
	if (c >= 0xf0) {
		c &= 0x07;
		extra = 3;
	} else if (c >= 0xe0) {
		c &= 0x0f;
		extra = 2;
	} else if (c >= 0xc0) {
		c &= 0x1f;
		extra = 1;
	} else if (c >= 0x80) {
		c = 0xfffd;
	}
	while (extra-- > 0 && p < end && (*p & 0xc0) == 0x80)
		c = (c << 6) | (*p++ & 0x3f);
	*pp = p;
	return c;
}

static void blank(struct wrx_cell *c)
{
	memset(c, 0, sizeof *c);
	c->width = 1;
}

static int decode(const struct sb_line *l, struct wrx_cell *cells, int ncols)
{
	const struct sb_run *runs = (const struct sb_run *)(l + 1);
	const unsigned char *p = (const unsigned char *)(runs + l->nruns);
	const unsigned char *end = p + l->textlen;
	for (int i = 0; i < ncols; i++)
		blank(&cells[i]);
	int col = 0, r = -1;
	while (p < end && col < l->ncells) {
		while (r + 1 < l->nruns && runs[r + 1].start <= col)
			r++;
		int wide = 0;
		if (*p == MARK_WIDE) {
			wide = 1;
			p++;
			if (p >= end)
				break;
		}
		uint32_t base = utf8_next(&p, end);
		int k = 1;
		uint32_t comb[WRX_CELL_CHARS] = {0};
		while (p < end && *p == MARK_COMBINING) {
			p++;
			uint32_t m = p < end ? utf8_next(&p, end) : 0;
			if (k < WRX_CELL_CHARS)
				comb[k++] = m;
		}
		if (col >= ncols) {
			col += wide ? 2 : 1;
			continue;
		}
		struct wrx_cell *c = &cells[col];
		c->ch[0] = base == ' ' ? 0 : base;
		for (int j = 1; j < k; j++)
			c->ch[j] = comb[j];
		if (r >= 0) {
			c->attrs = runs[r].attrs;
			c->fg = runs[r].fg;
			c->bg = runs[r].bg;
		}
		if (wide && col + 1 < ncols) {
			c->width = 2;
			cells[col + 1].width = 0;
			cells[col + 1].attrs = c->attrs;
			cells[col + 1].fg = c->fg;
			cells[col + 1].bg = c->bg;
		} else if (wide) {
			c->ch[0] = 0; /* half a wide char does not fit: blank */
		}
		col += wide ? 2 : 1;
	}
	return l->ncells;
}

int sb_get(const struct sb *sb, size_t idx, struct wrx_cell *cells, int ncols)
{
	if (idx >= sb->count)
		return -1;
	const struct sb_line *l = sb->ring[(sb->head + sb->count - 1 - idx) % sb->limit];
	return decode(l, cells, ncols);
}

int sb_pop(struct sb *sb, struct wrx_cell *cells, int ncols)
{
	if (sb->count == 0)
		return -1;
	size_t slot = (sb->head + sb->count - 1) % sb->limit;
	struct sb_line *l = sb->ring[slot];
	decode(l, cells, ncols);
	sb->bytes -= line_size(l);
	free(l);
	sb->ring[slot] = NULL;
	sb->count--;
	return 0;
}
