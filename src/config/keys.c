/*
 * keys.c - key names both ways, action names, and the binding table.
 *
 * Everything is a table: the named keys, the actions with their help text,
 * the default bindings. The help overlay reads the same tables, so it
 * cannot drift from what the keys do; workrex(1)'s KEYS section is
 * written by hand.
 */
#include "keys.h"

#include "../util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	int key;
} named_keys[] = {
	{"Space", ' '},         {"Enter", '\r'},           {"Tab", '\t'},
	{"Escape", 27},         {"BSpace", 127},           {"Up", WRX_K_UP},
	{"Down", WRX_K_DOWN},   {"Left", WRX_K_LEFT},      {"Right", WRX_K_RIGHT},
	{"Home", WRX_K_HOME},   {"End", WRX_K_END},        {"PageUp", WRX_K_PPAGE},
	{"PPage", WRX_K_PPAGE}, {"PageDown", WRX_K_NPAGE}, {"NPage", WRX_K_NPAGE},
	{"IC", WRX_K_IC},       {"DC", WRX_K_DC},          {"BTab", WRX_K_BTAB},
};

static const struct {
	const char *name;
	const char *help;
} actions[ACT_COUNT] = {
	[ACT_NONE] = {"none", "nothing"},
	[ACT_NEW_AGENT] = {"new-agent", "new agent: branch name, then a prompt"},
	[ACT_NEW_PANE] = {"new-pane", "new shell pane in the focused agent's directory"},
	[ACT_MERGE] = {"merge", "merge the focused agent"},
	[ACT_CLOSE_PANE] = {"close-pane", "close the focused pane"},
	[ACT_REMOVE_AGENT] = {"remove-agent", "remove the focused agent's worktree"},
	[ACT_FOCUS_AGENT] = {"focus-agent", "focus agent N (again: its next pane)"},
	[ACT_PICK_AGENT] = {"pick-agent", "focus an agent by number or name (Tab completes)"},
	[ACT_ATTENTION] = {"focus-attention",
			   "focus the agent that last finished or waits (again: the one before)"},
	[ACT_NEXT_PANE] = {"next-pane", "focus the next pane"},
	[ACT_PREV_PANE] = {"prev-pane", "focus the previous pane"},
	[ACT_PANE_LEFT] = {"pane-left", "focus the pane to the left"},
	[ACT_PANE_RIGHT] = {"pane-right", "focus the pane to the right"},
	[ACT_PANE_UP] = {"pane-up", "focus the pane above"},
	[ACT_PANE_DOWN] = {"pane-down", "focus the pane below"},
	[ACT_ZOOM] = {"zoom", "zoom the focused pane and back"},
	[ACT_NEXT_LAYOUT] = {"next-layout", "next layout: tile, grid, full, window"},
	[ACT_OVERVIEW] = {"overview", "agents overview"},
	[ACT_SCROLL] = {"scroll-mode", "scroll mode: history, / search, v select, y copy"},
	[ACT_PASTE_IMAGE] = {"paste-image", "paste the clipboard image"},
	[ACT_SIDEBAR] = {"toggle-sidebar", "show or hide the sidebar"},
	[ACT_COMMAND] = {"command-prompt", "command line"},
	[ACT_HELP] = {"help", "this help"},
	[ACT_MESSAGES] = {"show-messages", "the status line's last messages, whole (tmux's C-b ~)"},
	[ACT_QUIT] = {"quit", "quit workrex, ending every program in it"},
	[ACT_DETACH] = {"detach",
			"detach: workrex exits, its programs go on (workrex again to return)"},
	[ACT_SEND_PREFIX] = {"send-prefix", "send the prefix key to the pane"},
	[ACT_REDRAW] = {"redraw", "redraw the screen"},
	[ACT_RELOAD] = {"reload-config", "read the config files again"},
	[ACT_REVIEW] = {"review", "review the focused agent's changes: files, diff, modes (Tab)"},
	[ACT_COMPARE] = {"compare", "the focused agent's group side by side; m merges the best"},
};

static const struct binding default_bindings[] = {
	{'n', ACT_NEW_AGENT, 0},
	{'c', ACT_NEW_PANE, 0},
	{'m', ACT_MERGE, 0},
	{'x', ACT_CLOSE_PANE, 0},
	{'X', ACT_REMOVE_AGENT, 0},
	{'1', ACT_FOCUS_AGENT, 1},
	{'2', ACT_FOCUS_AGENT, 2},
	{'3', ACT_FOCUS_AGENT, 3},
	{'4', ACT_FOCUS_AGENT, 4},
	{'5', ACT_FOCUS_AGENT, 5},
	{'6', ACT_FOCUS_AGENT, 6},
	{'7', ACT_FOCUS_AGENT, 7},
	{'8', ACT_FOCUS_AGENT, 8},
	{'9', ACT_FOCUS_AGENT, 9},
	{'\'', ACT_PICK_AGENT, 0},
	{'o', ACT_NEXT_PANE, 0},
	{WRX_K_LEFT, ACT_PANE_LEFT, 0},
	{WRX_K_RIGHT, ACT_PANE_RIGHT, 0},
	{WRX_K_UP, ACT_PANE_UP, 0},
	{WRX_K_DOWN, ACT_PANE_DOWN, 0},
	{'z', ACT_ZOOM, 0},
	{' ', ACT_NEXT_LAYOUT, 0},
	{'w', ACT_OVERVIEW, 0},
	{'[', ACT_SCROLL, 0},
	{'p', ACT_PASTE_IMAGE, 0},
	{'s', ACT_SIDEBAR, 0},
	{':', ACT_COMMAND, 0},
	{'?', ACT_HELP, 0},
	{'~', ACT_MESSAGES, 0},
	{'q', ACT_QUIT, 0},
	{'d', ACT_DETACH, 0},
	{2, ACT_SEND_PREFIX, 0},
	{'r', ACT_REDRAW, 0},
	{'a', ACT_ATTENTION, 0},
	{'R', ACT_RELOAD, 0},
	{'D', ACT_REVIEW, 0},
	{'=', ACT_COMPARE, 0},
};

static struct binding *table;
static size_t ntable;

int keys_parse(const char *name)
{
	int meta = 0;
	if (name == NULL || *name == '\0')
		return -1;
	while (strlen(name) > 2 && name[1] == '-' && (name[0] == 'M' || name[0] == 'C')) {
		if (name[0] == 'M') {
			meta = WRX_K_META;
			name += 2;
			continue;
		}
		/* C-x: a control code */
		const char *rest = name + 2;
		if (strlen(rest) != 1)
			break;
		int c = (unsigned char)rest[0];
		if (c >= 'a' && c <= 'z')
			return meta | (c - 'a' + 1);
		if (c >= '@' && c <= '_')
			return meta | (c - '@');
		if (c == '?')
			return meta | 127;
		if (c == ' ')
			return meta | 0;
		return -1;
	}
	for (size_t i = 0; i < WRX_ARRAY_LEN(named_keys); i++)
		if (strcasecmp(name, named_keys[i].name) == 0)
			return meta | named_keys[i].key;
	if ((name[0] == 'F' || name[0] == 'f') && name[1] >= '1' && name[1] <= '9') {
		char *end;
		long n = strtol(name + 1, &end, 10);
		if (*end == '\0' && n >= 1 && n <= 12)
			return meta | (WRX_K_F1 + (int)n - 1);
	}
	/* One UTF-8 character. */
	const unsigned char *s = (const unsigned char *)name;
	int cp, len;
	if (s[0] < 0x80) {
		cp = s[0];
		len = 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		cp = s[0] & 0x1f;
		len = 2;
	} else if ((s[0] & 0xf0) == 0xe0) {
		cp = s[0] & 0x0f;
		len = 3;
	} else if ((s[0] & 0xf8) == 0xf0) {
		cp = s[0] & 0x07;
		len = 4;
	} else {
		return -1;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (s[len] != '\0' || cp < 0x20)
		return -1;
	return meta | cp;
}

const char *keys_name(int key, char *out, size_t len)
{
	const char *meta = (key & WRX_K_META) ? "M-" : "";
	key &= ~WRX_K_META;
	for (size_t i = 0; i < WRX_ARRAY_LEN(named_keys); i++) {
		if (named_keys[i].key == key) {
			snprintf(out, len, "%s%s", meta, named_keys[i].name);
			return out;
		}
	}
	if (key >= WRX_K_F1 && key <= WRX_K_F12) {
		snprintf(out, len, "%sF%d", meta, key - WRX_K_F1 + 1);
	} else if (key == 127) {
		snprintf(out, len, "%sC-?", meta);
	} else if (key < 0x20) {
		snprintf(out, len, "%sC-%c", meta, key + '@' + (key >= 1 && key <= 26 ? 32 : 0));
	} else {
		char u[5] = {0};
		utf8_encode((uint32_t)key, u);
		snprintf(out, len, "%s%s", meta, u);
	}
	return out;
}

int action_parse(const char *name, enum wrx_action *action, int *arg)
{
	*arg = 0;
	for (int a = 0; a < ACT_COUNT; a++) {
		size_t n = strlen(actions[a].name);
		if (strncmp(name, actions[a].name, n) != 0)
			continue;
		if (name[n] == '\0' && a != ACT_FOCUS_AGENT) {
			*action = a;
			return 0;
		}
		if (a == ACT_FOCUS_AGENT && name[n] == '-' && name[n + 1] >= '1' &&
		    name[n + 1] <= '9' && name[n + 2] == '\0') {
			*action = a;
			*arg = name[n + 1] - '0';
			return 0;
		}
	}
	return -1;
}

const char *action_name(enum wrx_action action)
{
	return action < ACT_COUNT ? actions[action].name : "?";
}

const char *action_help(enum wrx_action action)
{
	return action < ACT_COUNT ? actions[action].help : "?";
}

void bindings_reset(void)
{
	free(table);
	ntable = WRX_ARRAY_LEN(default_bindings);
	table = xmalloc(sizeof default_bindings);
	memcpy(table, default_bindings, sizeof default_bindings);
}

static void ensure(void)
{
	if (table == NULL)
		bindings_reset();
}

int bindings_set(int key, enum wrx_action action, int arg)
{
	ensure();
	if (key < 0 || action >= ACT_COUNT)
		return -1;
	for (size_t i = 0; i < ntable; i++) {
		if (table[i].key == key) {
			table[i].action = action;
			table[i].arg = arg;
			return 0;
		}
	}
	table = xrealloc(table, (ntable + 1) * sizeof *table);
	table[ntable++] = (struct binding){key, action, arg};
	return 0;
}

void bindings_unset(int key)
{
	ensure();
	for (size_t i = 0; i < ntable; i++) {
		if (table[i].key == key) {
			table[i] = table[--ntable];
			return;
		}
	}
}

const struct binding *bindings_lookup(int key)
{
	ensure();
	for (size_t i = 0; i < ntable; i++)
		if (table[i].key == key && table[i].action != ACT_NONE)
			return &table[i];
	return NULL;
}

const struct binding *bindings_all(size_t *n)
{
	ensure();
	*n = ntable;
	return table;
}

/* ---- the views' keys ---- */

static const char *const view_names[VIEW_COUNT] = {
	[VIEW_AGENTS] = "the agents table (prefix w)",
	[VIEW_REVIEW] = "the review view (prefix D)",
	[VIEW_PATCH] = "its patch mode (a)",
	[VIEW_COMPARE] = "the compare view (prefix =)",
	[VIEW_TEXT] = "a text shown whole (prefix ~, a check's output)",
	[VIEW_HELP] = "this help",
};

/* Each view's keys, in the order its help lists them; help on the first key of each thing. */
static const struct view_key {
	enum view_id view;
	int key;
	enum view_op op;
	const char *help;
} view_keys[] = {
	{VIEW_AGENTS, 'j', V_DOWN, "the next agent"},
	{VIEW_AGENTS, WRX_K_DOWN, V_DOWN, NULL},
	{VIEW_AGENTS, 'k', V_UP, "the one before"},
	{VIEW_AGENTS, WRX_K_UP, V_UP, NULL},
	{VIEW_AGENTS, '\r', V_OPEN, "focus it (its panes opened if they are not)"},
	{VIEW_AGENTS, '\n', V_OPEN, NULL},
	{VIEW_AGENTS, 'm', V_MERGE, "merge it, asked with what it brings"},
	{VIEW_AGENTS, 'X', V_REMOVE, "remove it, asked"},
	{VIEW_AGENTS, 'n', V_NEW_AGENT, "a new agent"},
	{VIEW_AGENTS, 'R', V_GONE, "remove the agents whose work is gone upstream, asked"},
	{VIEW_AGENTS, '?', V_KEYS, "these keys"},
	{VIEW_AGENTS, 'q', V_CLOSE, "close"},
	{VIEW_AGENTS, 27, V_CLOSE, NULL},

	{VIEW_REVIEW, '\t', V_NEXT_MODE,
	 "next mode: wip, branch, commits, staged (what c commits)"},
	{VIEW_REVIEW, 'j', V_DOWN, "down a line"},
	{VIEW_REVIEW, WRX_K_DOWN, V_DOWN, NULL},
	{VIEW_REVIEW, 'k', V_UP, "up a line"},
	{VIEW_REVIEW, WRX_K_UP, V_UP, NULL},
	{VIEW_REVIEW, 4, V_HALF_DOWN, "half a page down"},
	{VIEW_REVIEW, 21, V_HALF_UP, "half a page up"},
	{VIEW_REVIEW, ' ', V_PAGE_DOWN, "a page down"},
	{VIEW_REVIEW, WRX_K_NPAGE, V_PAGE_DOWN, NULL},
	{VIEW_REVIEW, WRX_K_PPAGE, V_PAGE_UP, "a page up"},
	{VIEW_REVIEW, 'g', V_TOP, "the top"},
	{VIEW_REVIEW, WRX_K_HOME, V_TOP, NULL},
	{VIEW_REVIEW, 'G', V_END, "the end"},
	{VIEW_REVIEW, WRX_K_END, V_END, NULL},
	{VIEW_REVIEW, ']', V_NEXT_FILE, "the next file"},
	{VIEW_REVIEW, '[', V_PREV_FILE, "the file before"},
	{VIEW_REVIEW, 'n', V_NEXT_HUNK, "the next hunk"},
	{VIEW_REVIEW, 'N', V_PREV_HUNK, "the hunk before"},
	{VIEW_REVIEW, 'l', V_NEXT_COMMIT, "commits mode: the next commit"},
	{VIEW_REVIEW, 'h', V_PREV_COMMIT, "commits mode: the commit before"},
	{VIEW_REVIEW, '>', V_SIDE_RIGHT, "sideways: long lines read on"},
	{VIEW_REVIEW, '<', V_SIDE_LEFT, "sideways, back"},
	{VIEW_REVIEW, WRX_K_RIGHT, V_RIGHT, "sideways (in commits mode: the next commit)"},
	{VIEW_REVIEW, WRX_K_LEFT, V_LEFT, "sideways, back (in commits mode: the commit before)"},
	{VIEW_REVIEW, '/', V_SEARCH, "search"},
	{VIEW_REVIEW, 'o', V_COMMENT,
	 "comment on the line at the top (its hunk goes with it); a line a waiting comment "
	 "is on is marked at the right"},
	{VIEW_REVIEW, 'S', V_SEND, "send the waiting comments to the agent, as one message"},
	{VIEW_REVIEW, 'a', V_PATCH, "patch mode: stage the unstaged hunks one by one"},
	{VIEW_REVIEW, 'c', V_COMMIT, "commit what is staged (review.commit: agent asks it)"},
	{VIEW_REVIEW, 'm', V_MERGE, "merge, asked with what it brings"},
	{VIEW_REVIEW, '?', V_KEYS, "these keys"},
	{VIEW_REVIEW, 'q', V_CLOSE, "close"},
	{VIEW_REVIEW, 27, V_CLOSE, NULL},

	{VIEW_PATCH, 'y', V_STAGE, "stage this hunk"},
	{VIEW_PATCH, 'n', V_SKIP, "skip it"},
	{VIEW_PATCH, 's', V_SPLIT, "split it in smaller hunks"},
	{VIEW_PATCH, 'u', V_UNDO, "the hunk before, answered again"},
	{VIEW_PATCH, 'q', V_CLOSE, "done: what was answered y is staged"},
	{VIEW_PATCH, 27, V_CLOSE, NULL},

	{VIEW_COMPARE, 'j', V_DOWN, "the next candidate"},
	{VIEW_COMPARE, WRX_K_DOWN, V_DOWN, NULL},
	{VIEW_COMPARE, 'k', V_UP, "the one before"},
	{VIEW_COMPARE, WRX_K_UP, V_UP, NULL},
	{VIEW_COMPARE, '\r', V_OPEN, "its check's output"},
	{VIEW_COMPARE, '\n', V_OPEN, NULL},
	{VIEW_COMPARE, 'r', V_CHECK, "run its check again"},
	{VIEW_COMPARE, 'm', V_MERGE, "merge it and remove the others, asked"},
	{VIEW_COMPARE, 'Q', V_QUEUE, "put it in the merge queue (the others stay)"},
	{VIEW_COMPARE, '?', V_KEYS, "these keys"},
	{VIEW_COMPARE, 'q', V_CLOSE, "close"},
	{VIEW_COMPARE, 27, V_CLOSE, NULL},

	{VIEW_TEXT, 'j', V_DOWN, "down a line"},
	{VIEW_TEXT, WRX_K_DOWN, V_DOWN, NULL},
	{VIEW_TEXT, 'k', V_UP, "up a line"},
	{VIEW_TEXT, WRX_K_UP, V_UP, NULL},
	{VIEW_TEXT, ' ', V_PAGE_DOWN, "a page down"},
	{VIEW_TEXT, WRX_K_NPAGE, V_PAGE_DOWN, NULL},
	{VIEW_TEXT, WRX_K_PPAGE, V_PAGE_UP, "a page up"},
	{VIEW_TEXT, 'g', V_TOP, "the top"},
	{VIEW_TEXT, WRX_K_HOME, V_TOP, NULL},
	{VIEW_TEXT, 'G', V_END, "the end"},
	{VIEW_TEXT, WRX_K_END, V_END, NULL},
	{VIEW_TEXT, 'q', V_CLOSE, "close"},
	{VIEW_TEXT, 27, V_CLOSE, NULL},
	{VIEW_TEXT, '\r', V_CLOSE, NULL},

	{VIEW_HELP, 'j', V_DOWN, "down a line"},
	{VIEW_HELP, WRX_K_DOWN, V_DOWN, NULL},
	{VIEW_HELP, 'k', V_UP, "up a line"},
	{VIEW_HELP, WRX_K_UP, V_UP, NULL},
	{VIEW_HELP, ' ', V_PAGE_DOWN, "ten lines down"},
	{VIEW_HELP, WRX_K_NPAGE, V_PAGE_DOWN, NULL},
	{VIEW_HELP, WRX_K_PPAGE, V_PAGE_UP, "ten lines up"},
	{VIEW_HELP, '\t', V_NEXT_MODE, "the next view's keys, then the bindings again"},
};

enum view_op view_key(enum view_id v, int key)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(view_keys); i++)
		if (view_keys[i].view == v && view_keys[i].key == key)
			return view_keys[i].op;
	return V_NONE;
}

const char *view_name(enum view_id v)
{
	return v < VIEW_COUNT ? view_names[v] : "?";
}

/* The keys' column of view_help, and where a long line breaks (an 80-column text view). */
#define HELP_KEYS 14
#define HELP_WIDTH 78

void view_help(enum view_id v, struct buf *b)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(view_keys); i++) {
		const struct view_key *k = &view_keys[i];
		if (k->view != v || k->help == NULL)
			continue;
		/* Its keys: this one and those after it that do the same, with no help of their own. */
		struct buf names = {0};
		for (size_t j = i;
		     j < WRX_ARRAY_LEN(view_keys) && view_keys[j].view == v &&
		     view_keys[j].op == k->op && (j == i || view_keys[j].help == NULL);
		     j++) {
			char name[32];
			if (view_keys[j].key == '\n') /* Enter's twin (C-j): the same, not said */
				continue;
			buf_addf(&names, "%s%s", names.len ? " " : "",
				 keys_name(view_keys[j].key, name, sizeof name));
		}
		/* What it does, broken at a space to fit, its lines under one another. */
		const char *h = k->help;
		buf_addf(b, "%-*s ", HELP_KEYS, names.data);
		while (strlen(h) > HELP_WIDTH - HELP_KEYS - 1) {
			size_t cut = HELP_WIDTH - HELP_KEYS - 1;
			while (cut > 0 && h[cut] != ' ')
				cut--;
			if (cut == 0)
				break;
			buf_addf(b, "%.*s\n%-*s ", (int)cut, h, HELP_KEYS, "");
			h += cut + 1;
		}
		buf_addf(b, "%s\n", h);
		buf_free(&names);
	}
}
