/*
 * pane.h - one emulated terminal: libvterm screen, scrollback, dirty rows.
 *
 * A pane turns the bytes a program prints (pane_feed) into cells that the UI
 * draws, and turns the user's keys, pastes and mouse events into the bytes
 * the program expects (pane_key and friends), honouring the modes the program
 * asked for. It does not know where its bytes come from: the pane_io it is
 * given (a pty today, a socket to a keeper process later) carries them.
 *
 * Callbacks only record state; the owner's event hook is called at most once
 * per pane_feed with what changed, and drawing happens later, once a frame.
 */
#ifndef WRX_PANE_H
#define WRX_PANE_H

#include "../util/util.h"
#include "cell.h"

#include <stdbool.h>
#include <stddef.h>

struct pane;

/* A mirror's input, for the process that emulates its pane (pane_mirror_new). */
enum pane_input_kind {
	PANE_IN_KEY = 1,
	PANE_IN_CHAR,
	PANE_IN_PASTE,
	PANE_IN_MOUSE,
	PANE_IN_FOCUS,      /* pressed: in */
	PANE_IN_SCROLLBACK, /* len: the new limit */
	PANE_IN_VIEW,       /* pressed: the mirror's owner shows the pane (pane_view) */
};
struct pane_input {
	enum pane_input_kind kind;
	int key, mods;
	uint32_t cp;
	int row, col, button;
	bool pressed;
	const char *buf;
	size_t len;
};

/* Where a pane's bytes go. */
struct pane_io {
	int (*write)(void *ctx, const char *buf, size_t len);
	void (*resize)(void *ctx, int rows, int cols);
	void (*close)(void *ctx); /* release ctx; no more calls after */
	void *ctx;
	/* A mirror's keys, mouse, paste and focus; may be NULL in an emulating pane's io. */
	void (*input)(void *ctx, const struct pane_input *in);
};

enum pane_event {
	PANE_EV_DAMAGE = 1 << 0, /* rows or cursor changed */
	PANE_EV_TITLE = 1 << 1,
	PANE_EV_BELL = 1 << 2,
	PANE_EV_EXIT = 1 << 3,
	PANE_EV_OUTPUT = 1 << 4,    /* the program printed something */
	PANE_EV_CLIPBOARD = 1 << 5, /* it wrote to the clipboard (OSC 52): pane_clipboard */
};

typedef void pane_event_fn(struct pane *p, int events, void *data);

/* Same values as libvterm's keys and modifiers (checked in pane.c). */
enum {
	WRX_KEY_NONE,
	WRX_KEY_ENTER,
	WRX_KEY_TAB,
	WRX_KEY_BACKSPACE,
	WRX_KEY_ESCAPE,
	WRX_KEY_UP,
	WRX_KEY_DOWN,
	WRX_KEY_LEFT,
	WRX_KEY_RIGHT,
	WRX_KEY_INS,
	WRX_KEY_DEL,
	WRX_KEY_HOME,
	WRX_KEY_END,
	WRX_KEY_PAGEUP,
	WRX_KEY_PAGEDOWN,
	WRX_KEY_F0 = 256,
};
#define WRX_KEY_F(n) (WRX_KEY_F0 + (n))
enum { WRX_MOD_SHIFT = 1, WRX_MOD_ALT = 2, WRX_MOD_CTRL = 4 };

enum { WRX_MOUSE_NONE, WRX_MOUSE_CLICK, WRX_MOUSE_DRAG, WRX_MOUSE_MOVE };
enum { WRX_CURSOR_BLOCK = 1, WRX_CURSOR_UNDERLINE, WRX_CURSOR_BAR };

/* No pane is larger (a size asked for beyond is cut to it): 80 MB of cells at most. */
#define PANE_MAX_ROWS 1000
#define PANE_MAX_COLS 2000

struct pane *pane_new(int rows, int cols, size_t scrollback, pane_event_fn *fn, void *data);
void pane_free(struct pane *p);
/*
 * A mirror: a pane that another process emulates (a keeper, keeper/). It
 * has no emulator of its own; its rows, history and state come from
 * pane_mirror_* (keeper/sync.c calls them), and its keys, mouse, paste and
 * focus go to its io's input, to be encoded by the emulating pane there.
 */
struct pane *pane_mirror_new(int rows, int cols, size_t scrollback, pane_event_fn *fn, void *data);
bool pane_is_mirror(const struct pane *p);
void pane_set_io(struct pane *p, const struct pane_io *io);
/* No io any more (its owner closed it already): input and output go nowhere. */
void pane_unset_io(struct pane *p);
/* Who hears of p's events from now on (as given to pane_new). */
void pane_set_hook(struct pane *p, pane_event_fn *fn, void *data);

/* Program output into the emulator. */
void pane_feed(struct pane *p, const char *buf, size_t len);
/*
 * Whether printable ASCII may go into the cells without libvterm
 * (screen_text; on by default). The result is the same either way; off is
 * for tests that show it.
 */
void pane_plain_text(struct pane *p, bool on);
/* The program exited (status as from waitpid). */
void pane_set_exited(struct pane *p, int status);

void pane_resize(struct pane *p, int rows, int cols);
void pane_set_scrollback(struct pane *p, size_t lines);

/* Input towards the program. */
void pane_key(struct pane *p, int key, int mods);
void pane_char(struct pane *p, uint32_t cp, int mods);
void pane_write(struct pane *p, const char *buf, size_t len);
void pane_paste(struct pane *p, const char *buf, size_t len);
/* button 0: motion only; 1-3 buttons; 4/5 wheel. row/col inside the pane. */
void pane_mouse(struct pane *p, int row, int col, int button, bool pressed, int mods);
void pane_focus(struct pane *p, bool in);

/* State for drawing. */
int pane_rows(const struct pane *p);
int pane_cols(const struct pane *p);
const char *pane_title(const struct pane *p); /* "" when none */
/*
 * The text of the last clipboard write (OSC 52) the program made, len in
 * *len: PANE_EV_CLIPBOARD says a new one came. Reads are never answered.
 */
const char *pane_clipboard(const struct pane *p, size_t *len);
void pane_cursor(const struct pane *p, int *row, int *col, bool *visible, int *shape);
int pane_mouse_mode(const struct pane *p);
bool pane_alt_screen(const struct pane *p);
bool pane_exited(const struct pane *p, int *status);
size_t pane_history(const struct pane *p);

/* Dirty rows since the last pane_clean(). */
bool pane_row_dirty(const struct pane *p, int row);
void pane_clean(struct pane *p);
void pane_touch(struct pane *p); /* mark every row dirty */

void pane_cell(const struct pane *p, int row, int col, struct wrx_cell *out);
/*
 * A line of the screen (0 .. rows-1) or of the history (-1 newest .. -history)
 * into cells[0..ncols); returns 0, or -1 out of range.
 */
int pane_line(const struct pane *p, int line, struct wrx_cell *cells, int ncols);
/* The same line as UTF-8 text, trailing blanks trimmed; caller frees. */
char *pane_line_text(const struct pane *p, int line);
/*
 * Why a program that ended badly did, as a person reads it: how it ended
 * ("exit 3") and the last line it printed, usually the reason ("exit 3:
 * no API key"); how alone when it printed nothing. Caller frees.
 */
char *pane_failure(const struct pane *p, const char *how);
/* Cells c0..c1 (inclusive) of a line appended to out as UTF-8, trailing blanks trimmed. */
void pane_line_append(const struct pane *p, int line, int c0, int c1, struct buf *out);
/*
 * The whole line with SGR sequences for its colours and attributes, the
 * colours as set (ncolours 0) or as a terminal of ncolours shows them (the
 * nearest of 256, 16 or 8; colour.h). Trailing blanks go unless coloured.
 */
void pane_line_append_sgr(const struct pane *p, int line, int ncolours, struct buf *out);
/* The line shows nothing: no character, and (with colours) no background or reverse. */
bool pane_line_blank(const struct pane *p, int line, bool colours);

/* That line's text goes on in the next (it wrapped at the margin). */
bool pane_line_wrapped(const struct pane *p, int line);

/*
 * Following a pane from another process (keeper/sync.c). pane_sync_take
 * returns a mark; pane_row_changed says whether row changed after it.
 */
uint64_t pane_sync_take(struct pane *p);
bool pane_row_changed(const struct pane *p, int row, uint64_t since);
struct sb;
const struct sb *pane_scrollback(const struct pane *p);

/* A mirror's state, as its emulator has it. */
struct pane_state {
	int row, col; /* the cursor */
	bool cursor_visible;
	int cursor_shape;
	int mouse_mode;
	bool alt_screen;
	const char *title;
	bool exited;
	int exit_status;
	int events; /* PANE_EV_BELL, _OUTPUT, _DAMAGE there since the last state */
	bool held;  /* rows and history did not come with it (sync.h) */
};
struct sb *pane_mirror_scrollback(struct pane *p); /* NULL unless a mirror */
/* The size its owner last asked for (pane_resize), whatever the emulator's is. */
void pane_mirror_wanted(const struct pane *p, int *rows, int *cols);
/* The emulator's size: as pane_resize, without telling the io. */
void pane_mirror_size(struct pane *p, int rows, int cols);
/* Row row from cells[0..ncols). */
void pane_mirror_row(struct pane *p, int row, const struct wrx_cell *cells, int ncols,
		     bool wrapped);
/* Last of an update: the state, and the pane's event hook for all of it. */
void pane_mirror_state(struct pane *p, const struct pane_state *st);
/* Its program wrote text to the clipboard (the emulator's PANE_EV_CLIPBOARD). */
void pane_mirror_clipboard(struct pane *p, const char *data, size_t len);
/*
 * Whether the mirror's owner shows the pane (a mirror starts shown): its
 * emulator holds back rows and history from a hidden one (sync.h).
 */
void pane_view(struct pane *p, bool shown);
bool pane_viewed(const struct pane *p);
/* Is the mirror's screen as its emulator's was (its last update was not held)? */
bool pane_held(const struct pane *p);
/* Updates with rows and history a mirror took: one more after each full update. */
uint64_t pane_fresh(const struct pane *p);
/* Its emulator went away: the mirror has ended, with PANE_LOST for a status. */
void pane_mirror_lost(struct pane *p);
#define PANE_LOST (-1)

#endif
