/*
 * proto.h - the keepers' wire: frames on a keeper's unix socket.
 *
 * A frame is a u32 length (of what follows), a u8 type, then its payload,
 * in this machine's byte order (both ends run here). Each side begins with
 * KM_HELLO, a JSON object with "version"; each speaks the older of the two
 * versions, and skips frame types it does not know, so that a newer
 * dashboard can talk to keepers an older workrex started.
 *
 * Client (a dashboard, `attach`, `watch`, `send`, `capture`) to keeper:
 *   KM_HELLO  {"version", "role": "writer" | "helper" | "observer" | "query"}
 *             (one writer: a new one takes over; a helper, a command run
 *             while no dashboard does, writes but does not resize)
 *   KM_INPUT  a key, character, mouse event, paste or focus (keeper_input_*)
 *   KM_WRITE  bytes for the program
 *   KM_RESIZE u16 rows, u16 cols
 *   KM_META   JSON the keeper keeps and gives back in its hello (status, title)
 *   KM_SEEN   the program's end was shown: the keeper may go
 *   KM_KILL   end the program and the keeper
 *   KM_POLICY {"allowed_domains": [...]}, from the writer: the agent's proxy
 *             matches the next requests against it (the user changed it)
 *   KM_VIEW   u8: 1, this client shows the pane (the start); 0, it does not:
 *             its updates are held (sync.h), at most one per HELD_MS,
 *             until a 1, which is answered at once with a full update
 * Keeper to client:
 *   KM_HELLO  {"version", "pane", "handle", "label", "pid", "keeper",
 *              "sandboxed", "agent_pane", "token", "meta", "exited", "status"}
 *   KM_UPDATE what changed in the pane (sync.h); the first is all of it
 *   KM_BYE    text: why the keeper closes this connection
 *   KM_ROLE   "observer": another writer took over; "writer": it went
 *   KM_CLIPBOARD the text the program wrote to the clipboard (OSC 52), to
 *             the writer only: the dashboard decides whether it is set
 *   KM_EGRESS a connection through the agent's proxy ended (net/spec.h's
 *             JSON), to the writer; kept (the last 200) while there is none
 *   KM_META   the meta as it is now, to each observer, whenever it changed
 *             (a web view follows an agent's status so)
 */
#ifndef WRX_KEEPER_PROTO_H
#define WRX_KEEPER_PROTO_H

#include "../term/pane.h"
#include "../util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#define KEEPER_VERSION 1
/* A frame larger than this is an error: no update comes near it. */
#define KEEPER_FRAME_MAX (256u * 1024 * 1024)

enum keeper_msg {
	KM_HELLO = 1,
	KM_UPDATE,
	KM_BYE,
	KM_INPUT,
	KM_WRITE,
	KM_RESIZE,
	KM_META,
	KM_SEEN,
	KM_KILL,
	KM_ROLE,
	KM_CLIPBOARD,
	KM_EGRESS,
	KM_POLICY,
	KM_VIEW,
};

/* Append a frame to out. */
void keeper_frame(struct buf *out, int type, const void *data, size_t len);
/* Or begin one, append its payload to out, and close it with what open returned. */
size_t keeper_frame_open(struct buf *out, int type);
void keeper_frame_close(struct buf *out, size_t at);
/*
 * The next whole frame in in from *off: 1 with its type and payload (valid
 * until in changes) and *off past it; 0 when more bytes are needed; -1 when
 * in holds no frame.
 */
int keeper_frame_next(const struct buf *in, size_t *off, int *type, const char **data, size_t *len);

/* Room for a read of up to chunk bytes at the end of in (a libuv alloc callback's). */
void keeper_read_room(struct buf *in, size_t chunk, uv_buf_t *b);
/*
 * A frame read, for keeper_frames_read: 0 to go on, non-zero to stop
 * there (1: the connection is gone or going; -1: the frame was wrong).
 */
typedef int keeper_frame_fn(void *arg, int type, const char *data, size_t len);
/*
 * n bytes read into keeper_read_room's room: each whole frame given to
 * fn in order, what fn took consumed. Both ends read so. 0 (more bytes
 * are needed), fn's non-zero answer (nothing consumed: the connection
 * goes), or -1 when in holds something that is no frame.
 */
int keeper_frames_read(struct buf *in, size_t n, keeper_frame_fn *fn, void *arg);

/* A mirror's input as a KM_INPUT payload, and back (0, or -1). */
void keeper_input_put(struct buf *out, const struct pane_input *in);
int keeper_input_get(const char *data, size_t len, struct pane_input *in);

/*
 * The directory of a project's keepers (made 0700, owner and mode
 * checked) and a pane's socket in it; caller frees. NULL + cause.
 */
char *keeper_dir(const char *root, char **cause);
char *keeper_path(const char *dir, int pane, char **cause);
/*
 * A file beside a keeper's socket "<pane>.sock": "<pane>.<ext>", or NULL
 * for a path not so named. Caller frees. Two are the keeper's own:
 *   agent  a symbolic link whose target is its agent's handle: who the
 *          keeper is for, read with no connection, so that a command about
 *          one agent asks only that agent's keepers. Made once it listens,
 *          removed as it ends; a keeper of an older start has none.
 *   rpc    the agent's RPC socket it serves while no dashboard holds it.
 */
char *keeper_beside(const char *socket, const char *ext);

/*
 * A keeper's key: what a writer or helper shows in its hello, besides
 * being the same user. It lives in the state directory (keys/, 0700),
 * never beside the socket: what can reach a socket cannot take a pane by
 * that alone. keeper_key_make writes a new one for socket into out
 * (RPC_TOKEN_LEN + 1 bytes); keeper_key_read reads it (-ENOENT: none, a
 * keeper started without one); keeper_key_forget removes it.
 */
int keeper_key_make(const char *socket, char *out);
int keeper_key_read(const char *socket, char *out);
void keeper_key_forget(const char *socket);

#endif
