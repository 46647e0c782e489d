/*
 * client.h - the other end of a keeper's socket: dashboards and commands.
 *
 * keeper_open connects and says hello, blocking for a moment (a keeper
 * answers at once): what the keeper holds (keeper_info), and for a writer
 * or observer the whole pane, applied to a mirror (pane_mirror_new). Then
 * keeper_conn_new puts the socket on a loop: updates keep the mirror
 * current, and the mirror's io sends its keys, writes and size to the
 * keeper. Closing the mirror's io detaches: the keeper and its program go
 * on. keeper_conn_kill ends them.
 */
#ifndef WRX_KEEPER_CLIENT_H
#define WRX_KEEPER_CLIENT_H

#include "../term/pane.h"

#include <stdbool.h>
#include <uv.h>

struct keeper_info {
	int version;
	int pane;
	char *handle, *label, *token, *container; /* owned; NULL when not said */
	char *ports_refused; /* owned: the agent's ports its keeper could not listen on, or NULL */
	char *meta;          /* owned JSON, or NULL */
	bool sandboxed, agent_pane, exited;
	int status;
	int pid, keeper_pid;
	long egress_ok,
		egress_refused; /* its proxy's connections a dashboard was given; -1: none */
};
void keeper_info_free(struct keeper_info *info);

/*
 * Connect to the keeper at path as role ("writer", "observer", "query")
 * and read its hello, and with a mirror its first update into it. The
 * socket's fd, or -errno with *cause (-ENOENT, -ECONNREFUSED: nobody there).
 */
int keeper_open(const char *path, const char *role, struct pane *mirror, struct keeper_info *info,
		char **cause);

/* A frame to the keeper on a blocking fd from keeper_open: 0 or -errno. */
int keeper_send(int fd, int type, const void *data, size_t len);
/* A keeper that answered in a directory of them. */
struct keeper_entry {
	char *path; /* owned: its socket */
	struct keeper_info info;
	int fd;              /* keeper_open_all: its open socket (set it -1 to keep it), or -1 */
	struct pane *mirror; /* keeper_open_all: its pane as sent (set it NULL to keep it) */
};
/*
 * The keepers listening in dir, by pane id, each as its hello says (a
 * query: no pane is sent). A socket nobody listens on (its keeper died)
 * is removed; a keeper that does not answer is logged and left out.
 * Caller frees with keeper_list_free.
 */
size_t keeper_list(const char *dir, struct keeper_entry **out);
/* The same for one agent's keepers (handle NULL: all), others skipped by their links. */
size_t keeper_list_of(const char *dir, const char *handle, struct keeper_entry **out);
/*
 * The same, opened in role ("writer", "helper"), all at once: each entry's
 * fd open and its mirror (scrollback lines) holding the pane as sent.
 */
size_t keeper_open_all(const char *dir, const char *handle, const char *role, int scrollback,
		       struct keeper_entry **out);
/* Closes what the caller did not take. */
void keeper_list_free(struct keeper_entry *e, size_t n);
/* Does a keeper listen in dir? Connects until one does (no hello). */
bool keeper_any(const char *dir);

struct keeper_conn;
/* The keeper closed the connection or died: why (NULL: it just went). */
typedef void keeper_gone_fn(struct keeper_conn *c, const char *why, void *data);

/* fd on the loop, feeding mirror and carrying its io (pane_set_io). */
struct keeper_conn *keeper_conn_new(uv_loop_t *loop, int fd, struct pane *mirror,
				    keeper_gone_fn *gone, void *data);
/* A connection through the agent's proxy ended: its JSON (net/spec.h), data as given. */
typedef void keeper_egress_fn(struct keeper_conn *c, const char *json, size_t len, void *data);
void keeper_conn_on_egress(struct keeper_conn *c, keeper_egress_fn *fn);
/* An observer's: the keeper's meta (status, title...) each time it changed, as JSON. */
void keeper_conn_on_meta(struct keeper_conn *c, keeper_egress_fn *fn);
/*
 * Without waiting: connect to the keeper at path and send the hello as
 * role; the fd for keeper_conn_new, whose keeper_conn_on_hello hears the
 * answer on the loop (a keeper through a remote link answers a round trip
 * later). -errno with *cause.
 */
int keeper_conn_open(const char *path, const char *role, char **cause);
/* The keeper's hello (info valid during the call), once, on the loop. */
typedef void keeper_hello_fn(struct keeper_conn *c, const struct keeper_info *info, void *data);
void keeper_conn_on_hello(struct keeper_conn *c, keeper_hello_fn *fn);
/*
 * Let the mirror go (its io unset: it takes no more input, and is not
 * marked lost) and close the connection: a link that dropped, to be
 * made again with a new connection for the same mirror.
 */
void keeper_conn_release(struct keeper_conn *c);
/* Bytes queued for the keeper and not yet written? */
bool keeper_conn_pending(const struct keeper_conn *c);
/* Send a frame (KM_META, KM_SEEN...). */
void keeper_conn_send(struct keeper_conn *c, int type, const void *data, size_t len);
/*
 * End the keeper and its program, at once: KM_KILL (SIGTERM to the
 * keeper's pid, as given, when the socket cannot take it now); the
 * mirror's io closes as usual after.
 */
void keeper_conn_set_pid(struct keeper_conn *c, int pid);
void keeper_conn_kill(struct keeper_conn *c);

#endif
