/*
 * scrollback.h - the lines that scrolled off the top of a pane.
 *
 * The screen (screen.c) keeps no history, so every line it pushes off lands
 * here, in a ring of at most `limit` lines. Lines are stored compactly (UTF-8
 * text plus attribute runs, trailing blanks trimmed) because sixteen panes of
 * ten thousand lines each must cost megabytes, not hundreds of them.
 */
#ifndef WRX_SCROLLBACK_H
#define WRX_SCROLLBACK_H

#include "cell.h"

#include <stdbool.h>
#include <stddef.h>

struct sb;

struct sb *sb_new(size_t limit);
void sb_free(struct sb *sb);
void sb_set_limit(struct sb *sb, size_t limit);
size_t sb_count(const struct sb *sb);

/*
 * Append the newest line (ncols cells); drops the oldest past the limit.
 * wrapped: its text goes on in the next line (kept whole, blanks and all).
 */
void sb_push(struct sb *sb, const struct wrx_cell *cells, int ncols, bool wrapped);

/*
 * Copy line idx (0 = newest) into cells[0..ncols), padding with blanks.
 * Returns the number of cells the line really holds (before padding), or -1
 * if idx is out of range.
 */
int sb_get(const struct sb *sb, size_t idx, struct wrx_cell *cells, int ncols);

/* The number of cells line idx holds (0 when out of range). */
int sb_cells(const struct sb *sb, size_t idx);
/* Line idx goes on in the next newer one. */
bool sb_wrapped(const struct sb *sb, size_t idx);
/* The newest line no longer runs on into the screen (what followed it was erased). */
void sb_unwrap_last(struct sb *sb);
/* Every line gone (CSI 3 J). */
void sb_clear(struct sb *sb);

/* Remove the newest line into cells (and its wrapped mark); returns 0, or -1 if empty. */
int sb_pop(struct sb *sb, struct wrx_cell *cells, int ncols, bool *wrapped);

/* While held, nothing is dropped for the limit; letting go applies it. */
void sb_hold(struct sb *sb, bool on);

/*
 * Every line again at cols: lines that wrapped into each other are joined,
 * then cut at cols, so that nothing is lost narrowing and widening. *line
 * (0 = newest) and *col name a cell that moves with its character (a cell
 * past a line's text stays on its last line). Lines that fit as they are
 * cost nothing. What the new width adds past the limit is kept (up to
 * nine times the limit), so that widening back loses nothing; the screen
 * holds the scrollback around it while it takes its rows back.
 */
void sb_reflow(struct sb *sb, int cols, size_t *line, int *col);

/*
 * A line as it is stored, for another process's scrollback (the keepers'
 * wire, keeper/proto.h): sb_line_data is line idx (0 = newest) as bytes,
 * valid until sb changes; sb_push_data appends such bytes (0, or -1 when
 * they are not a line).
 */
const void *sb_line_data(const struct sb *sb, size_t idx, size_t *len);
int sb_push_data(struct sb *sb, const void *data, size_t len);
/*
 * What a copy needs to follow this one: lines pushed ever; a number that
 * changes when lines already pushed change or come back (a reflow, a pop);
 * how many lines it keeps before dropping the oldest; and dropping the
 * oldest down to count.
 */
uint64_t sb_pushed(const struct sb *sb);
uint64_t sb_generation(const struct sb *sb);
size_t sb_capacity(const struct sb *sb);
void sb_trim_to(struct sb *sb, size_t count);
/* Bytes held, for tests and benchmarks. */
size_t sb_bytes(const struct sb *sb);

#endif
