/*
 * boxed.h - a sandboxed agent's pane on a server (boxed.c): its container
 * made there as one is made here, and its commits brought onto its branch
 * there, verified.
 */
#ifndef WRX_REMOTE_BOXED_H
#define WRX_REMOTE_BOXED_H

#include "../git/git.h"

#include <json-c/json.h>
#include <stdbool.h>

/*
 * The keeper spec's part for a start request with "sandbox" (its settings:
 * config, agent, branch, session, proxy_token, runtime, git_name and
 * git_email): argv (the container's command line around argv, with env),
 * stop (what removes the container), container, rpc_dir, and for the
 * agent's pane rpc_socket and, under policy: deny, proxy. 0, or -errno
 * with *cause (a refusal says why).
 */
int remote_box_start(const struct repo *repo, json_object *req, char *const *argv, char *const *env,
		     json_object *spec, char **cause);
/* The agent's RPC directory there (made, 0700, with create), or NULL. Caller frees. */
char *remote_box_dir(const char *root, const char *handle, bool create, char **cause);
/* import {handle, branch, cwd}: its commits onto its branch in the clone, verified. */
json_object *remote_box_import(const struct repo *repo, json_object *req, char **cause);

#endif
