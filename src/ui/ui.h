/*
 * ui.h - the dashboard's private state, shared by the files of src/ui/.
 *
 * The application is ui->w (core/wrx.h); this is the screen's part only.
 * dashboard.c owns the loop handles and the key actions, tty.c the outer
 * terminal, input.c turns keys and mouse events into actions or pane input,
 * render.c draws a frame, copy.c is scroll mode. Nothing outside src/ui/
 * includes this.
 */
#ifndef WRX_UI_H
#define WRX_UI_H

#include "../config/config.h"
#include "../core/session.h"
#include "../core/wrx.h"
#include "../util/util.h"
#include "../config/keys.h"
#include "layout.h"
#include "terminfo.h"

#include <json-c/json.h>

#include <curses.h>
#include <stdbool.h>
#include <stdio.h>
#include <termios.h>
#include <uv.h>

#define SIDEBAR_WIDTH 24
/* After a key forwarded to a pane, its echo is awaited this long (ms). */
#define TYPING_WINDOW_MS 100

/* Per-pane view state (wpane->view). */
struct view {
	struct rect r; /* last layout rectangle, title bar included; w == 0: hidden */
	bool copy;     /* scroll mode */
	bool by_wheel; /* entered by the mouse wheel: leave at the bottom */
	int top;       /* lines scrolled back; 0 shows the live screen */
	size_t hist_seen;
	int cy, cx; /* copy cursor: absolute line (history < 0), column */
	bool sel;
	int sy, sx;            /* selection anchor */
	int mline, mcol, mlen; /* search match to highlight; mlen 0: none */
	uint8_t *drawn_extra;  /* owned: per row, its cells were drawn again past curses */
	int ndrawn_extra;
};

struct ui;

struct prompt {
	char *label; /* owned */
	struct buf input;
	bool yesno; /* answered by one key: y or n */
	void (*done)(struct ui *ui, const char *answer, void *arg); /* NULL answer: cancelled */
	void *arg;
	/* Tab: what the input completes to (owned by the caller), or NULL. */
	char *(*complete)(struct ui *ui, const char *input);
};

/*
 * A question an agent asked (to merge, to set the clipboard): it never
 * takes the keyboard. It waits here, said on the status line, until the
 * user opens it on purpose (prefix a, or a click on that line); then y/n.
 */
struct asked {
	unsigned id;    /* for the web view, which answers it by this */
	char *question; /* owned */
	char *agent;    /* owned: who asks */
	void (*done)(struct ui *ui, const char *answer, void *arg);
	void *arg;
	struct asked *next;
};
#define ASKED_MAX 4 /* one agent's waiting at once; more are refused */

/* The terminal: keys read, frames written (tty.c), and what it can draw. */
struct ui_tty {
	int fd; /* /dev/tty for keys: polled, non-blocking */
	FILE *f;
	uv_poll_t poll;     /* keys on fd */
	int outfd;          /* /dev/tty for frames: non-blocking, its own open */
	struct buf out;     /* frame bytes the terminal has not taken yet */
	uv_poll_t out_poll; /* room on outfd, while out waits */
	bool out_polls;     /* out_poll is on the loop */
	bool out_waits;     /* out_poll is started */
	bool frame_held;    /* a frame came due while out waited: drawn once it went */
	int framefd;        /* curses draws a frame into this memory file */
	FILE *framef;
	struct termios tio_saved; /* the terminal's modes before ours */
	bool modes_set;
	SCREEN *scr;
	WINDOW *inwin;  /* a pad for reading keys: reading never refreshes */
	struct buf raw; /* raw sequences written after the frame (OSC 52, cursor) */
	int cursor_shape_sent;
	int ncolours;                  /* the terminal's COLORS */
	int colour_kind;               /* TERMINFO_*: what its colour numbers mean */
	struct terminfo_extras extras; /* what it draws that curses cannot */
};

/* When the next frame is drawn, and how much of it. */
struct ui_frame {
	bool pending;
	uint64_t due; /* when the pending frame fires (now_ms) */
	uint64_t last;
	bool layout_dirty;
	bool full_redraw;
};

/* The status line: a message, and the questions and errors that grow over the panes. */
struct ui_status {
	char *message; /* owned */
	bool error;
	struct strlist said; /* the last messages, with their time (C-b ~) */
	int rows;            /* rows over the panes a long question or error took (drawn) */
	int prompt_top;      /* the first of them this frame (the status line: none) */
};

/*
 * A view over the panes (modes.c): the agents table, review, compare, a
 * text shown whole, the help. Its data is its own (freed by free).
 */
struct ui;
struct mode_ops {
	const char *name;
	void (*draw)(struct ui *ui, void *data);
	void (*key)(struct ui *ui, void *data, int key);
	void (*free)(struct ui *ui, void *data);
	bool over_status; /* drawn over the status line too, and takes keys over a question */
};
struct ui_mode {
	const struct mode_ops *ops;
	void *data;
};
#define UI_MODES 8

struct ui {
	struct wrx *w; /* the application this dashboard shows */
	struct ui_tty tty;
	struct ui_frame frame;
	struct ui_status status;
	struct {
		uv_signal_t winch, chld, term, hup;
	} sig;
	struct {
		uv_timer_t frame;
		uv_timer_t msg;
		uv_timer_t tick;   /* status ages and the silence of working agents */
		uv_timer_t clip;   /* a read of the terminal's clipboard times out */
		uv_timer_t reload; /* a config file changed: reload once the writes settle */
	} timer;

	char *trust_declined;      /* owned: the project config text the user would not trust */
	int clip5522;              /* the terminal offers OSC 5522: 1, -1 no, 0 unknown */
	struct termclip *termclip; /* owned: that read, under way */
	struct watch **watches;    /* owned: the config files' directories (reload.c) */
	size_t nwatches;
	struct buf config_seen; /* the config files' contents last read (reload.c) */
	uint64_t last_input;    /* now_ms() of the last key forwarded to a pane */

	bool sidebar;
	bool prefix_armed;
	struct ui_mode modes[UI_MODES]; /* the views over the panes, the top one last (modes.c) */
	int nmodes;
	struct prompt *prompt; /* owned */
	struct asked *asked;   /* owned: agents' questions, oldest first */
	struct ui_web *web;    /* owned: the web view web.listen starts on our loop, or NULL */
	bool pasting;
	struct buf paste;
	bool quitting;
	bool ending;          /* quit and end: it stops once no keeper is still starting */
	bool detached;        /* C-b d: said on the terminal once the dashboard is gone */
	int detached_running; /* the programs that went on */

	int rows, cols;
	struct rect area;            /* where panes go */
	struct rect note;            /* "+N more": the panes that did not fit (h = 0: none) */
	int hidden;                  /* how many */
	struct wpane *laid_focus;    /* the focus the layout was made for; borrowed */
	struct wpane **sidebar_rows; /* which pane each sidebar row shows; borrowed */
	int nsidebar_rows;
	int sidebar_top; /* the first agent the sidebar shows when they do not all fit */
};

/* dashboard.c */
void ui_dirty(struct ui *ui);              /* schedule a frame */
void ui_relayout(struct ui *ui);           /* sizes changed: relayout at the next frame */
void ui_focus_agent(struct ui *ui, int i); /* agent i, its panes opened if it has none */
void ui_flush_terminal(struct ui *ui);     /* the frame and tty_out, to the terminal (send_out) */
bool ui_output_waits(const struct ui *ui); /* part of the last frame is not sent yet */
void tty_output_on_loop(struct ui *ui, uv_loop_t *loop);
void tty_output_off_loop(struct ui *ui);
void ui_message(struct ui *ui, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Close the open question with answer (NULL: cancelled), calling its done. */
void ui_prompt_end(struct ui *ui, const char *answer);
/* The web view, when web.listen is set (webview.c): started on our loop, and stopped. */
void ui_web_start(struct ui *ui);
void ui_web_stop(struct ui *ui);
/* The waiting questions changed: the web views are told (webview.c). */
void ui_web_asked(struct ui *ui);
/* The waiting question id answered, as y or n at C-b a: 0, or -1 when it no longer waits. */
int ui_asked_answer(struct ui *ui, unsigned id, bool yes);
/* The oldest question an agent asked, opened (the user asked for it). False: none waits. */
bool ui_open_asked(struct ui *ui);
/*
 * A question that waits on the status line for prefix a (struct asked),
 * from who (an agent's handle, or what of workrex's asks). replace: one
 * of who's waiting already is no longer so, and goes (answered NULL);
 * else at most ASKED_MAX of who's wait. 0, or -EBUSY.
 */
int ui_ask_waiting(struct ui *ui, const char *question, const char *who,
		   void (*done)(struct ui *, const char *, void *), void *arg, bool replace);
/* who's waiting questions gone (answered NULL): what they asked is settled. */
void ui_asked_drop(struct ui *ui, const char *who);
/* Ask to trust the project's config if its commands were ignored (trustprompt.c). */
void trust_ask(struct ui *ui);
void ui_prompt(struct ui *ui, const char *label, bool yesno,
	       void (*done)(struct ui *, const char *, void *), void *arg);
void ui_action(struct ui *ui, enum wrx_action action, int arg);
/* ui->cfg's keys, prefix and scrollback, into the binding table and the session. */
void ui_apply_config(struct ui *ui);
struct view *ui_view(struct wpane *wp);
void ui_tty_write(struct ui *ui, const char *s, size_t len);

/* tty.c: the outer terminal */
void tty_utf8_locale(void);
int tty_open(struct ui *ui, char **cause);
void tty_close(struct ui *ui);

/* Open agent a's panes, focused (the open action). */
void ui_open_agent(struct ui *ui, struct agent *a);

/* input.c */
void input_init(struct ui *ui);
void input_read(struct ui *ui);
/* A key (or character) the user pressed, as if read now. */
void input_key(struct ui *ui, int key, int mods);

/* termclip.c: the outer terminal's clipboard (OSC 5522) */
void termclip_query(struct ui *ui);            /* at start: does the terminal offer it? */
void termclip_answer(struct ui *ui, bool yes); /* its answer came */
/* While a read is under way, the terminal's input is read here: true when it was. */
bool termclip_tty(struct ui *ui);
int termclip_read(void *ui, wrx_clip_fn *done, void *arg); /* wrx_hooks.terminal_clipboard */
void termclip_close(struct ui *ui);                        /* a read under way ends */

/* render.c */
void render_frame(struct ui *ui);
/* A colour pair for fg on bg (curses colour numbers, -1: the default); 0 when none is left. */
struct wrx_cell;
int ui_colour_pair(struct ui *ui, int fg, int bg);
/* A cell's style for curses: its attributes, *pair its colours (hl: reversed once more). */
attr_t ui_cell_attr(struct ui *ui, const struct wrx_cell *c, bool hl, int *pair);
/* Place every pane in the frame now, sizing each (a new one before it starts). */
void render_layout(struct ui *ui);
/* The icon for an agent's status at now (interrupted included); "" for none. */
const char *ui_status_icon(struct ui *ui, const struct agent *a, uint64_t now);
/* "working", "waiting", "done", "interrupted" or "-". */
const char *ui_status_word(struct ui *ui, const struct agent *a, uint64_t now);
/* Agent indexes in display order (those needing the user first); returns the count. */
int ui_agent_order(struct ui *ui, int *order);

/* prompts.c: the questions keys ask before their action */
void prompts_new_agent(struct ui *ui);
void prompts_agent_verb(struct ui *ui, const char *verb); /* "merge", "remove" */
/* R in the overview: the agents whose PR was merged or closed, removed after one question. */
void prompts_remove_gone(struct ui *ui);
void prompts_command(struct ui *ui);
void prompts_pick_agent(struct ui *ui);

/* UTF-8 text at y, x in at most maxw columns, as the screen shows it (control bytes as ?): the columns used. */
int ui_put_text(int y, int x, int maxw, const char *s, attr_t a);
/* Columns the UTF-8 text s takes on the screen. */
int ui_text_width(const char *s);

/* clock.c: status ages and the silence of working agents */
/* Re-arm the tick for the next status-age or silence change; from each frame. */
void clock_schedule_tick(struct ui *ui);
/* "3m" since the status changed, or "" (buf of 16). */
void clock_age(const struct agent *a, char *out, size_t len);

/* reload.c: the config files watched, read again through the reload action. */
void ui_reload_key(struct ui *ui);
/* The config was read again (the core's config_changed hook). */
void ui_config_changed(struct ui *ui);
/* A change seen but not read yet (its writes settling) is read now, without asking to trust. */
void ui_reload_pending(struct ui *ui);
void ui_watch_config(struct ui *ui);
void ui_unwatch_config(struct ui *ui);

/* modes.c: data opened as a view of kind ops (replacing one of that kind), on top. */
void ui_mode_open(struct ui *ui, const struct mode_ops *ops, void *data);
/* The data of the open view of kind ops, or NULL. */
void *ui_mode(const struct ui *ui, const struct mode_ops *ops);
/* The view of kind ops closed (its data freed), wherever it is in the stack; none: nothing. */
void ui_mode_close(struct ui *ui, const struct mode_ops *ops);
void ui_modes_close_all(struct ui *ui);
/* The view on top (keys go to it), or NULL: the panes show. */
const struct ui_mode *ui_mode_top(const struct ui *ui);
/* The views from the bottom up: those under the status line, or those over it. */
void ui_modes_draw(struct ui *ui, bool over_status);

/* The views. textview.c: text over the whole screen but the status line, until q. */
void textview_open(struct ui *ui, const char *title, const char *text);
/* review.c: an agent's changes over the panes (prefix D), until q. */
void review_open(struct ui *ui, const struct agent *a);
/* compare.c: a group's candidates side by side (prefix =, SPEC §11). */
void compare_open(struct ui *ui, const struct agent *a);
/* overview.c: every agent in a table (prefix w), the focused one selected. */
void overview_open(struct ui *ui);
/* render.c: the key bindings (prefix ?), scrolled by j/k; another key closes it. */
void help_open(struct ui *ui);
/* A view's own keys (config/keys.c's table), shown whole over it: its ?. */
void view_keys_show(struct ui *ui, enum view_id v);

/* copy.c */
void copy_enter(struct ui *ui, struct wpane *wp, bool by_wheel);
bool copy_key(struct ui *ui, struct wpane *wp, int key);
void copy_scroll(struct ui *ui, struct wpane *wp, int delta);
void copy_sync(struct wpane *wp); /* keep the view on its lines as history grows */
/* Is absolute line/col selected or part of the search match? */
bool copy_highlight(const struct view *v, int line, int col);
const char *copy_to_clipboard(struct ui *ui,
			      const char *text); /* the system tool that took it, or NULL */

#endif
