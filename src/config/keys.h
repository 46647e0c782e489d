/*
 * keys.h - key names and the binding table.
 *
 * A key is an int: a Unicode code point (control keys as their control
 * code, C-b is 2), or one of WRX_K_* for keys without one; WRX_K_META marks
 * Alt. Bindings map the key pressed after the prefix to an action; the
 * defaults are SPEC.md section 4 and `keys.bind` in the config changes them.
 */
#ifndef WRX_KEYS_H
#define WRX_KEYS_H

#include <stdbool.h>
#include <stddef.h>

enum {
	WRX_K_BASE = 0x200000,
	WRX_K_UP,
	WRX_K_DOWN,
	WRX_K_LEFT,
	WRX_K_RIGHT,
	WRX_K_HOME,
	WRX_K_END,
	WRX_K_PPAGE,
	WRX_K_NPAGE,
	WRX_K_IC,
	WRX_K_DC,
	WRX_K_BTAB,
	WRX_K_F1, /* F1..F12 follow */
	WRX_K_F12 = WRX_K_F1 + 11,
	WRX_K_META = 0x1000000,
};

enum wrx_action {
	ACT_NONE,
	ACT_NEW_AGENT,
	ACT_NEW_PANE,
	ACT_MERGE,
	ACT_CLOSE_PANE,
	ACT_REMOVE_AGENT,
	ACT_FOCUS_AGENT, /* arg: 1..9 */
	ACT_PICK_AGENT,
	ACT_ATTENTION,
	ACT_NEXT_PANE,
	ACT_PREV_PANE,
	ACT_PANE_LEFT,
	ACT_PANE_RIGHT,
	ACT_PANE_UP,
	ACT_PANE_DOWN,
	ACT_ZOOM,
	ACT_NEXT_LAYOUT,
	ACT_OVERVIEW,
	ACT_SCROLL,
	ACT_PASTE_IMAGE,
	ACT_SIDEBAR,
	ACT_COMMAND,
	ACT_HELP,
	ACT_QUIT,
	ACT_DETACH,
	ACT_SEND_PREFIX,
	ACT_REDRAW,
	ACT_RELOAD,
	ACT_REVIEW,
	ACT_COMPARE,
	ACT_MESSAGES,
	ACT_COUNT,
};

struct binding {
	int key;
	enum wrx_action action;
	int arg;
};

/* Parse "C-b", "M-x", "Space", "Up", "F5", "x"; returns the key or -1. */
int keys_parse(const char *name);
/* Name of key into out (at least 32 bytes). */
const char *keys_name(int key, char *out, size_t len);

/* Parse "focus-agent-3", "zoom", ...; returns 0 or -1. */
int action_parse(const char *name, enum wrx_action *action, int *arg);
const char *action_name(enum wrx_action action);
const char *action_help(enum wrx_action action);

/*
 * The views over the panes (ui/modes.c) and their own keys: one table
 * here says what each key does in each view and how the help says it,
 * so that the views' key handling, C-b ? and the review's ? agree.
 */
enum view_id {
	VIEW_AGENTS,
	VIEW_REVIEW,
	VIEW_PATCH,
	VIEW_COMPARE,
	VIEW_TEXT,
	VIEW_HELP,
	VIEW_COUNT
};
enum view_op {
	V_NONE,
	/* moving */
	V_DOWN,
	V_UP,
	V_HALF_DOWN,
	V_HALF_UP,
	V_PAGE_DOWN,
	V_PAGE_UP,
	V_TOP,
	V_END,
	V_CLOSE,
	/* the agents table, compare */
	V_OPEN,
	V_MERGE,
	V_QUEUE,
	V_REMOVE,
	V_NEW_AGENT,
	V_GONE,
	V_CHECK,
	/* review */
	V_NEXT_MODE,
	V_NEXT_HUNK,
	V_PREV_HUNK,
	V_NEXT_FILE,
	V_PREV_FILE,
	V_NEXT_COMMIT,
	V_PREV_COMMIT,
	V_RIGHT, /* sideways, or in commits mode the next commit */
	V_LEFT,
	V_SIDE_RIGHT,
	V_SIDE_LEFT,
	V_KEYS,
	V_SEARCH,
	V_COMMENT,
	V_SEND,
	V_PATCH,
	V_COMMIT,
	/* patch mode */
	V_STAGE,
	V_SKIP,
	V_SPLIT,
	V_UNDO,
};
/* What key does in view v: V_NONE for a key it does not take. */
enum view_op view_key(enum view_id v, int key);
/* View v's name, as the help heads its keys. */
const char *view_name(enum view_id v);
/* View v's keys into b, a line for each thing it does: its keys, then what. */
struct buf;
void view_help(enum view_id v, struct buf *b);

/* The binding table: defaults, then changes. */
void bindings_reset(void);
int bindings_set(int key, enum wrx_action action, int arg);
void bindings_unset(int key);
const struct binding *bindings_lookup(int key);
const struct binding *bindings_all(size_t *n);

#endif
