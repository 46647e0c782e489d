/*
 * terminfo.h - terminfo look-ups kept apart from <term.h>'s macros.
 */
#ifndef WRX_TERMINFO_H
#define WRX_TERMINFO_H

/* The DECSCUSR-style sequence for a cursor style, or NULL if unsupported. */
const char *terminfo_cursor_style(int decscusr);
/* The curses key code bound to capability cap (e.g. "kUP5"), or -1. */
int terminfo_key_code(const char *cap);

#endif
