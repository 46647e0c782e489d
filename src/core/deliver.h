/*
 * deliver.h - text typed into a pane so that its program really takes it:
 * `send`, and the prompt of an agent whose CLI takes none on its command
 * line.
 *
 * Writing the text and Enter at once fails with the agent CLIs that
 * matter: a program slow to read gets both in one read, and a paste with
 * a carriage return in it is a newline in the input, not a submission.
 * So the text goes as a paste (bracketed when the program asked for it,
 * pane_paste), then we wait for the program to show it (its screen
 * changes) and go quiet, then Enter is written on its own, and we look
 * again: a screen that does not change, and a status that does not move,
 * mean it was not submitted, and the caller is told so rather than "ok".
 *
 * Each wait is bounded (DELIVER_*_MS); a timer ticks only while a delivery
 * is under way. The pane is looked up by id at each step: one that closes
 * meanwhile ends the delivery with a reason.
 */
#ifndef WRX_DELIVER_H
#define WRX_DELIVER_H

#include <stdbool.h>

#define DELIVER_STARTUP_MS 15000 /* a new agent: until its screen first settles */
#define DELIVER_REACT_MS 3000    /* after the text: until the screen shows it */
#define DELIVER_SETTLE_MS 150    /* ...and then stays still this long */
#define DELIVER_VERIFY_MS 3000   /* after Enter: until the screen or the status moves */

struct wrx;
struct wpane;

/* why: NULL when delivered (and submitted, with Enter); else what went wrong. */
typedef void deliver_done_fn(struct wrx *w, const char *why, void *arg);

/*
 * Type text (may be empty) into wp, then Enter when enter. startup: wp's
 * program has just started; wait until its screen settles first. done is
 * called once, later.
 */
void deliver_start(struct wrx *w, struct wpane *wp, const char *text, bool enter, bool startup,
		   deliver_done_fn *done, void *arg);

#endif
