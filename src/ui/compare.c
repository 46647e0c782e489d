/*
 * compare.c - the compare view (prefix =, SPEC §11): the focused agent's
 * group over the panes, one candidate a row: its agent, status, time,
 * changes, check and what the host would run of it.
 *
 * The rows come from a child, `workrex compare GROUP --json`, read whole
 * (never on the loop: git's work is the child's); the view asks again
 * when a check it started ends. j/k move, Enter shows the check's output,
 * r runs the check again, m merges the chosen one and removes the rest
 * (the core asks first: compare-merge), Q puts it in the merge queue, q
 * or Escape close. What a
 * candidate's check printed is drawn as text (diff_visible): a sandboxed
 * agent's output never reaches the terminal as sequences.
 */
#include "../core/children.h"
#include "../core/actions.h"
#include "../core/compare.h"
#include "../core/run.h"
#include "../git/diff.h"
#include "../util/json.h"
#include "ui.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_MAX (8u << 20) /* compare --json's output, at most */

struct compare;

/* A child's reader: outlives the view until the child ended. */
struct cfeed {
	struct ui *ui;
	struct compare *v; /* NULL: the view closed */
	struct buf out;
};

struct compare {
	char *group;       /* owned */
	char *focus;       /* owned: the handle the view opened on, chosen first */
	json_object *rows; /* the last answer (an array), or NULL */
	char *error;       /* owned: why there is none */
	struct cfeed *feed;
	int sel;
	bool checking; /* a check the view started runs */
};

static void ask(struct ui *ui, struct compare *v);

static void feed_output(void *arg, int stream, const char *p, size_t n)
{
	struct cfeed *f = arg;
	if (f->v && f->out.len + n <= ANSWER_MAX)
		buf_add(&f->out, p, n);
	(void)stream;
}

static long feed_backlog(void *arg)
{
	struct cfeed *f = arg;
	return f->v ? 0 : -1;
}

static int row_count(const struct compare *v)
{
	return v->rows ? (int)json_object_array_length(v->rows) : 0;
}

static void feed_exit(void *arg, int code)
{
	struct cfeed *f = arg;
	struct compare *v = f->v;
	if (v) {
		v->feed = NULL;
		buf_addch(&f->out, '\0');
		json_object *o = code == 0 ? json_tokener_parse(f->out.data) : NULL;
		free(v->error);
		v->error = NULL;
		if (o && json_object_is_type(o, json_type_array)) {
			json_object_put(v->rows);
			v->rows = o;
			for (int i = 0; i < row_count(v) && v->focus; i++) {
				json_object *h = json_object_object_get(
					json_object_array_get_idx(v->rows, i), "handle");
				if (h && !strcmp(json_object_get_string(h), v->focus))
					v->sel = i;
			}
			free(v->focus);
			v->focus = NULL;
		} else {
			json_object_put(o);
			const char *nl = strrchr(f->out.data, '\n');
			v->error = xstrdup(code == 0     ? "compare said nothing readable"
					   : nl && nl[1] ? nl + 1
							 : f->out.data);
		}
		v->sel = WRX_MIN(v->sel, WRX_MAX(row_count(v) - 1, 0));
		ui_dirty(f->ui);
	}
	buf_free(&f->out);
	free(f);
}

static void ask(struct ui *ui, struct compare *v)
{
	if (v->feed)
		return;
	char *const more[] = {v->group, "--json", NULL};
	char **argv = child_argv(ui->w, "compare", more);
	struct cfeed *f = xcalloc(1, sizeof *f);
	f->ui = ui;
	f->v = v;
	struct run_stream rs = {.argv = argv,
				.cwd = ui->w->root,
				.output = feed_output,
				.backlog = feed_backlog,
				.exit = feed_exit,
				.arg = f};
	int rc = run_stream(ui->w->loop, &rs);
	child_argv_free(argv);
	if (rc < 0) {
		free(f);
		free(v->error);
		v->error = xstrdup("workrex compare did not start");
		return;
	}
	v->feed = f;
}

static const struct mode_ops compare_mode;
static void compare_close(struct ui *ui);

/* The compare view open now, or NULL. */
static struct compare *compare_of(const struct ui *ui)
{
	return ui_mode(ui, &compare_mode);
}

void compare_open(struct ui *ui, const struct agent *a)
{
	compare_close(ui);
	if (a->git.group == NULL) {
		ui_message(ui, true, "compare: %s is in no group (add -n, -a twice or --foreach)",
			   a->handle);
		return;
	}
	struct compare *v = xcalloc(1, sizeof *v);
	v->group = xstrdup(a->git.group);
	v->focus = xstrdup(a->handle);
	ui_mode_open(ui, &compare_mode, v);
	ask(ui, v);
}

static void compare_close(struct ui *ui)
{
	ui_mode_close(ui, &compare_mode);
}

static void compare_free(struct ui *ui, void *data)
{
	struct compare *v = data;
	(void)ui;
	if (v->feed)
		v->feed->v = NULL; /* the child is killed at its next read */
	json_object_put(v->rows);
	free(v->group);
	free(v->focus);
	free(v->error);
	free(v);
}

/* ---- drawing ---- */

static const char *field(json_object *o, const char *k, const char *none)
{
	const char *v = json_str(o, k);
	return v ? v : none;
}

static long number(json_object *o, const char *k)
{
	return (long)json_long(o, k, -1);
}

/* Text at (y, x), at most w columns, its bytes as text. */
static void text(int y, int x, int w, const char *s)
{
	if (w <= 0)
		return;
	struct buf b = {0};
	diff_visible(s, strlen(s), &b);
	buf_addch(&b, '\0');
	mvaddnstr(y, x, b.data, w);
	buf_free(&b);
}

static void compare_draw(struct ui *ui, void *data)
{
	struct compare *v = data;
	if (ui->rows < 2 || ui->cols < 1)
		return;
	char *head = xasprintf(" compare %s  %d candidate%s%s  j/k, Enter its check's output, "
			       "r check again, m merge it and remove the rest, q closes",
			       v->group, row_count(v), row_count(v) == 1 ? "" : "s",
			       v->feed       ? "  reading..."
			       : v->checking ? "  checking..."
					     : "");
	attr_set(A_REVERSE, 0, NULL);
	mvhline(0, 0, ' ', ui->cols);
	text(0, 0, ui->cols, head);
	free(head);
	attr_set(A_BOLD, 0, NULL);
	move(1, 0);
	clrtoeol();
	text(1, 1, ui->cols - 1, compare_header());
	attr_set(A_NORMAL, 0, NULL);
	for (int y = 2; y < ui->rows - 1; y++) {
		int i = y - 2;
		move(y, 0);
		clrtoeol();
		if (i < row_count(v)) {
			char *row = compare_row(json_object_array_get_idx(v->rows, i));
			if (i == v->sel) {
				attr_set(A_REVERSE, 0, NULL);
				mvhline(y, 0, ' ', ui->cols);
			}
			text(y, 1, ui->cols - 1, row);
			attr_set(A_NORMAL, 0, NULL);
			free(row);
		} else if (i == row_count(v) + 1 && v->error) {
			text(y, 0, ui->cols, v->error);
		}
	}
}

/* ---- keys ---- */

static json_object *chosen(struct compare *v)
{
	return v->sel < row_count(v) ? json_object_array_get_idx(v->rows, v->sel) : NULL;
}

struct rechecking {
	struct ui *ui;
	char *group; /* owned: the view it was asked from, if it is still open */
};

static void rechecked(void *arg, int status, const char *output, const char *last)
{
	struct rechecking *k = arg;
	struct ui *ui = k->ui;
	(void)output;
	if (!ui->quitting) {
		ui_message(ui, status != 0, "%s", last);
		struct compare *v = compare_of(ui);
		if (v && !strcmp(v->group, k->group)) {
			v->checking = false;
			ask(ui, v);
		}
	}
	free(k->group);
	free(k);
}

static void check_again(struct ui *ui, struct compare *v, const char *handle)
{
	char *const more[] = {v->group, "--check", (char *)handle, NULL};
	char **argv = child_argv(ui->w, "compare", more);
	struct rechecking *k = xcalloc(1, sizeof *k);
	k->ui = ui;
	k->group = xstrdup(v->group);
	struct run_opts o = {.argv = argv, .cwd = ui->w->root, .done = rechecked, .arg = k};
	int rc = run_start(ui->w->loop, &o);
	child_argv_free(argv);
	if (rc < 0) {
		ui_message(ui, true, "compare: workrex compare --check did not start");
		free(k->group);
		free(k);
		return;
	}
	v->checking = true;
	ui_message(ui, false, "%s: its check runs", handle);
}

static void compare_key(struct ui *ui, void *data, int key)
{
	struct compare *v = data;
	json_object *o = chosen(v), *c = NULL;
	switch (view_key(VIEW_COMPARE, key)) {
	case V_DOWN:
		v->sel = WRX_MIN(v->sel + 1, WRX_MAX(row_count(v) - 1, 0));
		break;
	case V_UP:
		v->sel = WRX_MAX(v->sel - 1, 0);
		break;
	case V_OPEN:
		if (o == NULL)
			return;
		if (json_object_object_get_ex(o, "check", &c) && c) {
			char *title = xasprintf("check of %s: %s, exit %ld, %ld s, %s",
						field(o, "handle", "?"), field(c, "state", "?"),
						number(c, "code"), number(c, "seconds"),
						field(c, "where", "?"));
			/* Each line's bytes as text: the output is the candidate's. */
			struct buf b = {0};
			for (const char *p = field(c, "output", ""); *p;) {
				size_t n = strcspn(p, "\n");
				diff_visible(p, n, &b);
				buf_addch(&b, '\n');
				p += n + (p[n] == '\n');
			}
			buf_addch(&b, '\0');
			textview_open(ui, title, b.data);
			buf_free(&b);
			free(title);
		} else {
			ui_message(ui, true, "%s: no check ran yet (r runs it)",
				   field(o, "handle", "?"));
		}
		return;
	case V_CHECK:
		if (o)
			check_again(ui, v, field(o, "handle", "?"));
		break;
	case V_MERGE: {
		if (o == NULL)
			return;
		json_object *args = json_object_new_object();
		json_object_object_add(args, "handle",
				       json_object_new_string(field(o, "handle", "?")));
		compare_close(ui);
		actions_call(ui->w, "compare-merge", args, DOOR_UI, 0, NULL, NULL);
		return;
	}
	case V_QUEUE: {
		if (o == NULL)
			return;
		json_object *args = json_object_new_object();
		json_object_object_add(args, "handle",
				       json_object_new_string(field(o, "handle", "?")));
		actions_call(ui->w, "queue-add", args, DOOR_UI, 0, NULL, NULL);
		return;
	}
	case V_KEYS:
		view_keys_show(ui, VIEW_COMPARE);
		return;
	case V_CLOSE:
		compare_close(ui);
		return;
	default:
		return;
	}
	ui_dirty(ui);
}

static const struct mode_ops compare_mode = {
	.name = "compare",
	.draw = compare_draw,
	.key = compare_key,
	.free = compare_free,
};
