/*
 * deliver.c - see deliver.h. One delivery is a small state machine on a
 * timer of its own: startup (a new agent settles), react (the text shows),
 * settle (and goes quiet), verify (Enter changed something).
 */
#include "deliver.h"

#include "../util/util.h"
#include "wrx.h"

#include <stdlib.h>
#include <string.h>

#define TICK_MS 20

enum phase { STARTUP, REACT, SETTLE, VERIFY };

struct delivery {
	uv_timer_t timer;
	struct wrx *w;
	int pane; /* by id: the pane may close meanwhile */
	char *text;
	bool enter;
	enum phase phase;
	uint64_t since;   /* now_ms() when this phase began */
	uint64_t changes; /* the pane's screen changes seen last */
	uint64_t quiet;   /* now_ms() since which they did not move */
	enum wrx_status status;
	deliver_done_fn *done;
	void *arg;
};

static void closed(uv_handle_t *h)
{
	struct delivery *d = h->data;
	free(d->text);
	free(d);
}

static void finish(struct delivery *d, const char *why)
{
	uv_timer_stop(&d->timer);
	struct wpane *wp = session_find_pane(d->w->s, d->pane);
	if (wp)
		session_pane_want(wp, false);
	d->done(d->w, why, d->arg);
	uv_close((uv_handle_t *)&d->timer, closed);
}

static void phase(struct delivery *d, struct wpane *wp, enum phase p)
{
	d->phase = p;
	d->since = d->quiet = now_ms();
	d->changes = wp->changes;
	d->status = wp->agent->status;
}

/* The text as a paste: its own screen changes are what react waits for. */
static void type_text(struct delivery *d, struct wpane *wp)
{
	if (d->text[0] == '\0') {
		phase(d, wp, SETTLE);
		return;
	}
	phase(d, wp, REACT);
	pane_paste(wp->term, d->text, strlen(d->text));
}

static void press_enter(struct delivery *d, struct wpane *wp)
{
	if (!d->enter) {
		finish(d, NULL);
		return;
	}
	phase(d, wp, VERIFY);
	pane_write(wp->term, "\r", 1);
}

static void tick(uv_timer_t *t)
{
	struct delivery *d = t->data;
	struct wpane *wp = session_find_pane(d->w->s, d->pane);
	if (wp == NULL || pane_exited(wp->term, NULL)) {
		/* After Enter, ending is an answer too (`exit`, a command run to its end). */
		finish(d, d->phase == VERIFY ? NULL : wp ? "its program ended" : "its pane closed");
		return;
	}
	uint64_t now = now_ms();
	bool moved = wp->changes != d->changes;
	if (moved) {
		d->changes = wp->changes;
		d->quiet = now;
	}
	switch (d->phase) {
	case STARTUP:
		/* Drawn at least once, then still: it is waiting for input. */
		if ((wp->changes > 0 && now - d->quiet >= 4 * DELIVER_SETTLE_MS) ||
		    now - d->since >= DELIVER_STARTUP_MS)
			type_text(d, wp);
		break;
	case REACT:
		if (moved)
			d->phase = SETTLE;
		else if (now - d->since >= DELIVER_REACT_MS)
			press_enter(
				d,
				wp); /* it shows nothing (a password prompt): Enter all the same */
		break;
	case SETTLE:
		if (now - d->quiet >= DELIVER_SETTLE_MS || now - d->since >= DELIVER_REACT_MS)
			press_enter(d, wp);
		break;
	case VERIFY:
		if (moved || wp->agent->status != d->status)
			finish(d, NULL);
		else if (now - d->since >= DELIVER_VERIFY_MS)
			finish(d, "not submitted: nothing changed on its screen after Enter");
		break;
	}
}

void deliver_start(struct wrx *w, struct wpane *wp, const char *text, bool enter, bool startup,
		   deliver_done_fn *done, void *arg)
{
	struct delivery *d = xcalloc(1, sizeof *d);
	d->w = w;
	d->pane = wp->id;
	d->text = xstrdup(text ? text : "");
	d->enter = enter;
	d->done = done;
	d->arg = arg;
	uv_timer_init(w->loop, &d->timer);
	d->timer.data = d;
	/* Its screen is what tells: shown exact meanwhile, whether on the screen or not. */
	session_pane_want(wp, true);
	if (startup)
		phase(d, wp, STARTUP);
	else
		type_text(d, wp);
	uv_timer_start(&d->timer, tick, TICK_MS, TICK_MS);
}
