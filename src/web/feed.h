/*
 * feed.h - a project's agents and their panes, followed for a web view.
 *
 * The feed is one more client of the keepers, like a dashboard, but one
 * that only watches: an observer of each keeper in the project's keeper
 * directory, whose mirror is held (no rows travel, sync.h) until a page
 * shows that pane. The agents are their records (worktree.h) with what
 * each agent pane's keeper says of it (status, since, title), which a
 * keeper tells its observers each time it changes. Keepers that come and
 * go are seen through the directory, watched, never polled: an idle
 * project costs the feed no wake-up.
 *
 * What changed is told through one callback: the list (FEED_AGENTS), or a
 * shown pane's screen (FEED_PANE), at most once a FEED_FRAME_MS per pane,
 * however fast its program prints.
 */
#ifndef WRX_WEB_FEED_H
#define WRX_WEB_FEED_H

#include "../util/util.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#define FEED_FRAME_MS 66

struct feed;
struct repo;
enum feed_what { FEED_AGENTS = 1, FEED_PANE };
typedef void feed_fn(struct feed *f, enum feed_what what, int pane, void *data);

/* Follow root's agents on loop (repo: root's, borrowed). NULL with *cause. */
struct feed *feed_new(uv_loop_t *loop, struct repo *repo, feed_fn *fn, void *data, char **cause);
/* Close it; the loop finishes closing its handles. */
void feed_free(struct feed *f);

/*
 * The agents as the sidebar has them (their records read again only when
 * keepers came or went, or feed_records_changed said): [{number, handle, branch, status,
 * since (epoch ms), title, group, sandboxed, remote, comments, panes:
 * [{pane, agent}]}], by number. Caller puts.
 */
json_object *feed_agents(struct feed *f);
/* The records changed (a page's action ended: a comment, a merge): read again, the list told. */
void feed_records_changed(struct feed *f);
/* Is handle an agent of the project (as the records were last read)? */
bool feed_known(struct feed *f, const char *handle);

/* A page shows pane (+1) or stopped (-1): only a shown pane's rows come. */
void feed_show(struct feed *f, int pane, int delta);
/*
 * pane's screen as a frame for a page, appended to out as JSON:
 * {"t":"pane","pane","rows","cols","title","cursor":[row,col,shown],
 *  "lines":{"ROW":[[text,fg,bg,attrs],...]}}, each row changed after
 * *since (0: all of them), colours as "#rrggbb" or null (the default).
 * *since moves on. False when there is no such pane or nothing changed.
 */
bool feed_frame(struct feed *f, int pane, uint64_t *since, int *rows, int *cols, struct buf *out);

#endif
