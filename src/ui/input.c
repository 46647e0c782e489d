/*
 * input.c - keys and mouse from the outer terminal.
 *
 * curses decodes the terminal's key sequences (wget_wch on a pad, so that
 * reading never triggers a refresh); this file turns them into the prefix
 * state machine, prompt and scroll-mode keys, or input for the focused pane,
 * re-encoded by libvterm for the modes the program set (cursor keys,
 * bracketed paste, mouse reporting). Modified keys (C-Up, S-F5, ...) are
 * found through the terminal's extended capabilities at start-up.
 */
#include "../core/actions.h"
#include "../term/pane.h"
#include "../term/pty.h"
#include "terminfo.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

enum {
	KEY_WRX_PASTE_START = KEY_MAX + 1,
	KEY_WRX_PASTE_END,
	KEY_WRX_FOCUS_IN,
	KEY_WRX_FOCUS_OUT,
	KEY_WRX_5522_YES, /* the terminal's answer to DECRQM 5522 (termclip.c) */
	KEY_WRX_5522_NO,
};

struct modkey {
	int code; /* curses key code */
	int key;  /* WRX_K_* */
	int mods; /* WRX_MOD_* */
};

static struct modkey modkeys[128];
static int nmodkeys;

static const struct {
	int code;
	int key;
	int mods;
} plain_keys[] = {
	{KEY_UP, WRX_K_UP, 0},
	{KEY_DOWN, WRX_K_DOWN, 0},
	{KEY_LEFT, WRX_K_LEFT, 0},
	{KEY_RIGHT, WRX_K_RIGHT, 0},
	{KEY_HOME, WRX_K_HOME, 0},
	{KEY_END, WRX_K_END, 0},
	{KEY_PPAGE, WRX_K_PPAGE, 0},
	{KEY_NPAGE, WRX_K_NPAGE, 0},
	{KEY_IC, WRX_K_IC, 0},
	{KEY_DC, WRX_K_DC, 0},
	{KEY_BTAB, WRX_K_BTAB, 0},
	{KEY_FIND, WRX_K_HOME, 0},
	{KEY_SELECT, WRX_K_END, 0},
	{KEY_SR, WRX_K_UP, WRX_MOD_SHIFT},
	{KEY_SF, WRX_K_DOWN, WRX_MOD_SHIFT},
	{KEY_SLEFT, WRX_K_LEFT, WRX_MOD_SHIFT},
	{KEY_SRIGHT, WRX_K_RIGHT, WRX_MOD_SHIFT},
	{KEY_SHOME, WRX_K_HOME, WRX_MOD_SHIFT},
	{KEY_SEND, WRX_K_END, WRX_MOD_SHIFT},
	{KEY_SDC, WRX_K_DC, WRX_MOD_SHIFT},
};

static const struct {
	const char *cap;
	int key;
} modkey_caps[] = {
	{"kUP", WRX_K_UP},    {"kDN", WRX_K_DOWN}, {"kLFT", WRX_K_LEFT},  {"kRIT", WRX_K_RIGHT},
	{"kHOM", WRX_K_HOME}, {"kEND", WRX_K_END}, {"kPRV", WRX_K_PPAGE}, {"kNXT", WRX_K_NPAGE},
	{"kDC", WRX_K_DC},    {"kIC", WRX_K_IC},
};

void input_init(struct ui *ui)
{
	ui->tty.inwin = newpad(1, 1);
	keypad(ui->tty.inwin, TRUE);
	nodelay(ui->tty.inwin, TRUE);
	mousemask(ALL_MOUSE_EVENTS | REPORT_MOUSE_POSITION, NULL);
	mouseinterval(0);
	define_key("\033[200~", KEY_WRX_PASTE_START);
	define_key("\033[201~", KEY_WRX_PASTE_END);
	define_key("\033[I", KEY_WRX_FOCUS_IN);
	define_key("\033[O", KEY_WRX_FOCUS_OUT);
	for (int ps = 0; ps <= 4; ps++) {
		char reply[16];
		snprintf(reply, sizeof reply, "\033[?5522;%d$y", ps);
		define_key(reply, ps >= 1 && ps <= 3 ? KEY_WRX_5522_YES : KEY_WRX_5522_NO);
	}

	/* Shift/Alt/Ctrl variants of the cursor keys: kUP2 .. kUP8 and so on. */
	nmodkeys = 0;
	for (size_t i = 0; i < WRX_ARRAY_LEN(modkey_caps); i++) {
		for (int m = 2; m <= 8 && nmodkeys < (int)WRX_ARRAY_LEN(modkeys); m++) {
			char name[16];
			snprintf(name, sizeof name, "%s%d", modkey_caps[i].cap, m);
			int code = terminfo_key_code(name);
			if (code > 0)
				modkeys[nmodkeys++] =
					(struct modkey){code, modkey_caps[i].key, m - 1};
		}
	}
}

/* A curses key code as a WRX key and modifiers; returns -1 if unknown. */
static int decode_code(int code, int *mods)
{
	*mods = 0;
	for (size_t i = 0; i < WRX_ARRAY_LEN(plain_keys); i++) {
		if (plain_keys[i].code == code) {
			*mods = plain_keys[i].mods;
			return plain_keys[i].key;
		}
	}
	for (int i = 0; i < nmodkeys; i++) {
		if (modkeys[i].code == code) {
			*mods = modkeys[i].mods;
			return modkeys[i].key;
		}
	}
	if (code >= KEY_F(1) && code <= KEY_F(63)) {
		/* xterm: F13-F24 are shifted F1-F12, F25-F36 control, ... */
		static const int fmods[] = {0,
					    WRX_MOD_SHIFT,
					    WRX_MOD_CTRL,
					    WRX_MOD_CTRL | WRX_MOD_SHIFT,
					    WRX_MOD_ALT,
					    WRX_MOD_ALT | WRX_MOD_SHIFT};
		int n = code - KEY_F(1);
		*mods = fmods[n / 12];
		return WRX_K_F1 + n % 12;
	}
	if (code == KEY_BACKSPACE)
		return 127;
	if (code == KEY_ENTER)
		return '\r';
	return -1;
}

static int vterm_key_for(int key)
{
	switch (key) {
	case WRX_K_UP:
		return WRX_KEY_UP;
	case WRX_K_DOWN:
		return WRX_KEY_DOWN;
	case WRX_K_LEFT:
		return WRX_KEY_LEFT;
	case WRX_K_RIGHT:
		return WRX_KEY_RIGHT;
	case WRX_K_HOME:
		return WRX_KEY_HOME;
	case WRX_K_END:
		return WRX_KEY_END;
	case WRX_K_PPAGE:
		return WRX_KEY_PAGEUP;
	case WRX_K_NPAGE:
		return WRX_KEY_PAGEDOWN;
	case WRX_K_IC:
		return WRX_KEY_INS;
	case WRX_K_DC:
		return WRX_KEY_DEL;
	default:
		if (key >= WRX_K_F1 && key <= WRX_K_F12)
			return WRX_KEY_F(key - WRX_K_F1 + 1);
		return WRX_KEY_NONE;
	}
}

/* Send one key to a pane as the program expects it. */
static void forward(struct wpane *wp, int key, int mods)
{
	struct pane *p = wp->term;
	wp->last_key = now_ms(); /* a sandbox may read the clipboard just after (clipboard-read) */
	if (key == WRX_K_BTAB) {
		pane_key(p, WRX_KEY_TAB, WRX_MOD_SHIFT | mods);
		return;
	}
	int vk = vterm_key_for(key);
	if (vk != WRX_KEY_NONE) {
		pane_key(p, vk, mods);
		return;
	}
	if (key >= WRX_K_BASE)
		return;
	if (mods & WRX_MOD_ALT)
		pane_write(p, "\x1b", 1);
	pane_char(p, (uint32_t)key, 0);
}

static void prompt_key(struct ui *ui, int key)
{
	struct prompt *p = ui->prompt;
	if (p->yesno) {
		/* n is a no; any other key puts the question off (NULL). */
		if (key == 'y' || key == 'Y')
			ui_prompt_end(ui, "y");
		else if (key == 'q' && strstr(p->label, ACTIONS_QUEUE_ANSWER))
			ui_prompt_end(ui, "q");
		else
			ui_prompt_end(ui, key == 'n' || key == 'N' ? "n" : NULL);
		return;
	}
	if (key == 27 || key == 3 || key == 7) { /* Escape, C-c, C-g */
		ui_prompt_end(ui, NULL);
	} else if (key == '\r' || key == '\n') {
		char *answer = xstrdup(p->input.data ? p->input.data : "");
		ui_prompt_end(ui, answer);
		free(answer);
	} else if (key == 127 || key == 8) {
		while (p->input.len > 0 && (p->input.data[p->input.len - 1] & 0xc0) == 0x80)
			p->input.len--;
		if (p->input.len > 0)
			p->input.len--;
		if (p->input.data)
			p->input.data[p->input.len] = '\0';
	} else if (key == '\t' && p->complete) {
		char *to = p->complete(ui, p->input.data ? p->input.data : "");
		if (to) {
			buf_consume(&p->input, p->input.len);
			buf_addstr(&p->input, to);
			free(to);
		}
	} else if (key == 21) { /* C-u */
		buf_consume(&p->input, p->input.len);
	} else if (key >= 0x20 && key < WRX_K_BASE) {
		char u[4];
		buf_add(&p->input, u, (size_t)utf8_encode((uint32_t)key, u));
	}
	ui_dirty(ui);
}

static void run_binding(struct ui *ui, int key)
{
	const struct binding *b = bindings_lookup(key);
	if (b == NULL) {
		char name[32];
		ui_message(ui, true, "no binding for %s (C-b ? lists them)",
			   keys_name(key, name, sizeof name));
		return;
	}
	ui_action(ui, b->action, b->arg);
}

void input_key(struct ui *ui, int key, int mods)
{
	struct wpane *focus = session_focus(ui->w->s);
	int bkey = key | ((mods & WRX_MOD_ALT) ? WRX_K_META : 0);
	/* The view on top takes the keys; the help's even over a question. */
	const struct ui_mode *top = ui_mode_top(ui);
	if (top && top->ops->over_status) {
		top->ops->key(ui, top->data, key);
		return;
	}
	if (ui->prompt) {
		prompt_key(ui, key);
		return;
	}
	if (top) {
		top->ops->key(ui, top->data, key);
		return;
	}
	if (ui->prefix_armed) {
		ui->prefix_armed = false;
		ui_dirty(ui);
		run_binding(ui, bkey);
		return;
	}
	if (bkey == ui->w->cfg.prefix) {
		ui->prefix_armed = true;
		ui_dirty(ui);
		return;
	}
	if (focus == NULL)
		return;
	struct view *v = ui_view(focus);
	if (v->copy) {
		copy_key(ui, focus, key);
		return;
	}
	ui->last_input = now_ms();
	pty_expect_echo(uv_hrtime() + (uint64_t)TYPING_WINDOW_MS * 1000000);
	forward(focus, key, mods);
}

static struct wpane *pane_at(struct ui *ui, int y, int x)
{
	for (int i = 0; i < session_pane_count(ui->w->s); i++) {
		struct wpane *wp = session_pane(ui->w->s, i);
		struct rect r = ui_view(wp)->r;
		if (r.w > 0 && x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h)
			return wp;
	}
	return NULL;
}

static void handle_mouse(struct ui *ui)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	mmask_t b = ev.bstate;
	int mods = ((b & BUTTON_SHIFT) ? WRX_MOD_SHIFT : 0) | ((b & BUTTON_ALT) ? WRX_MOD_ALT : 0) |
		   ((b & BUTTON_CTRL) ? WRX_MOD_CTRL : 0);
	bool press = b & (BUTTON1_PRESSED | BUTTON2_PRESSED | BUTTON3_PRESSED);

	/* A click on the status line opens the question an agent waits on. */
	if (press && ev.y == ui->rows - 1 && ui_open_asked(ui))
		return;
	if (ui->sidebar && ev.x < ui->area.x - 1) {
		if (press && ev.y >= 0 && ev.y < ui->nsidebar_rows && ui->sidebar_rows[ev.y])
			session_set_focus(ui->w->s, ui->sidebar_rows[ev.y]);
		return;
	}
	struct wpane *wp = pane_at(ui, ev.y, ev.x);
	if (wp == NULL)
		return;
	struct view *v = ui_view(wp);
	int row = ev.y - v->r.y - 1, col = ev.x - v->r.x;
	bool wheel_up = b & BUTTON4_PRESSED, wheel_down = b & BUTTON5_PRESSED;

	if (press && wp != session_focus(ui->w->s))
		session_set_focus(ui->w->s, wp);
	if (pane_mouse_mode(wp->term) != WRX_MOUSE_NONE && !v->copy && row >= 0) {
		int button = 0;
		bool down = true;
		if (b & BUTTON1_PRESSED)
			button = 1;
		else if (b & BUTTON2_PRESSED)
			button = 2;
		else if (b & BUTTON3_PRESSED)
			button = 3;
		else if (wheel_up)
			button = 4;
		else if (wheel_down)
			button = 5;
		else if (b & BUTTON1_RELEASED)
			button = 1, down = false;
		else if (b & BUTTON2_RELEASED)
			button = 2, down = false;
		else if (b & BUTTON3_RELEASED)
			button = 3, down = false;
		pane_mouse(wp->term, row, col, button, down, mods);
		return;
	}
	if (wheel_up) {
		if (!v->copy)
			copy_enter(ui, wp, true);
		copy_scroll(ui, wp, 3);
	} else if (wheel_down && v->copy) {
		copy_scroll(ui, wp, -3);
	}
}

void input_read(struct ui *ui)
{
	wint_t wch;
	int rc;
	/* Bounded so a stuck terminal cannot hold the loop. */
	for (int n = 0; n < 4096 && (rc = wget_wch(ui->tty.inwin, &wch)) != ERR; n++) {
		if (ui->ending)
			continue; /* quit and end, its last keepers ending: keys go nowhere */
		if (rc == KEY_CODE_YES) {
			int code = (int)wch;
			if (code == KEY_WRX_PASTE_START) {
				ui->pasting = true;
				buf_consume(&ui->paste, ui->paste.len);
				continue;
			}
			if (code == KEY_WRX_PASTE_END) {
				ui->pasting = false;
				struct wpane *f = session_focus(ui->w->s);
				if (ui->prompt) {
					for (size_t i = 0; i < ui->paste.len; i++)
						if ((unsigned char)ui->paste.data[i] >= 0x20)
							buf_addch(&ui->prompt->input,
								  ui->paste.data[i]);
					ui_dirty(ui);
				} else if (f && !ui_view(f)->copy && ui->paste.len) {
					f->last_key = now_ms();
					pane_paste(f->term, ui->paste.data, ui->paste.len);
				} else if (f && !ui_view(f)->copy) {
					/*
					 * Empty: what many terminals send when the clipboard
					 * holds only an image. The image, if there is one;
					 * else the empty paste goes on as it came.
					 */
					json_object *args = json_object_new_object();
					json_object_object_add(args, "empty",
							       json_object_new_boolean(1));
					actions_call(ui->w, "paste-image", args, DOOR_UI, 0, NULL,
						     NULL);
				}
				buf_consume(&ui->paste, ui->paste.len);
				continue;
			}
			if (code == KEY_WRX_5522_YES || code == KEY_WRX_5522_NO) {
				termclip_answer(ui, code == KEY_WRX_5522_YES);
				continue;
			}
			if (code == KEY_WRX_FOCUS_IN || code == KEY_WRX_FOCUS_OUT) {
				struct wpane *f = session_focus(ui->w->s);
				if (f)
					pane_focus(f->term, code == KEY_WRX_FOCUS_IN);
				continue;
			}
			if (code == KEY_MOUSE) {
				handle_mouse(ui);
				continue;
			}
			if (code == KEY_RESIZE)
				continue;
			int mods, key = decode_code(code, &mods);
			if (key < 0)
				continue;
			if (ui->pasting) {
				if (key == '\r')
					buf_addch(&ui->paste, '\r');
				continue;
			}
			input_key(ui, key, mods);
			continue;
		}
		if (ui->pasting) {
			char u[4];
			buf_add(&ui->paste, u, (size_t)utf8_encode((uint32_t)wch, u));
			continue;
		}
		input_key(ui, (int)wch, 0);
	}
}
