/*
 * colour.c - xterm's 256-colour palette and nearest-colour mapping.
 *
 * RGB colours map to whichever of the 6x6x6 cube or the 24-step grey ramp
 * is nearer (squared distance); on 16- and 8-colour terminals indices fold
 * down through the same palette.
 */
#include "colour.h"

#include "cell.h"

static const uint8_t cube[6] = {0, 95, 135, 175, 215, 255};

static const uint32_t base16[16] = {
	0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
	0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
};

uint32_t colour_256_to_rgb(int idx)
{
	if (idx < 0)
		return 0;
	if (idx < 16)
		return base16[idx];
	if (idx < 232) {
		idx -= 16;
		return ((uint32_t)cube[idx / 36] << 16) | ((uint32_t)cube[(idx / 6) % 6] << 8) |
		       cube[idx % 6];
	}
	if (idx < 256) {
		uint32_t g = 8 + 10 * (uint32_t)(idx - 232);
		return (g << 16) | (g << 8) | g;
	}
	return 0;
}

static int cube_index(int v)
{
	if (v < 48)
		return 0;
	if (v < 115)
		return 1;
	return (v - 35) / 40;
}

static long dist(uint32_t a, uint32_t b)
{
	long dr = (long)((a >> 16) & 0xff) - (long)((b >> 16) & 0xff);
	long dg = (long)((a >> 8) & 0xff) - (long)((b >> 8) & 0xff);
	long db = (long)(a & 0xff) - (long)(b & 0xff);
	return dr * dr + dg * dg + db * db;
}

int colour_rgb_to_256(uint32_t rgb)
{
	int r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
	int ci = 16 + 36 * cube_index(r) + 6 * cube_index(g) + cube_index(b);
	int avg = (r + g + b) / 3;
	int gi = avg > 238 ? 23 : (avg < 8 ? 0 : (avg - 3) / 10);
	if (gi > 23)
		gi = 23;
	int gidx = 232 + gi;
	return dist(rgb, colour_256_to_rgb(gidx)) < dist(rgb, colour_256_to_rgb(ci)) ? gidx : ci;
}

static int nearest_of(uint32_t rgb, int n)
{
	int best = 0;
	long bd = -1;
	for (int i = 0; i < n; i++) {
		long d = dist(rgb, base16[i]);
		if (bd < 0 || d < bd) {
			bd = d;
			best = i;
		}
	}
	return best;
}

int colour_for_terminal(uint32_t c, int ncolours)
{
	uint32_t kind = WRX_COLOUR_KIND(c);
	if (kind == WRX_COLOUR_DEFAULT)
		return -1;
	if (ncolours >= (1 << 24)) {
		/* Direct colour: 0-7 keep their ANSI meaning, the rest is RGB. */
		if (kind == WRX_COLOUR_INDEXED && (c & 0xff) < 8)
			return (int)(c & 0xff);
		uint32_t rgb =
			kind == WRX_COLOUR_RGB ? (c & 0xffffff) : colour_256_to_rgb(c & 0xff);
		/* Values 0-7 would read as palette entries; nudge to an RGB neighbour. */
		return rgb < 8 ? 8 : (int)rgb;
	}
	int idx = kind == WRX_COLOUR_INDEXED ? (int)(c & 0xff) : colour_rgb_to_256(c & 0xffffff);
	if (ncolours >= 256)
		return idx;
	if (idx < ncolours)
		return idx;
	return nearest_of(colour_256_to_rgb(idx), ncolours >= 16 ? 16 : 8);
}

int colour_for_direct256(uint32_t c, bool shifted)
{
	uint32_t kind = WRX_COLOUR_KIND(c);
	if (kind == WRX_COLOUR_DEFAULT)
		return -1;
	if (kind == WRX_COLOUR_INDEXED)
		return (int)(c & 0xff);
	uint32_t rgb = c & 0xffffff;
	if (shifted)
		return (int)rgb + 256;
	/* Values below 256 name palette entries: one step of green is not seen. */
	return (int)(rgb < 256 ? rgb | 0x100 : rgb);
}
