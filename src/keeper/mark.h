/*
 * mark.h - an agent's mark: the file <private agent dir>/kept, there while
 * its keepers run and left by a reboot, which they do not outlive (a
 * dashboard then opens the agent again, core/runner.c). It holds what the
 * agent was, for that start:
 *
 *   line 1: the agent CLI's session id, to resume (empty: none known)
 *   line 2: its meta, the JSON its keeper holds (keeper/proto.h, KM_META):
 *           status, since (ms since the epoch), failure, title, note
 *
 * A mark of one line (older builds) is a session id alone. Its writers
 * (the dashboard, and the keeper while no dashboard runs) write it whole:
 * under a name of their own, renamed over it.
 */
#ifndef WRX_KEEPER_MARK_H
#define WRX_KEEPER_MARK_H

#include <stdbool.h>

/*
 * The mark at path made to say session (NULL: none) and meta (NULL: none).
 * create false: only a mark that is there (one a closed agent's dashboard
 * removed stays removed). 0, or -errno (-ENOENT: no mark).
 */
int mark_write(const char *path, const char *session, const char *meta, bool create);

/* The session id (a well-formed one, or NULL) and meta (or NULL) of path's mark: 0 or -errno. */
int mark_read(const char *path, char **session, char **meta);

#endif
