/*
 * screen.h - a pane's cells: libvterm's state layer drawn into our own rows.
 *
 * libvterm parses and keeps the terminal's state (cursor, modes, pen, scroll
 * region); this layer keeps what is on the screen. Each row is its own array
 * of wrx_cell, so scrolling moves row pointers instead of the whole screen
 * (libvterm 0.1.4's own screen moves every cell for every line scrolled), and
 * a line leaving the top goes to the scrollback as it is, without conversion.
 *
 * Wide characters stay whole: writing over either half of one blanks the
 * other half, as xterm and tmux do.
 */
#ifndef WRX_SCREEN_H
#define WRX_SCREEN_H

#include "cell.h"

#include <stdbool.h>
#include <vterm.h>

struct screen;

struct sb;

struct screen_hooks {
	void (*damage)(void *user, int start_row, int end_row);
	/* Passed on from libvterm's state; settermprop's answer is libvterm's. */
	int (*movecursor)(VTermPos pos, VTermPos oldpos, int visible, void *user);
	int (*settermprop)(VTermProp prop, VTermValue *val, void *user);
	int (*bell)(void *user);
};

/*
 * A screen of vt's size on vt's state, which it resets. Lines scrolled off
 * the top of the main screen go to sb (borrowed; NULL: dropped), and come
 * back from it when the screen grows; with sb, a change of width rewraps
 * the main screen and sb together.
 */
struct screen *screen_new(VTerm *vt, struct sb *sb, const struct screen_hooks *hooks, void *user);
void screen_free(struct screen *s);

/*
 * After vt shrank: libvterm 0.1.4 keeps a scroll region and margins beyond
 * the smaller screen, and writes past its arrays on the next scroll. Resets
 * both (as xterm and tmux do on a resize) and keeps the cursor.
 */
void screen_fit(VTerm *vt);

/*
 * libvterm 0.1.4 also restores a cursor saved on a bigger screen outside the
 * smaller one (DECRC, leaving the alternate screen), and reads past its
 * arrays at the next character. Returns the length of data up to and with
 * the first such restore (len if none); the caller feeds that much and then
 * calls screen_keep_cursor, which brings the cursor back inside.
 */
size_t screen_restore_span(const char *data, size_t len);
/* Before each feed of libvterm: damage is marked afresh (see glyph_row). */
void screen_feed(struct screen *s);
/*
 * Put a run of printable ASCII t[0..n) (the filter's runs, vtfilter.h) at
 * the cursor as libvterm would, glyph by glyph, but straight into the
 * cells. Returns how many it put: as many as fit short of the margin, and
 * never the last unless all (the caller knows another run of text follows
 * with only an SGR between, so that libvterm still gets the last glyph
 * before anything that could join it); the caller gives libvterm the rest.
 * libvterm's cursor is moved past them by screen_sync_cursor, which the
 * caller calls before it writes anything else to libvterm.
 */
size_t screen_text(struct screen *s, const char *t, size_t n, bool all);
void screen_sync_cursor(struct screen *s);
/*
 * The SGR with parameters p[0..n) (digits, ';' and ':'; vtfilter.h) taken
 * into the pen as libvterm would hand it over, if libvterm would do nothing
 * else with it: true if taken, false to give it to libvterm.
 */
bool screen_sgr(struct screen *s, const char *p, size_t n);
void screen_keep_cursor(VTerm *vt);

/* A libvterm colour as a WRX_COLOUR_* word. */
uint32_t screen_colour(const VTermColor *c, bool fg);

/* Row 0 .. rows-1 of what is shown (main or alternate screen); NULL outside. */
const struct wrx_cell *screen_row(const struct screen *s, int row);
/* That row's text goes on in the next (it wrapped at the margin). */
bool screen_row_wrapped(const struct screen *s, int row);

#endif
