/*
 * keeper.h - a process that holds one pane: its pty, its program, its
 * screen and history, while dashboards come and go.
 *
 * keeper_start runs `workrex __keeper` detached from the caller (double
 * fork, setsid, SIGHUP and SIGPIPE ignored, stdio on /dev/null) and waits
 * on an error pipe until the keeper listens on its socket and its program
 * runs, or says why not; keeper_start_async hears that on a loop. The keeper emulates the pane itself (a pane of
 * src/term/ on a pty), so a client that connects gets the whole pane at
 * once, then what changes (proto.h, sync.h). One client at a time writes
 * (a new writer takes over); any number watch. The keeper ends when told
 * to (KM_KILL), or once its program has ended and a writer has seen it.
 */
#ifndef WRX_KEEPER_H
#define WRX_KEEPER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

/*
 * What a keeper runs, as JSON (it travels through a pipe, never argv):
 * "argv", "cwd", "env" (strings "K=V"), "rows", "cols", "scrollback",
 * "socket", and what clients are told: "pane", "handle", "label",
 * "sandboxed", "agent_pane", "container". Its key: "key", or "make_key"
 * (it makes one and keeps it where keeper_key_read finds it). While no
 * dashboard holds it: "rpc_socket" (the agent's RPC, for the pane's
 * token), "mark" (the agent's mark, for a reported session id), "proxy".
 */
int keeper_start(const char *self_exe, json_object *spec, char **cause); /* SIGPIPE ignored */
/*
 * The same without waiting: done(arg, 0 or -errno, why) is called once,
 * on the loop, when the keeper listens or failed; or, now, -errno with
 * *cause and done never called. The loop's stall: a send to the spawner
 * (or without one, a vfork and a pipe write).
 */
typedef void keeper_started_fn(void *arg, int rc, const char *cause);
int keeper_start_async(uv_loop_t *loop, const char *self_exe, json_object *spec,
		       keeper_started_fn *done, void *arg, char **cause);

/*
 * For the spawner (spawner.h): a keeper's spec as text, spawned: its
 * answer pipe, or -errno with *cause; *first is the process to reap once
 * the pipe is passed on.
 */
int keeper_spawn_spec(const char *self_exe, const char *text, pid_t *first, char **cause);

/* `workrex __keeper`: the keeper itself, its spec on stdin. */
int keeper_main(void);

#endif
