/*
 * server.h - the server's end of a remote link: `workrex __remote`, which
 * link_call runs there through ssh, one request per run.
 *
 * A request is one JSON object on stdin ({"op", "version", ...}), on a
 * line of its own when data follows it (paste); the answer is one on
 * stdout, {"ok": true, ...} or {"error": "why"}. The ops:
 *
 *   hello    {path, id}        the keepers of the clone at path, and the
 *                              socket the link's RPC bridge is forwarded to
 *                              (a dead one left by a dropped link removed)
 *   prepare  {path}            the clone there, made (git init) if missing
 *   add      {path, branch, handle, base, prompt, post_create}
 *                              the agent's worktree, from the branch pushed
 *                              there; its prompt; post_create run in it
 *   start    {path, id, pane, cwd, argv, env, rows, cols, scrollback,
 *             handle, label, agent_pane, sandbox}
 *                              a keeper for the pane, running argv there;
 *                              with sandbox, in a container there (boxed.h)
 *   import   {path, handle, branch, cwd}
 *                              a sandboxed agent's commits onto its branch
 *                              in the clone, verified (git/private.h)
 *   status   {cwd}             uncommitted changes in the worktree?
 *   remove   {path, handle, run_hooks, pre_remove, keep_branch}
 *                              the agent's keepers ended, pre_remove run,
 *                              its worktree (and branch) removed
 *   kill     {path, panes}     those keepers ended (closed while the link
 *                              was down)
 *   paste    {path, handle} + an image
 *                              staged in the agent's worktree (image.h):
 *                              the file's path there
 *
 * The server's sockets live under WORKREX_RUNTIME_DIR, which is set here
 * to /tmp/workrex-<uid> unless the user set it: logind removes
 * $XDG_RUNTIME_DIR when a user's last session ends, which is exactly when
 * the link drops, and the keepers' sockets would go with it.
 */
#ifndef WRX_REMOTE_SERVER_H
#define WRX_REMOTE_SERVER_H

#include <json-c/json.h>

/* `workrex __remote`: one request, one answer. The exit status is 0 once answered. */
int remote_serve(void);
/* The answer to req (borrowed; NULL: not JSON), with n bytes of data after it. Caller puts. */
json_object *remote_op(json_object *req, const void *data, size_t n);

#endif
