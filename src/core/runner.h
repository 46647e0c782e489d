/*
 * runner.h - where and how a pane's program runs: the state of runner.c's
 * rows (a pty, a keeper here, a keeper there) for one pane. The session
 * holds it opaque (struct wpane's runner) and makes and frees it; only
 * runner.c's rows and their helpers read it: remote.c (there), keep.c
 * (what keepers are told), sandbox.c (the container).
 */
#ifndef WRX_RUNNER_H
#define WRX_RUNNER_H

#include <stdbool.h>

struct keeper_conn;

struct runner {
	struct keeper_conn *keeper; /* the connection to the pane's keeper, or NULL */
	bool connecting;            /* its keeper is starting, or has not said hello yet */
	bool taken_over;            /* its keeper is an earlier dashboard's */
	char *container;            /* owned: the container it runs in, by name, or NULL */
	/*
	 * A pane on a server (remote.c): what the border says while it is not
	 * attached there ("connecting", "link lost"), or NULL; and its
	 * keeper's spec until the keeper runs there.
	 */
	char *link;        /* owned */
	char *remote_spec; /* owned JSON, or NULL */
};

#endif
