/*
 * clock.c - what changes on the screen with time alone: status ages
 * ("3m") and the silence of a working agent (shown interrupted).
 *
 * One tick timer is armed for the nearest such change, and only while
 * some agent has a status, so an idle dashboard has no timers.
 */
#include "ui.h"

#include <stdio.h>

void clock_age(const struct agent *a, char *out, size_t len)
{
	if (a->status == WRX_STATUS_NONE) {
		*out = '\0';
		return;
	}
	uint64_t s = agent_status_age(a) / 1000;
	if (s < 60)
		snprintf(out, len, "<1m");
	else if (s < 3600)
		snprintf(out, len, "%um", (unsigned)(s / 60));
	else if (s < 86400)
		snprintf(out, len, "%uh", (unsigned)(s / 3600));
	else
		snprintf(out, len, "%ud", (unsigned)(s / 86400));
}

static void on_tick(uv_timer_t *t)
{
	ui_dirty(t->data); /* the frame re-arms the tick */
}

void clock_schedule_tick(struct ui *ui)
{
	if (ui->quitting)
		return;
	struct session *s = ui->w->s;
	uint64_t now = now_ms(), next = UINT64_MAX;
	for (int i = 0; i < session_agent_count(s); i++) {
		struct agent *a = session_agent(s, i);
		if (a->status == WRX_STATUS_NONE)
			continue;
		/* The age label changes at each whole minute (hours: each hour). */
		uint64_t age = agent_status_age(a);
		uint64_t step = age < 3600000 ? 60000 : 3600000;
		next = WRX_MIN(next, now + (step - age % step));
		if (a->status == WRX_STATUS_WORKING && !session_interrupted(s, a, now)) {
			struct wpane *wp = session_agent_pane(s, a);
			uint64_t quiet = WRX_MAX(wp ? wp->last_output : 0, now - WRX_MIN(now, age));
			next = WRX_MIN(next, quiet + WRX_SILENCE_MS);
		}
	}
	if (next == UINT64_MAX) {
		uv_timer_stop(&ui->timer.tick);
		return;
	}
	uv_timer_start(&ui->timer.tick, on_tick, next > now ? next - now + 5 : 5, 0);
}
