/*
 * sync.h - a pane's state as bytes, for a mirror in another process.
 *
 * A keeper (keeper.c) emulates its pane; a dashboard holds a mirror of it
 * (pane_mirror_new). An update says what changed since the last one this
 * client was sent: the rows changed, the lines pushed to the history (or
 * all of it, when a reflow rewrote it), the cursor, the modes a viewer
 * needs, the title, the exit. The first update to a client is the whole
 * pane. Rows and history lines travel in the scrollback's own encoding
 * (sb_line_data), so history costs a copy, not a conversion.
 *
 * A client that does not show the pane takes held updates: the cursor,
 * modes, title, exit and events, never its rows or history, which wait
 * until it shows the pane again (the next full update brings them).
 */
#ifndef WRX_SYNC_H
#define WRX_SYNC_H

#include "../term/pane.h"
#include "../util/util.h"

#include <stdbool.h>
#include <stdint.h>

/* What one client was last sent; zero: nothing yet. */
struct sync_since {
	bool sent;
	uint64_t serial;
	uint64_t pushed, gen;
	int rows, cols;
	int state[8];   /* the cursor, modes and exit sent */
	uint32_t title; /* and the title's hash */
	bool force;     /* send the next update even if nothing changed (an answer) */
};
#define SYNC_STATE 8

/*
 * Append to out what changed in p since *since, with events (PANE_EV_*)
 * gathered for this client meanwhile; *since moves on. False, and out as it
 * was, when there is nothing to send. held: rows and history stay owed
 * (never the first update).
 */
bool sync_write(struct pane *p, struct sync_since *since, int events, bool held, struct buf *out);

/* Apply an update to a mirror; 0, or -1 when data is not one (the mirror may be half done). */
int sync_apply(struct pane *mirror, const char *data, size_t len);

#endif
