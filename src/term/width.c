/*
 * width.c - see width.h. Two sparse tables: for each character seen, what
 * libvterm must be given (pages of 256, made when first needed), and for
 * each stand-in handed out, the character it stands for.
 */
#include "width.h"

#include "../util/util.h"

#include <stdbool.h>
#include <string.h>
#include <vterm.h>
#include <wchar.h>

#define NCODES 0x110000

/* The stand-ins: code points libvterm counts as 2, 1 and 0 columns. */
static const struct {
	uint32_t first, last;
} ranges[3] = {
	[0] = {0xe0100, 0xe01ef},            /* variation selectors 17-256: zero-width */
	[1] = {0xe1000, 0xefffd},            /* unassigned, plane 14: narrow */
	[2] = {WIDTH_STAND_IN_MIN, 0x3fffd}, /* unassigned, plane 3: wide */
};

/* Per character: 0 not seen; 1 libvterm agrees; else 2 + the stand-in's offset. */
static uint32_t *pages[NCODES / 256];
static uint32_t *originals[3]; /* per range: the stand-in's character */
static uint32_t used[3];

/* Columns libvterm moves for cp after a base character. */
static int vterm_width(uint32_t cp)
{
	static VTerm *vt;
	static VTermState *st;
	if (vt == NULL) {
		vt = vterm_new(2, 8);
		vterm_set_utf8(vt, 1);
		st = vterm_obtain_state(vt);
		vterm_state_reset(st, 1);
	}
	char b[8] = "\ra";
	int n = 2 + utf8_encode(cp, b + 2);
	vterm_input_write(vt, b, (size_t)n);
	VTermPos pos;
	vterm_state_get_cursorpos(st, &pos);
	return pos.col - 1;
}

static bool stand_in(uint32_t cp, int *range)
{
	for (int r = 0; r < 3; r++) {
		if (cp >= ranges[r].first && cp <= ranges[r].last) {
			*range = r;
			return true;
		}
	}
	return false;
}

uint32_t width_for_vterm(uint32_t cp)
{
	if (cp < 0x300 || cp >= NCODES)
		return cp; /* ASCII and Latin: libvterm agrees */
	uint32_t **page = &pages[cp >> 8];
	if (*page == NULL)
		*page = xcalloc(256, sizeof **page);
	uint32_t *e = &(*page)[cp & 0xff];
	if (*e == 0) {
		int w = width_of(cp), r;
		*e = 1;
		if (w >= 0 || stand_in(cp, &r)) {
			int want = w < 0 ? 1 : w;
			if ((stand_in(cp, &r) || vterm_width(cp) != want) &&
			    used[want] <= ranges[want].last - ranges[want].first) {
				if (originals[want] == NULL)
					originals[want] =
						xcalloc(ranges[want].last - ranges[want].first + 1,
							sizeof *originals[want]);
				originals[want][used[want]] = cp;
				*e = 2 + (uint32_t)want * 0x100000 + used[want]++;
			}
		}
	}
	if (*e == 1)
		return cp;
	uint32_t want = (*e - 2) / 0x100000, k = (*e - 2) % 0x100000;
	return ranges[want].first + k;
}

uint32_t width_original(uint32_t cp)
{
	int r;
	if (cp < WIDTH_STAND_IN_MIN || !stand_in(cp, &r) || originals[r] == NULL ||
	    cp - ranges[r].first >= used[r])
		return cp;
	return originals[r][cp - ranges[r].first];
}

int width_of_utf8(const char *s)
{
	int n = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t cp = *p;
		int len = cp < 0x80         ? 1
			  : (cp >> 5) == 6  ? 2
			  : (cp >> 4) == 14 ? 3
			  : (cp >> 3) == 30 ? 4
					    : 0;
		bool ok = len > 0;
		for (int i = 1; ok && i < len; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (!ok) {
			n++;
			p++;
			continue;
		}
		if (len > 1) {
			cp &= 0x7f >> len;
			for (int i = 1; i < len; i++)
				cp = (cp << 6) | (p[i] & 0x3f);
		}
		n += cp < 0x20 ? 1 : WRX_MAX(width_of(cp), 0);
		p += len;
	}
	return n;
}
