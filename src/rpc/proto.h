/*
 * proto.h - the RPC bridge's protocol (SPEC §7), without any event loop:
 * tokens, decoding a request line into a typed request, replies, and a
 * blocking client.
 *
 * The dashboard's server (server.c) and every client share this file: the
 * host CLI, the static guest client mounted into sandboxes, the fuzz target
 * and the tests. It needs json-c and libc only, so the guest can be linked
 * statically from it.
 */
#ifndef WRX_PROTO_H
#define WRX_PROTO_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define RPC_LINE_MAX (1024 * 1024) /* bytes in one line, newline excluded */
#define RPC_TOKEN_LEN 64           /* hex digits */
#define RPC_AUTH_LINE_MAX 256      /* the token line is small: refuse more before auth */
#define RPC_AUTH_TIMEOUT_MS 5000
#define RPC_JSON_DEPTH 16
#define RPC_TITLE_MAX 256
#define RPC_TEXT_MAX 4096
#define RPC_SESSION_MAX 128 /* an agent CLI's session id */
#define RPC_DIR_MAX 4096    /* the directory a hook ran in */
#define RPC_WHY_MAX 512     /* why an agent says it failed */

/* 32 random bytes as 64 lowercase hex digits; out has RPC_TOKEN_LEN + 1 bytes. 0 or -errno. */
int rpc_token_new(char *out);
/* Exactly 64 lowercase hex digits? */
bool rpc_token_wellformed(const char *s, size_t len);
/* Compare two tokens of RPC_TOKEN_LEN bytes in time independent of where they differ. */
bool rpc_token_equal(const char *a, const char *b);

/*
 * An agent CLI's session id, as its hooks report it (a UUID for Claude
 * Code, Codex and Gemini CLI): 1 to RPC_SESSION_MAX of [A-Za-z0-9._-], the
 * first alphanumeric (str_is_word). It ends up as a word of the agent's command
 * line (resume), so nothing else passes.
 */
bool rpc_session_wellformed(const char *s);

/* A blocking connection to the unix socket at path: the fd, or -errno with *cause. */
int rpc_connect_unix(const char *path, char **cause);

enum rpc_type {
	RPC_HEARTBEAT,
	RPC_SET_STATUS,
	RPC_SET_TITLE,
	RPC_NOTIFY,
	RPC_SPAWN_AGENT,
	RPC_MERGE,
	RPC_CLOSE,
	RPC_EXEC,
	RPC_CLIPBOARD_READ,
};

/* A decoded request; strings are borrowed from the JSON object it came from. */
/* What an agent's session used: tokens in and out, and its cost in micro-dollars (-1: not said). */
struct rpc_usage {
	int64_t in, out, cost_micro;
};

/* u as {in, out, cost_micro?}: how set_status says it and an agent's meta keeps it. */
json_object *rpc_usage_json(const struct rpc_usage *u);
/*
 * u as list --json and status --json show it (SPEC §12): {input_tokens,
 * output_tokens, cost_usd} with cost_usd absent where its CLI says none;
 * and back, from such an object (false: not one).
 */
json_object *rpc_usage_public(const struct rpc_usage *u);
bool rpc_usage_from_public(json_object *o, struct rpc_usage *u);
/* u in a few characters: "$0.42" where its cost is known, else "123k tok", "1.2M tok". */
void rpc_usage_short(const struct rpc_usage *u, char *out, size_t n);

struct rpc_req {
	enum rpc_type type;
	const char *status;  /* set_status: working|waiting|done|failed|clear */
	const char *session; /* set_status: the agent CLI's session id, or NULL */
	const char *dir;     /* set_status: where its hook ran (absolute), or NULL */
	int64_t at;          /* set_status: when its hook started (wall ms), or 0 */
	const char *why;     /* set_status failed: the reason (the CLI's error), or NULL */
	bool has_usage;      /* set_status: usage below was said */
	bool quota;          /* set_status waiting: for a rate limit or quota to reset */
	struct rpc_usage usage;
	const char *title;           /* set_title */
	const char *text;            /* notify (may be NULL) */
	const char *branch, *prompt; /* spawn_agent */
	bool background;
	const char *handle; /* merge, close: NULL means the caller's own agent */
	bool rebase, squash, keep;
	bool ignore_uncommitted; /* merge: its commits though its worktree has more */
	const char *command;     /* exec */
	const char **args;       /* exec; owned array of borrowed strings */
	size_t nargs;
	const char *mime; /* clipboard_read */
};

/*
 * The next whole line waiting in in (without its newline): 1 with *line
 * and *len (drop it with buf_consume(in, *len + 1) when done), 0 when no
 * line is whole yet, -EMSGSIZE when a line is (or will be) over cap bytes.
 */
struct buf;
int rpc_next_line(const struct buf *in, size_t cap, const char **line, size_t *len);

/*
 * Parse one line (without its newline) into a JSON object. NULL with *err
 * for malformed JSON, nesting deeper than RPC_JSON_DEPTH, or a non-object.
 */
json_object *rpc_parse_line(const char *line, size_t len, const char **err);
/* Decode and check a request object. 0, or -EINVAL with *err (a static string). */
int rpc_decode(json_object *obj, struct rpc_req *req, const char **err);
void rpc_req_free(struct rpc_req *req);
const char *rpc_type_name(enum rpc_type t);

/* Replies: {"type": "ok"} and {"type": "error", "message": m}. Caller puts. */
json_object *rpc_reply(const char *type);
json_object *rpc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- blocking line I/O, for clients ---- */

/* Write obj as one line. 0 or -errno. */
int rpc_send(int fd, json_object *obj);
/*
 * Read one line into *out (parsed) before deadline (now_ms clock). The
 * buffer keeps what follows the line for the next call. 0, -ETIMEDOUT,
 * -EPROTO (malformed), -EIO (closed).
 */
int rpc_recv(int fd, struct buf *in, uint64_t deadline, json_object **out);

/* ---- the client: what `workrex set-status` etc. use ---- */

/*
 * host: an IP address, or a name in /etc/hosts (no DNS: the static guest
 * cannot load glibc's resolver modules). 0, or -EHOSTUNREACH.
 */
int rpc_resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len);

struct rpc_client;

/*
 * Connect to the bridge named by the environment (WORKREX_RPC_SOCKET, or
 * WORKREX_RPC_HOST + WORKREX_RPC_PORT; WORKREX_RPC_TOKEN) and authenticate;
 * when that fails, to WORKREX_RPC_KEEPER if set (the pane's keeper, for an
 * agent on a server). -ENOENT when the environment names no bridge; other
 * -errno with *cause (why the first failed).
 */
int rpc_client_open_env(struct rpc_client **out, int timeout_ms, char **cause);
int rpc_client_open(struct rpc_client **out, const char *socket_path, const char *host,
		    const char *port, const char *token, int timeout_ms, char **cause);
/*
 * Send req and read replies until a final one (ok, error, output,
 * clipboard_data, exec_exit); each non-final reply (exec_stdout/stderr) goes
 * to on_partial if given. *reply is the final one; caller puts.
 */
int rpc_client_call(struct rpc_client *c, json_object *req, json_object **reply,
		    void (*on_partial)(json_object *r, void *arg), void *arg, int timeout_ms,
		    char **cause);
void rpc_client_close(struct rpc_client *c);

#endif
