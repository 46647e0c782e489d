/*
 * vtfilter.h - normalise program output before libvterm 0.1.4 parses it.
 *
 * libvterm 0.1.4 has parser bugs that a program can trigger on purpose or
 * by printing junk (found by tests/fuzz/fuzz_pane.c): a CSI with more than
 * 16 arguments writes past an array; an ESC followed by a control byte
 * inside a string overflows a heap buffer; a string split over two writes
 * comes out corrupted. This filter rewrites the byte stream so that libvterm
 * only ever sees well-formed sequences with the same meaning:
 *
 *   - control bytes between an ESC and its next byte are moved in front of
 *     the ESC (libvterm executes them there anyway);
 *   - CSI sequences with too many arguments are dropped;
 *   - string sequences (OSC, DCS) arrive whole, without control bytes in
 *     their body, ended by BEL or ESC \; OSC 52 (the clipboard) is held
 *     out of libvterm's reach (struct vtfilter's clip); APC, PM and SOS,
 *     which libvterm would print as text, are dropped whole;
 *   - REP (CSI n b) is expanded here: libvterm loops forever on a REP with
 *     no character printed before it;
 *   - an escape sequence with intermediates whose final byte is '[' or a
 *     string introducer (ESC ! [, ESC SP ]) is dropped: libvterm would
 *     start a CSI or a string there that this filter did not see;
 *   - an unfinished sequence at the end of the input is left for the next
 *     call (the caller holds it), so nothing is ever split.
 *
 * And it tells screen.c what libvterm 0.1.4 drops, in order with the rest,
 * through private sequences libvterm hands to its fallback (VTFILTER_*):
 * every SGR, for screen.c alone (libvterm knows neither dim, conceal,
 * overline, the underline styles and colour, nor 38:2::R:G:B, and its pen
 * goes unused), and every save and restore of the cursor (the pen with it). Such sequences from the program itself
 * are dropped. So is CSI 3 J, which erases the history: libvterm does
 * nothing with it. Mode 47 (the alternate screen, which libvterm ignores) is
 * passed on as 1047, and a restore of the cursor brings back the
 * character sets saved with it, which libvterm does not.
 *
 * As it reads, it also notes where printable ASCII goes out that libvterm
 * would put in the plain way (struct vtfilter's runs), so that the pane can
 * put it into the cells itself (screen_text) instead of libvterm glyph by
 * glyph, which is most of what a flood costs.
 */
#ifndef WRX_VTFILTER_H
#define WRX_VTFILTER_H

#include "../util/util.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * CSI ? Pm $ m: an SGR, for screen.c; CSI ? $ s and CSI ? $ u: the cursor
 * (and the pen) was just saved, restored.
 */
#define VTFILTER_LEADER '?'
#define VTFILTER_INTERMED "$"
#define VTFILTER_SAVE "\033[?$s"
#define VTFILTER_RESTORE "\033[?$u"
/* CSI 3 J (ED 3, erase the history, as xterm and tmux do; libvterm 0.1.4 ignores it). */
#define VTFILTER_CLEAR_HISTORY "\033[?$J"

/*
 * What the filter remembers between calls; zero-initialise. The character
 * sets are kept here because libvterm 0.1.4's DECSC does not save them: on
 * a restore the filter designates them again (and shifts in or out).
 */
struct vtfilter {
	char last[4];                /* the last graphic character printed, UTF-8 */
	int lastlen;                 /* 0: none yet */
	char g[4], saved_g[4];       /* G0-G3: the designating final byte, 0 for ASCII */
	bool shifted, saved_shifted; /* SO: G1 in GL */
	/*
	 * OSC 52 is taken out of the stream: a clipboard write's "Pc;Pd" (as
	 * sent, base64 and all) replaces clip's content and sets clip_set;
	 * with clip NULL, and for a read, it is dropped.
	 */
	struct buf *clip;
	bool clip_set;
	/*
	 * What the pane may do without libvterm, noted in runs (when not
	 * NULL) as struct vtfilter_run, in the order of out:
	 *  - VTFILTER_TEXT: a run of at least VTFILTER_RUN_MIN printable
	 *    ASCII characters (0x20-0x7e) while the character set in use is
	 *    ASCII and no quirk below is on, which libvterm would put glyph by
	 *    glyph the plain way (screen_text);
	 *  - VTFILTER_SGR: an SGR as it goes out (ESC [ m, then ours with the
	 *    parameters, at offset 6 and len - 8 long), plain digits, ';' and
	 *    ':', while no quirk moves a cursor that any CSI would bound
	 *    (screen_sgr);
	 *  - VTFILTER_SPLIT (len 0): just after a restore of the cursor (DECRC,
	 *    CSI ? 1048 or 1049 l), where the pane brings a cursor restored
	 *    outside the screen back in (screen_restore_span, which finds the
	 *    same places in out without the runs).
	 */
	struct buf *runs;
	unsigned quirks; /* VTFILTER_Q_*: what keeps text off that path */
};

#define VTFILTER_RUN_MIN 4
enum { VTFILTER_TEXT, VTFILTER_SGR, VTFILTER_SPLIT };
struct vtfilter_run {
	uint32_t at, len; /* in out (one call's output: far less than 4 GB) */
	int kind;         /* VTFILTER_TEXT, VTFILTER_SGR, VTFILTER_SPLIT */
};
enum {
	VTFILTER_Q_INSERT = 1 << 0,  /* IRM: each glyph pushes the row right */
	VTFILTER_Q_ORIGIN = 1 << 1,  /* DECOM: cursor motion bounded by the region */
	VTFILTER_Q_PROTECT = 1 << 2, /* DECSCA: glyphs protected from selective erase */
	VTFILTER_Q_SINGLE = 1 << 3,  /* SS2, SS3: the next character from G2 or G3 */
	VTFILTER_Q_LOCKED = 1 << 4,  /* LS2, LS3: G2 or G3 in GL */
	VTFILTER_Q_SIZED = 1 << 5,   /* a double-width or double-height line was asked for */
};

/*
 * Append the normalised form of data to out. Returns how many bytes were
 * consumed; data[ret..len) is an unfinished sequence to pass again, with
 * more bytes after it.
 */
size_t vtfilter(struct vtfilter *f, const char *data, size_t len, struct buf *out);

#endif
