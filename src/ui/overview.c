/*
 * overview.c - the agents overview (prefix w): a table of every agent with
 * its status, panes and branch; j/k move, Enter focuses (opening the agent's
 * panes if needed), m merges, X removes, n starts a new agent, q leaves.
 */
#include "ui.h"

#include <stdlib.h>
#include <string.h>

/* The agent index shown on row ui->ov_sel (rows are in display order). */
static int selected_agent(struct ui *ui)
{
	int n = session_agent_count(ui->w->s);
	if (ui->ov_sel < 0 || ui->ov_sel >= n)
		return -1;
	int *order = xcalloc((size_t)n, sizeof *order);
	ui_agent_order(ui, order);
	int i = order[ui->ov_sel];
	free(order);
	return i;
}

void overview_draw(struct ui *ui)
{
	int n = session_agent_count(ui->w->s);
	int w = WRX_MIN(ui->cols, 90), h = WRX_MIN(ui->rows - 1, n + 4);
	if (w < 10 || h < 3)
		return;
	int x0 = (ui->cols - w) / 2, y0 = WRX_MAX((ui->rows - 1 - h) / 2, 0);
	if (ui->ov_sel >= n)
		ui->ov_sel = n - 1;
	if (ui->ov_sel < 0)
		ui->ov_sel = 0;
	for (int y = 0; y < h; y++) {
		attr_set(A_REVERSE, 0, NULL);
		mvhline(y0 + y, x0, ' ', w);
	}
	char *head = xasprintf(" %-3s %-20s %-12s %-4s %-5s %-9s %-16s %s", "#", "AGENT", "STATUS",
			       "AGE", "PANES", "BACKEND", "BRANCH", "TITLE");
	mvaddnstr(y0, x0, head, w);
	free(head);
	int *order = xcalloc((size_t)WRX_MAX(n, 1), sizeof *order);
	ui_agent_order(ui, order);
	uint64_t now = now_ms();
	for (int i = 0; i < n && i + 1 < h - 1; i++) {
		struct agent *a = session_agent(ui->w->s, order[i]);
		char age[16];
		clock_age(a, age, sizeof age);
		const char *icon = ui_status_icon(ui, a, now);
		char *status =
			xasprintf("%s%s%s", icon, *icon ? " " : "", ui_status_word(ui, a, now));
		char *line = xasprintf(
			" %-3d %-20.20s %-12s %-4s %-5d %-9s %-16.16s %s", a->num, a->handle,
			status, age, session_agent_panes(ui->w->s, a),
			sandbox_wanted(ui->w, a) ? ui->w->cfg.sandbox.backend : "host",
			a->git.branch ? a->git.branch : (a->git.worktree ? "?" : "(main)"),
			a->title  ? a->title
			: a->note ? a->note
				  : "");
		free(status);
		attr_set(i == ui->ov_sel ? A_BOLD : A_REVERSE, 0, NULL);
		if (i == ui->ov_sel)
			mvhline(y0 + 1 + i, x0, ' ', w);
		mvaddnstr(y0 + 1 + i, x0, line, w);
		free(line);
	}
	free(order);
	attr_set(A_REVERSE | A_DIM, 0, NULL);
	mvaddnstr(y0 + h - 1, x0,
		  " j/k move  Enter focus  m merge  X remove  n new  R remove gone  q close", w);
	attr_set(A_NORMAL, 0, NULL);
}

void overview_key(struct ui *ui, int key)
{
	int n = session_agent_count(ui->w->s);
	int sel = selected_agent(ui);
	struct agent *a = session_agent(ui->w->s, sel);
	switch (key) {
	case 'j':
	case WRX_K_DOWN:
		if (ui->ov_sel + 1 < n)
			ui->ov_sel++;
		break;
	case 'k':
	case WRX_K_UP:
		if (ui->ov_sel > 0)
			ui->ov_sel--;
		break;
	case '\r':
	case '\n':
		ui->overview = false;
		ui->full_redraw = true;
		if (a)
			ui_action(ui, ACT_FOCUS_AGENT, session_agent(ui->w->s, sel)->num);
		break;
	case 'm':
	case 'X':
		ui->overview = false;
		ui->full_redraw = true;
		if (a && session_agent_panes(ui->w->s, a) == 0) {
			ui_open_agent(ui, a);
		} else if (a) {
			session_focus_agent(ui->w->s, sel);
		}
		prompts_agent_verb(ui, key == 'm' ? "merge" : "remove");
		break;
	case 'n':
		ui->overview = false;
		ui->full_redraw = true;
		prompts_new_agent(ui);
		break;
	case 'R':
		ui->overview = false;
		ui->full_redraw = true;
		prompts_remove_gone(ui);
		break;
	case 'q':
	case 27:
		ui->overview = false;
		ui->full_redraw = true;
		break;
	default:
		break;
	}
	ui_dirty(ui);
}
