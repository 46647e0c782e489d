/*
 * sgr.h - SGR sequences (ESC [ ... m) in a line of text, as a filter such
 * as delta or diff-highlight colours a diff: found, and applied to a
 * cell's style. Pure; every other byte is the caller's text.
 */
#ifndef WRX_SGR_H
#define WRX_SGR_H

#include "cell.h"

#include <stddef.h>

/*
 * The length of the SGR sequence s starts with (n bytes), or 0: none. An
 * erase to the end of the line (ESC [ K, which delta ends a coloured line
 * with, to fill it with its background) counts as one: its last byte is
 * 'K', not 'm'.
 */
size_t sgr_at(const char *s, size_t n);
/* One sequence, as sgr_at found it, applied to c's fg, bg and attrs (an erase: nothing). */
void sgr_apply(struct wrx_cell *c, const char *seq, size_t len);
/* s without its SGR sequences, into out (n bytes at most): its length. */
size_t sgr_strip(const char *s, size_t n, char *out);

#endif
