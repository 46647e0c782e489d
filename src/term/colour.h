/*
 * colour.h - mapping pane colours onto what a terminal has (the dashboard's
 * outer one, or capture --screen's idea of it).
 * Pure functions; the curses pair cache lives in render.c.
 */
#ifndef WRX_COLOUR_H
#define WRX_COLOUR_H

#include <stdbool.h>
#include <stdint.h>

/* Nearest xterm 256-colour index (16..255) to an RGB value. */
int colour_rgb_to_256(uint32_t rgb);
/* RGB value of xterm palette entry idx. */
uint32_t colour_256_to_rgb(int idx);
/*
 * A curses colour number for a WRX_COLOUR_* word given the terminal's number
 * of colours (8, 16, 256, or 1<<24 for direct colour); -1 is the default.
 */
int colour_for_terminal(uint32_t c, int ncolours);

/*
 * The same for a direct-colour terminal whose colours 0-255 are still the
 * palette: indexed stays indexed; RGB is the value, plus 256 when shifted
 * (workrex's own entry), else nudged off 0-255 (xterm-direct256).
 */
int colour_for_direct256(uint32_t c, bool shifted);

#endif
