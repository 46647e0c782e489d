/*
 * terminfo.h - terminfo look-ups kept apart from <term.h>'s macros.
 */
#ifndef WRX_TERMINFO_H
#define WRX_TERMINFO_H

#include <stdbool.h>

/* The DECSCUSR-style sequence for a cursor style, or NULL if unsupported. */
const char *terminfo_cursor_style(int decscusr);
/* The curses key code bound to capability cap (e.g. "kUP5"), or -1. */
int terminfo_key_code(const char *cap);

/*
 * Direct colour: asked for (COLORTERM=truecolor or 24bit, the entry's RGB
 * or Tc flag) by a terminal whose entry for term has no more than 256.
 */
bool terminfo_wants_direct(const char *term, int fd);
/*
 * An entry with term's capabilities and direct colours (palette 0-255 as
 * such, RGB beyond: ncurses' xterm+direct256), made once with tic under the
 * state directory. Its name (and the directory, for TERMINFO), or NULL.
 */
char *terminfo_direct_entry(const char *term, char **dir);
/*
 * What the loaded entry's colour numbers mean: up to 256 the palette
 * (TERMINFO_PALETTE); 0-7 ANSI and the rest RGB (xterm-direct); 0-255 the
 * palette and the rest RGB (xterm-direct256); 0-255 the palette and 256
 * plus RGB (the entry terminfo_direct_entry makes).
 */
enum { TERMINFO_PALETTE, TERMINFO_DIRECT, TERMINFO_DIRECT256, TERMINFO_DIRECT256_SHIFTED };
int terminfo_direct_kind(void);

/*
 * What the terminal draws that curses has no attribute for: strike-through
 * (smxx), underline styles (Smulx), overline (Smol) and underline colour
 * (Setulc); tmux (TERM or $TMUX) has the last three, whatever its entry says.
 * Each field is the sequence's start, or NULL when the terminal lacks it.
 */
struct terminfo_extras {
	const char *strike;          /* "\033[9m" */
	const char *underline_style; /* Smulx, with %p1 the style 1..5 */
	const char *overline;        /* "\033[53m" */
	bool underline_colour;       /* 58:5:n and 58:2::r:g:b */
};
void terminfo_extras(const char *term, struct terminfo_extras *x);

#endif
