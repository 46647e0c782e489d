/*
 * provision.h - a host made by the user's own commands: remote.hosts.NAME.
 * provision {create, start, endpoint, stop, destroy}, argv templates run
 * here with {host}, {project} and {id} (the project's 8 hex digits)
 * expanded. endpoint prints the ssh destination (user@host, or
 * ssh://user@host:port); from there the link is the usual one.
 *
 * What each host is (made, half made) is kept in the state directory
 * (provision/HOST-ID), so that a step that failed is finished by the next
 * one, and rm of its last agent can destroy it. Every step says what it
 * does on stderr, and its output when it fails.
 */
#ifndef WRX_REMOTE_PROVISION_H
#define WRX_REMOTE_PROVISION_H

#include "../config/config.h"

#include <stdbool.h>

/* Is h provisioned (it has an endpoint command)? */
bool provision_used(const struct remote_host *h);
/* The destination endpoint said last, or NULL (not made yet). Caller frees. */
char *provision_dest(const struct remote_host *h, const char *root);
/*
 * Make h ready: created the first time (destroyed again if create fails,
 * or recorded as half made when destroy fails too), started (start, when
 * set), then asked its endpoint. 0 with *dest (owned), or -1 with *cause.
 */
int provision_up(const struct remote_host *h, const char *root, char **dest, char **cause);
/*
 * No agent of the project runs there now: stop it (when stop is set; its
 * record stays "made", and the next provision_up starts it). 1 stopped, 0
 * nothing to do, or -1 with *cause.
 */
int provision_stop(const struct remote_host *h, const char *root, char **cause);
/*
 * The host's last agent went: destroy it (when destroy is set). 0 (or
 * nothing to do), or -1 with *cause: it stays recorded, to be destroyed
 * by the next rm, or by hand.
 */
int provision_down(const struct remote_host *h, const char *root, char **cause);

#endif
