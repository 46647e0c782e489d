/*
 * link.h - reaching a server of remote.hosts: one ssh master connection
 * per project and host, the workrex there, calls to it, and the sockets
 * forwarded through the master.
 *
 * Everything here blocks: it runs in CLI commands (`add --remote`,
 * `merge`) and in the short children the dashboard starts for it
 * (`workrex __remote-up`, `__remote-start`, cmd_remote.c), never on a
 * loop. Every ssh goes through the master's control socket, so a call
 * costs a round trip, not a handshake:
 *
 *   ssh -f -N -M -o ControlPersist=60 ... -- dest      the master (link_up)
 *   ssh -S ctl -O forward -L here:there -- dest         a keeper's socket here
 *   ssh -S ctl -O forward -R there:here -- dest         the RPC bridge there
 *   ssh -S ctl -- dest "sh -c '...workrex __remote'"    a call, JSON in and out
 *
 * Nothing the user or the server says is ever put in a remote shell
 * line: the command is fixed (this build's content hash is its only
 * variable part, hex), and what a call needs travels as JSON on its
 * stdin. The destination comes after "--" (and config.c refuses one that
 * begins with '-'). The server needs the same kind of machine (this binary
 * is copied there, once per build, and must find its libraries there).
 */
#ifndef WRX_REMOTE_LINK_H
#define WRX_REMOTE_LINK_H

#include "../config/config.h"

#include <json-c/json.h>
#include <stdbool.h>

/* How long an idle master stays once its last connection closed. */
#define LINK_PERSIST_S 60
/* The version of the calls (server.c): a server of another speaks up. */
#define LINK_VERSION 1

struct remote_link {
	const struct remote_host *host; /* borrowed */
	char *dir;                      /* owned: ours for this project and host (0700) */
	char *ctl;                      /* owned: the master's control socket, in dir */
	char *id;                       /* owned: 8 hex, naming this project's things there */
	char *build; /* owned: this binary's content hash, hex; NULL until a call */
	char *self;  /* owned: what the server runs: workrex-server beside us, or this binary */
	char *dest;  /* owned: ssh's destination: host->ssh, or a provisioned host's endpoint */
	char *root;  /* owned: the project's, for a provisioned host's record */
};

/*
 * The link to host for the project at root: paths only, nothing read or
 * run (the core makes one on its loop). 0, or -errno with *cause.
 */
int link_init(struct remote_link *l, const struct remote_host *h, const char *root, char **cause);
void link_free(struct remote_link *l);
/* The host of that name in cfg, or NULL with *cause saying which there are. */
const struct remote_host *link_host(const struct config *cfg, const char *name, char **cause);

/* Does a master answer on the control socket now? */
bool link_alive(const struct remote_link *l);
/* A master up (started if none answers; a stale control socket removed). */
int link_up(struct remote_link *l, char **cause);
void link_exit_argv(const struct remote_link *l, struct strlist *out);

/*
 * Call the workrex there: req (taken) on its stdin, *reply its answer
 * ({"ok": true, ...}; an {"error"} answer is -EPROTO with *cause). This
 * build is copied there first when it is missing. 0, or -errno.
 */
int link_call(struct remote_link *l, json_object *req, json_object **reply, char **cause);
/* The same with n bytes of data after the request's line (a pasted image). */
int link_call_data(struct remote_link *l, json_object *req, const void *data, size_t n,
		   json_object **reply, char **cause);

/*
 * Agents' ports (config ports): 127.0.0.1:port here to the same there
 * (-L), for their dev servers, in one round trip. One the master has
 * already it takes again. 0, or -EIO with *cause (caller frees, NULL
 * before) naming each that something here holds.
 */
int link_forward_ports(const struct remote_link *l, const int *ports, size_t n, char **cause);
/* Forward: a socket here to one there (-L), or with reverse one there to here (-R). */
int link_forward(const struct remote_link *l, bool reverse, const char *here, const char *there,
		 char **cause);
/*
 * The same for n pairs, in one round trip; ok[i] says which worked. 0;
 * -EINVAL when a path is one ssh cannot take (a ':'), else -EIO, with
 * *cause (NULL before the call) for the first that did not.
 */
int link_forward_all(const struct remote_link *l, bool reverse, size_t n, const char *const *here,
		     const char *const *there, bool *ok, char **cause);
/* Where pane's keeper is forwarded to, here: dir/<pane>.sock. Caller frees. */
char *link_keeper_path(const struct remote_link *l, int pane);

/* The ssh command line through the master, up to the destination (caller frees the list). */
void link_ssh_argv(const struct remote_link *l, struct strlist *out);
/* "GIT_SSH_COMMAND=..." for git through the master, and the clone's URL. Caller frees. */
char *link_git_env(const struct remote_link *l);
char *link_git_url(const struct remote_link *l);

#endif
