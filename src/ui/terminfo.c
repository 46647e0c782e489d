/*
 * terminfo.c - the few terminfo strings workrex reads directly.
 *
 * <term.h> defines a macro for every capability name (bell, lines, ...), so
 * it is included here and nowhere else.
 */
#include "terminfo.h"

#include <curses.h>
#include <term.h>

const char *terminfo_cursor_style(int decscusr)
{
	char *ss = tigetstr("Ss");
	if (ss == NULL || ss == (char *)-1)
		return NULL;
	return tiparm(ss, decscusr);
}

int terminfo_key_code(const char *cap)
{
	char *seq = tigetstr(cap);
	if (seq == NULL || seq == (char *)-1)
		return -1;
	return key_defined(seq);
}
