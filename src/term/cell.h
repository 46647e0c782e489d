/*
 * cell.h - one character cell as the rest of workrex sees it.
 *
 * libvterm's own cell type stays inside src/term/; the UI draws these. A
 * colour is one 32-bit word: the top byte says what the low bytes mean.
 * Some attributes libvterm 0.1.4 does not know (dim, conceal, overline,
 * the underline styles and colour); screen.c keeps them all the same.
 */
#ifndef WRX_CELL_H
#define WRX_CELL_H

#include <stdint.h>

#define WRX_CELL_CHARS 6

#define WRX_COLOUR_DEFAULT 0u
#define WRX_COLOUR_INDEXED 0x01000000u /* low byte: palette index */
#define WRX_COLOUR_RGB 0x02000000u     /* low 24 bits: 0xRRGGBB */
#define WRX_COLOUR_KIND(c) ((c)&0xff000000u)

enum {
	WRX_ATTR_BOLD = 1 << 0,
	WRX_ATTR_UNDERLINE = 1 << 1,
	WRX_ATTR_ITALIC = 1 << 2,
	WRX_ATTR_BLINK = 1 << 3,
	WRX_ATTR_REVERSE = 1 << 4,
	WRX_ATTR_STRIKE = 1 << 5,
	WRX_ATTR_DUNDERLINE = 1 << 6, /* double underline */
	WRX_ATTR_DIM = 1 << 7,
	WRX_ATTR_CONCEAL = 1 << 8,
	WRX_ATTR_OVERLINE = 1 << 9,
	WRX_ATTR_CURLY = 1 << 10, /* curly, dotted, dashed underline: one at a time */
	WRX_ATTR_DOTTED = 1 << 11,
	WRX_ATTR_DASHED = 1 << 12,
};
#define WRX_ATTR_UNDERLINES                                                                        \
	(WRX_ATTR_UNDERLINE | WRX_ATTR_DUNDERLINE | WRX_ATTR_CURLY | WRX_ATTR_DOTTED |             \
	 WRX_ATTR_DASHED)

struct wrx_cell {
	uint32_t ch[WRX_CELL_CHARS]; /* base + combining; 0-terminated; ch[0]==0 blank */
	uint8_t width;               /* 1, 2, or 0 for the right half of a wide char */
	uint8_t protect;             /* DECSCA: kept by selective erase; not drawn */
	uint16_t attrs;              /* WRX_ATTR_* */
	uint32_t fg, bg;             /* WRX_COLOUR_* */
	uint32_t ul;                 /* underline colour, WRX_COLOUR_*: default is fg's */
};

#endif
