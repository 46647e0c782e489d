/*
 * actions.h - every verb the application does for somebody, in one table
 * (actions.c): its arguments, who may call it, and what it needs first.
 *
 * A door decodes its caller's request into a verb and a JSON object of
 * arguments and calls actions_call; nothing else does the verb. The doors:
 *   ui       the dashboard: the user's keys (after the questions a key asks
 *            first: the branch of a new agent) and what it does on its own
 *            (a config file saved);
 *   control  the control socket: a workrex CLI command of the same user;
 *   agent    an agent's pane over RPC, authenticated by its token: it acts
 *            for that pane's agent, and only where the table lets it.
 * The git verbs (add, merge, remove) live in the CLI: their action runs
 * `workrex <verb>` as a child, so libgit2 never blocks the loop, and it is
 * the one place that builds that argv.
 *
 * Every call ends in one reply, one envelope whatever the door:
 * {"ok": true, ...fields} or {"ok": false, "error": "why"}. Each door
 * encodes it for its own wire (control.h, proto.h).
 */
#ifndef WRX_ACTIONS_H
#define WRX_ACTIONS_H

#include <json-c/json.h>
#include <stdbool.h>

struct wrx;

enum door {
	DOOR_UI = 1 << 0,
	DOOR_CONTROL = 1 << 1,
	DOOR_AGENT = 1 << 2,
};

/* The reply (taken). */
typedef void act_reply_fn(struct wrx *w, json_object *reply, void *arg);

/*
 * Do verb with args (taken; NULL: none) for door; from the agent door,
 * caller_pane is the calling pane. reply (NULL: none wanted) is called
 * once, now or later.
 */
void actions_call(struct wrx *w, const char *verb, json_object *args, enum door door,
		  int caller_pane, act_reply_fn *reply, void *arg);
/*
 * A verb's output while it runs (host-exec), for a caller that takes it
 * as it comes: stream 1 stdout, 2 stderr. backlog: the bytes the caller
 * has not taken yet, or -1 once it went away (the verb then stops).
 */
struct act_stream {
	void (*output)(void *arg, int stream, const char *p, size_t n);
	long (*backlog)(void *arg);
};
/* actions_call, with the output streamed (arg is reply's and stream's). */
void actions_call_stream(struct wrx *w, const char *verb, json_object *args, enum door door,
			 int caller_pane, act_reply_fn *reply, const struct act_stream *stream,
			 void *arg);
/*
 * The control door: a request {"cmd": verb, ...args}; done gets the
 * control socket's reply ({"ok": true, ...} or {"error": "why"}), now or
 * later (send waits for its text to be taken).
 */
void actions_control(struct wrx *w, json_object *req, act_reply_fn *done, void *arg);
/* The same, running the loop until the reply (a command's own core, tests). Caller puts. */
json_object *actions_control_wait(struct wrx *w, json_object *req);

/*
 * A control command's reply goes once the keepers it started here are up, so
 * that what the command started is there for the next one (a `shutdown`
 * right after an `add` ends its agent too). runner.c calls this as each start
 * ends, wrx_close as the core quits.
 */
void actions_started(struct wrx *w);
/* The verb an RPC request type (its wire name) calls, or NULL. */
const char *actions_for_rpc(const char *type);

/*
 * The questions C-b m asks before the user's merge, which the web view
 * asks in the same words: branch's merge, with what merge --preview said
 * (NULL: nothing); or, when the preview refused for uncommitted work
 * (its last line), whether to merge the commits anyway. Caller frees.
 */
char *actions_merge_question(const char *branch, const char *preview);
/* What the merge question says of its third answer, q: the agent to the merge queue. */
#define ACTIONS_QUEUE_ANSWER "q: to the merge queue"
char *actions_merge_anyway_question(const char *refused);

/* The envelope's error, or NULL when it says ok. */
const char *actions_error(json_object *reply);

#endif
