/*
 * portfwd.h - a sandboxed agent's ports on the host's loopback, relayed
 * into its container (portfwd.c); its agent pane's keeper runs them. The
 * spec, as the dashboard hands it to the keeper:
 *
 *   {"ports": [30100, ...],
 *    "dir": path,                 the host directory of the guest's sockets
 *    "exec": ["podman", "exec", "-i", CONTAINER, ".../workrex", "port-connect"]}
 *                                 where there is no socket: the port goes last
 */
#ifndef WRX_NET_PORTFWD_H
#define WRX_NET_PORTFWD_H

#include <json-c/json.h>
#include <stddef.h>
#include <uv.h>

struct portfwd_spec {
	int *ports; /* owned */
	size_t n;
	char *dir;   /* owned, or NULL */
	char **exec; /* owned, or NULL */
};

/* The spec of ports ("30100,30101"), dir and exec (either may be NULL). */
json_object *portfwd_spec_json(const char *ports, const char *dir, char *const *exec);
/* 0, or -EINVAL with *cause (caller frees); s is always freed with portfwd_spec_free. */
int portfwd_spec_read(json_object *o, struct portfwd_spec *s, char **cause);
void portfwd_spec_free(struct portfwd_spec *s);

struct portfwd;
/*
 * Listen on 127.0.0.1:PORT for each of s's ports. Those that cannot be
 * listened on are said in *refused ("30100: address already in use; ...",
 * caller frees; NULL: none). NULL when none is listened on.
 */
struct portfwd *portfwd_start(uv_loop_t *loop, const struct portfwd_spec *s, char **refused);
/* No more connections (those open run to their end); it is freed once closed. */
void portfwd_stop(struct portfwd *f);

#endif
