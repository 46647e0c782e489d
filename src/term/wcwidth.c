/*
 * wcwidth.c - the columns a character takes, from width_table.h; and this
 * process's wcwidth and iswprint, which ncurses asks (see width.h). It
 * needs nothing else, so a test's terminal can load it too.
 */
#include "width.h"
#include "width_table.h"

#include <stddef.h>
#include <wchar.h>
#include <wctype.h>

int width_of(uint32_t cp)
{
	if (cp < 0x7f)
		return cp >= 0x20 ? 1 : -1;
	size_t lo = 0, hi = sizeof width_runs / sizeof *width_runs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cp < width_runs[mid].first)
			hi = mid;
		else if (cp > width_runs[mid].last)
			lo = mid + 1;
		else
			return width_runs[mid].width;
	}
	return 1;
}

/* The C library's own, in this process: ncurses asks them how wide a cell is. */
int wcwidth(wchar_t c)
{
	return c == 0 ? 0 : width_of((uint32_t)c);
}

int iswprint(wint_t c)
{
	return c != 0 && width_of((uint32_t)c) >= 0;
}
