/*
 * textview.c - a command's whole output over the pane area (the command
 * line, prefix :), as tmux shows a command's output in view mode. Up/Down
 * (j/k), PgUp/PgDn (space), g/G scroll; q, Escape or Enter close it.
 */
#include "ui.h"

#include <stdlib.h>
#include <string.h>

struct textview {
	char *title;  /* owned */
	char **lines; /* owned */
	int n;
	int top;
};

static const struct mode_ops textview_mode;
static void textview_close(struct ui *ui);

void textview_open(struct ui *ui, const char *title, const char *text)
{
	struct textview *t = xcalloc(1, sizeof *t);
	t->title = xstrdup(title);
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		t->lines = xrealloc(t->lines, (size_t)(t->n + 1) * sizeof *t->lines);
		t->lines[t->n++] = xstrndup(p, len);
		p += len + (p[len] == '\n');
	}
	ui_mode_open(ui, &textview_mode, t);
}

static void textview_close(struct ui *ui)
{
	ui_mode_close(ui, &textview_mode);
}

void view_keys_show(struct ui *ui, enum view_id v)
{
	struct buf b = {0};
	view_help(v, &b);
	char *title = xasprintf("keys of %s", view_name(v));
	textview_open(ui, title, b.data);
	free(title);
	buf_free(&b);
}

static void textview_free(struct ui *ui, void *data)
{
	struct textview *t = data;
	(void)ui;
	for (int i = 0; i < t->n; i++)
		free(t->lines[i]);
	free(t->lines);
	free(t->title);
	free(t);
}

/* Rows for text: the area less the title line. */
static int body_rows(const struct ui *ui)
{
	return WRX_MAX(ui->rows - 2, 1);
}

static void textview_draw(struct ui *ui, void *data)
{
	struct textview *t = data;
	int rows = body_rows(ui);
	if (ui->rows < 2 || ui->cols < 1)
		return;
	char *head = xasprintf(" %s  [%d-%d of %d]  q closes, arrows and PgUp/PgDn scroll",
			       t->title, t->n ? t->top + 1 : 0, WRX_MIN(t->top + rows, t->n), t->n);
	attr_set(A_REVERSE, 0, NULL);
	mvhline(0, 0, ' ', ui->cols);
	mvaddnstr(0, 0, head, ui->cols);
	free(head);
	attr_set(A_NORMAL, 0, NULL);
	for (int y = 0; y < rows; y++) {
		move(1 + y, 0);
		clrtoeol();
		if (t->top + y < t->n)
			mvaddnstr(1 + y, 0, t->lines[t->top + y], ui->cols);
	}
}

static void textview_key(struct ui *ui, void *data, int key)
{
	struct textview *t = data;
	int rows = body_rows(ui), last = WRX_MAX(t->n - rows, 0);
	switch (view_key(VIEW_TEXT, key)) {
	case V_CLOSE:
		textview_close(ui);
		return;
	case V_DOWN:
		t->top++;
		break;
	case V_UP:
		t->top--;
		break;
	case V_PAGE_DOWN:
		t->top += rows;
		break;
	case V_PAGE_UP:
		t->top -= rows;
		break;
	case V_TOP:
		t->top = 0;
		break;
	case V_END:
		t->top = last;
		break;
	default:
		return;
	}
	t->top = WRX_MAX(WRX_MIN(t->top, last), 0);
	ui_dirty(ui);
}

static const struct mode_ops textview_mode = {
	.name = "text",
	.draw = textview_draw,
	.key = textview_key,
	.free = textview_free,
};
