/*
 * control.h - the control socket: how CLI commands reach a running
 * dashboard for the same project.
 *
 * A unix socket in a 0700 directory under $XDG_RUNTIME_DIR/workrex/ (or a
 * private directory under /tmp), named for the project. The protocol is
 * JSON lines: one request object with "cmd", one reply object with "ok":
 * true or "error": "message". Only the user can reach the directory. The
 * dashboard serves it with the RPC server (server.h), so agent panes'
 * token-authenticated requests arrive on the same socket.
 */
#ifndef WRX_CONTROL_H
#define WRX_CONTROL_H

#include <json-c/json.h>

/*
 * The directory of the sockets (made 0700, owner checked): $WORKREX_RUNTIME_DIR,
 * else $XDG_RUNTIME_DIR/workrex, else /tmp/workrex-<uid>. Caller frees.
 */
char *control_dir(char **cause);
/* The socket path for a project root (or plain directory); caller frees. NULL + cause on error. */
char *control_path(const char *root, char **cause);

/*
 * Client side (blocking, for CLI commands): send req, wait for the reply.
 * Returns 0 with *reply set, -ENOENT when no dashboard listens, or another
 * negative errno with *cause.
 */
int control_request(const char *path, json_object *req, json_object **reply, int timeout_ms,
		    char **cause);

#endif
