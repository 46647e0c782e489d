/*
 * overview.c - the agents overview (prefix w): a table of every agent with
 * its status, panes and branch; j/k move, Enter focuses (opening the agent's
 * panes if needed), m merges, X removes, n starts a new agent, q leaves.
 */
#include "ui.h"

#include <stdlib.h>
#include <string.h>

struct overview {
	int sel; /* the row selected (rows are in display order) */
};

static const struct mode_ops overview_mode;
static void overview_close(struct ui *ui);

void overview_open(struct ui *ui)
{
	struct overview *o = xcalloc(1, sizeof *o);
	struct session *s = ui->w->s;
	struct wpane *focus = session_focus(s);
	int na = session_agent_count(s);
	int *order = xcalloc((size_t)WRX_MAX(na, 1), sizeof *order);
	ui_agent_order(ui, order);
	for (int i = 0; focus && i < na; i++)
		if (session_agent(s, order[i]) == focus->agent)
			o->sel = i;
	free(order);
	ui_mode_open(ui, &overview_mode, o);
}

static void overview_close(struct ui *ui)
{
	ui_mode_close(ui, &overview_mode);
}

static void overview_free(struct ui *ui, void *data)
{
	(void)ui;
	free(data);
}

/* The agent index shown on the selected row. */
static int selected_agent(struct ui *ui, const struct overview *o)
{
	int n = session_agent_count(ui->w->s);
	if (o->sel < 0 || o->sel >= n)
		return -1;
	int *order = xcalloc((size_t)n, sizeof *order);
	ui_agent_order(ui, order);
	int i = order[o->sel];
	free(order);
	return i;
}

/* The table's columns: where each begins, as the screen counts (an icon is one). */
enum {
	COL_NUM,
	COL_AGENT,
	COL_STATUS,
	COL_AGE,
	COL_PANES,
	COL_BACKEND,
	COL_BRANCH,
	COL_TITLE,
	NCOL
};
static const int col_w[NCOL] = {4, 21, 16, 5, 6, 10, 17, 0};

static void draw_row(int y, int w, const char *const cell[NCOL], attr_t a)
{
	attr_set(a, 0, NULL);
	mvhline(y, 0, ' ', w);
	for (int c = 0, x = 1; c < NCOL && x < w; x += col_w[c], c++)
		ui_put_text(y, x, col_w[c] ? WRX_MIN(col_w[c] - 1, w - x) : w - x, cell[c], a);
}

/*
 * The whole pane area, not a box over the panes: nothing of theirs shows
 * beside or through it.
 */
static void overview_draw(struct ui *ui, void *data)
{
	struct overview *o = data;
	int n = session_agent_count(ui->w->s);
	int w = ui->cols, h = ui->rows - 1;
	if (w < 10 || h < 3)
		return;
	o->sel = WRX_MAX(WRX_MIN(o->sel, n - 1), 0);
	for (int y = 0; y < h; y++) {
		attr_set(A_NORMAL, 0, NULL);
		mvhline(y, 0, ' ', w);
	}
	static const char *const head[NCOL] = {"#",     "AGENT",   "STATUS", "AGE",
					       "PANES", "BACKEND", "BRANCH", "TITLE"};
	draw_row(0, w, head, A_REVERSE);
	int *order = xcalloc((size_t)WRX_MAX(n, 1), sizeof *order);
	ui_agent_order(ui, order);
	uint64_t now = now_ms();
	for (int i = 0; i < n && i + 1 < h - 1; i++) {
		struct agent *a = session_agent(ui->w->s, order[i]);
		char age[16], num[16], panes[16];
		clock_age(a, age, sizeof age);
		snprintf(num, sizeof num, "%d", a->num);
		snprintf(panes, sizeof panes, "%d", session_agent_panes(ui->w->s, a));
		const char *icon = ui_status_icon(ui, a, now);
		char *status =
			xasprintf("%s%s%s", icon, *icon ? " " : "", ui_status_word(ui, a, now));
		const char *cell[NCOL] = {
			num,
			a->handle,
			status,
			age,
			panes,
			sandbox_wanted(ui->w, a) ? ui->w->cfg.sandbox.backend : "host",
			a->git.branch ? a->git.branch : (a->git.worktree ? "?" : "(main)"),
			a->title  ? a->title
			: a->note ? a->note
				  : ""};
		draw_row(1 + i, w, cell, i == o->sel ? A_REVERSE | A_BOLD : A_NORMAL);
		free(status);
	}
	free(order);
	attr_set(A_DIM, 0, NULL);
	mvaddnstr(h - 1, 1,
		  "j/k move  Enter focus  m merge  X remove  n new  R remove gone  q close", w - 1);
	attr_set(A_NORMAL, 0, NULL);
}

static void overview_key(struct ui *ui, void *data, int key)
{
	struct overview *o = data;
	int n = session_agent_count(ui->w->s);
	int sel = selected_agent(ui, o);
	struct agent *a = session_agent(ui->w->s, sel);
	enum view_op op = view_key(VIEW_AGENTS, key);
	switch (op) {
	case V_DOWN:
		if (o->sel + 1 < n)
			o->sel++;
		break;
	case V_UP:
		if (o->sel > 0)
			o->sel--;
		break;
	case V_OPEN:
		overview_close(ui);
		if (a)
			ui_action(ui, ACT_FOCUS_AGENT, session_agent(ui->w->s, sel)->num);
		break;
	case V_MERGE:
	case V_REMOVE:
		overview_close(ui);
		if (a && session_agent_panes(ui->w->s, a) == 0) {
			ui_open_agent(ui, a);
		} else if (a) {
			session_focus_agent(ui->w->s, sel);
		}
		prompts_agent_verb(ui, op == V_MERGE ? "merge" : "remove");
		break;
	case V_NEW_AGENT:
		overview_close(ui);
		prompts_new_agent(ui);
		break;
	case V_GONE:
		overview_close(ui);
		prompts_remove_gone(ui);
		break;
	case V_KEYS:
		view_keys_show(ui, VIEW_AGENTS);
		break;
	case V_CLOSE:
		overview_close(ui);
		break;
	default:
		break;
	}
	ui_dirty(ui);
}

static const struct mode_ops overview_mode = {
	.name = "agents",
	.draw = overview_draw,
	.key = overview_key,
	.free = overview_free,
};
