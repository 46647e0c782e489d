/*
 * modes.c - the views over the panes: the agents table, the review and
 * compare views, a text shown whole, the help. They stack: the top one
 * takes the keys (the help's even over a question), they are drawn from
 * the bottom up, and the panes under any of them show no cursor and no
 * rows of their own. A new view is one file with its mode_ops and one
 * binding that opens it.
 */
#include "ui.h"

#include <stdlib.h>
#include <string.h>

void ui_mode_open(struct ui *ui, const struct mode_ops *ops, void *data)
{
	ui_mode_close(ui, ops);     /* one of each: a new one replaces the old */
	if (ui->nmodes == UI_MODES) /* cannot be: there are fewer kinds */
		ui_mode_close(ui, ui->modes[0].ops);
	ui->modes[ui->nmodes++] = (struct ui_mode){ops, data};
	ui->frame.full_redraw = true;
	ui_dirty(ui);
}

void *ui_mode(const struct ui *ui, const struct mode_ops *ops)
{
	for (int i = 0; i < ui->nmodes; i++)
		if (ui->modes[i].ops == ops)
			return ui->modes[i].data;
	return NULL;
}

void ui_mode_close(struct ui *ui, const struct mode_ops *ops)
{
	for (int i = 0; i < ui->nmodes; i++) {
		if (ui->modes[i].ops != ops)
			continue;
		void *data = ui->modes[i].data;
		memmove(&ui->modes[i], &ui->modes[i + 1],
			(size_t)(ui->nmodes - i - 1) * sizeof *ui->modes);
		ui->nmodes--;
		ops->free(ui, data);
		ui->frame.full_redraw = true;
		if (!ui->quitting)
			ui_dirty(ui);
		return;
	}
}

void ui_modes_close_all(struct ui *ui)
{
	while (ui->nmodes > 0)
		ui_mode_close(ui, ui->modes[ui->nmodes - 1].ops);
}

const struct ui_mode *ui_mode_top(const struct ui *ui)
{
	return ui->nmodes ? &ui->modes[ui->nmodes - 1] : NULL;
}

void ui_modes_draw(struct ui *ui, bool over_status)
{
	for (int i = 0; i < ui->nmodes; i++)
		if (ui->modes[i].ops->over_status == over_status)
			ui->modes[i].ops->draw(ui, ui->modes[i].data);
}
