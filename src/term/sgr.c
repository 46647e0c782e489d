/*
 * sgr.c - SGR sequences in a line of text (sgr.h).
 */
#include "sgr.h"

#include <stdint.h>
#include <string.h>

/* Parameters past this many are not read: no SGR needs them. */
#define SGR_PARAMS 32

size_t sgr_at(const char *s, size_t n)
{
	if (n < 3 || s[0] != '\033' || s[1] != '[')
		return 0;
	for (size_t i = 2; i < n; i++) {
		char ch = s[i];
		if (ch == 'm' || ch == 'K')
			return i + 1;
		if (!(ch >= '0' && ch <= '9') && ch != ';' && ch != ':')
			return 0;
	}
	return 0;
}

size_t sgr_strip(const char *s, size_t n, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t len = s[i] == '\033' ? sgr_at(s + i, n - i) : 0;
		if (len) {
			i += len;
			continue;
		}
		out[k++] = s[i++];
	}
	return k;
}

/* A 38/48 colour from p[*i] on (5;N or 2;R;G;B): its WRX_COLOUR_* word, *i past it. */
static uint32_t extended(const int *p, int n, int *i)
{
	if (*i + 1 < n && p[*i + 1] == 5 && *i + 2 < n) {
		int idx = p[*i + 2];
		*i += 2;
		return idx >= 0 && idx < 256 ? WRX_COLOUR_INDEXED | (uint32_t)idx
					     : WRX_COLOUR_DEFAULT;
	}
	if (*i + 1 < n && p[*i + 1] == 2 && *i + 4 < n) {
		uint32_t rgb = 0;
		for (int k = 2; k <= 4; k++)
			rgb = rgb << 8 | (uint32_t)(p[*i + k] & 0xff);
		*i += 4;
		return WRX_COLOUR_RGB | rgb;
	}
	*i = n; /* malformed: the rest is not read */
	return WRX_COLOUR_DEFAULT;
}

void sgr_apply(struct wrx_cell *c, const char *seq, size_t len)
{
	int p[SGR_PARAMS], n = 0, v = -1;
	if (len < 3 || seq[len - 1] != 'm')
		return;
	/* Colons (4:3, 38:5:N) are read as semicolons (38:2::R:G:B, with its colour space, not). */
	for (size_t i = 2; i < len && n < SGR_PARAMS; i++) { /* (the final m ends the last) */
		char ch = seq[i];
		if (ch >= '0' && ch <= '9') {
			v = (v < 0 ? 0 : v) * 10 + (ch - '0');
			if (v > 99999)
				v = 99999;
		} else {
			p[n++] = v < 0 ? 0 : v;
			v = -1;
		}
	}
	if (n == 0)
		p[n++] = 0;
	static const uint16_t set[] = {
		[1] = WRX_ATTR_BOLD,        [2] = WRX_ATTR_DIM,
		[3] = WRX_ATTR_ITALIC,      [4] = WRX_ATTR_UNDERLINE,
		[5] = WRX_ATTR_BLINK,       [7] = WRX_ATTR_REVERSE,
		[8] = WRX_ATTR_CONCEAL,     [9] = WRX_ATTR_STRIKE,
		[21] = WRX_ATTR_DUNDERLINE, [22] = WRX_ATTR_BOLD | WRX_ATTR_DIM,
		[23] = WRX_ATTR_ITALIC,     [24] = WRX_ATTR_UNDERLINES,
		[25] = WRX_ATTR_BLINK,      [27] = WRX_ATTR_REVERSE,
		[28] = WRX_ATTR_CONCEAL,    [29] = WRX_ATTR_STRIKE,
		[53] = WRX_ATTR_OVERLINE,   [55] = WRX_ATTR_OVERLINE};
	for (int i = 0; i < n; i++) {
		int a = p[i];
		if (a == 0) {
			c->fg = c->bg = WRX_COLOUR_DEFAULT;
			c->attrs = 0;
		} else if ((a >= 1 && a <= 9) || a == 21 || a == 53) {
			c->attrs |= set[a];
		} else if ((a >= 22 && a <= 29) || a == 55) {
			c->attrs &= (uint16_t)~set[a];
		} else if (a >= 30 && a <= 37) {
			c->fg = WRX_COLOUR_INDEXED | (uint32_t)(a - 30);
		} else if (a >= 90 && a <= 97) {
			c->fg = WRX_COLOUR_INDEXED | (uint32_t)(a - 90 + 8);
		} else if (a >= 40 && a <= 47) {
			c->bg = WRX_COLOUR_INDEXED | (uint32_t)(a - 40);
		} else if (a >= 100 && a <= 107) {
			c->bg = WRX_COLOUR_INDEXED | (uint32_t)(a - 100 + 8);
		} else if (a == 38) {
			c->fg = extended(p, n, &i);
		} else if (a == 48) {
			c->bg = extended(p, n, &i);
		} else if (a == 39) {
			c->fg = WRX_COLOUR_DEFAULT;
		} else if (a == 49) {
			c->bg = WRX_COLOUR_DEFAULT;
		}
	}
}
