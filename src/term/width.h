/*
 * width.h - one width for every character, in the panes and on the screen.
 *
 * The width is our own table (width_table.h, made by scripts/widths.py from
 * Debian's unicode-data), by the C library's rules: on every character the
 * C library knows, the two agree, and it knows Unicode 15 where Debian 12's
 * C library stops at 14 (U+1FAE8 🫨 would be '?'). This process's wcwidth
 * and iswprint are the table's too, so ncurses draws what the pane counted.
 * libvterm 0.1.4 has its own table, older than Unicode 9: it counts 1494
 * characters as one column that the table counts as two (🧑 🥲 🟢 🧠 and most
 * emoji), 1167 zero-width marks as one column, and a few the other way. A
 * pane would then put the rest of the line one column off, and the drawing
 * show '?'.
 *
 * So libvterm is handed a stand-in wherever the two disagree: a character
 * it counts as wide (from the unassigned end of plane 3), narrow (plane 14,
 * unassigned) or zero-width (the variation selectors U+E0100-E01EF), and
 * screen.c puts the real one back in the cell. The stand-ins are taken as
 * characters are first seen, one each, for the life of the process; where
 * libvterm's width is not known yet it is found by printing the character
 * on a scratch libvterm (some 50 ns, once). A program that prints a
 * stand-in's own code point gets a stand-in for it too, so none is ever
 * read as another. When the zero-width stand-ins run out (240), a mark is
 * passed as it is.
 */
#ifndef WRX_WIDTH_H
#define WRX_WIDTH_H

#include <stdint.h>

/* No stand-in is below this: a cheaper test for the common case than width_original. */
#define WIDTH_STAND_IN_MIN 0x32400

/* Columns cp takes: 0, 1 or 2 (-1: not printable, as the C library says). */
int width_of(uint32_t cp);
/* Columns UTF-8 text takes (whatever the locale); a byte that is no UTF-8 is one. */
int width_of_utf8(const char *s);
/* What libvterm is given for cp: cp itself, or its stand-in. */
uint32_t width_for_vterm(uint32_t cp);
/* What a character in libvterm's cells stands for (itself if no stand-in). */
uint32_t width_original(uint32_t cp);

#endif
