/*
 * cmd_rpc.h - commands that go over the RPC bridge (see cmd_rpc.c); shared
 * by the host binary and the static guest client.
 */
#ifndef WRX_CMD_RPC_H
#define WRX_CMD_RPC_H

#include "../rpc/proto.h"

#include <stdbool.h>

/* WORKREX_SANDBOX=1: add, merge, close go to the host over RPC. */
bool rpc_cmd_in_sandbox(void);

/* set-status's words: STATUS [--session ID] [--dir DIR]. 0, or -EINVAL. */
struct set_status_args {
	const char *status;
	const char *session; /* --session, else the event's, or NULL */
	const char *dir;     /* --dir, else the event's cwd, or NULL */
	const char *why;     /* failed: --why, else the event's error, or NULL */
	bool has_usage;      /* what its session used, from the event's transcript */
	struct rpc_usage usage;
	bool quota; /* waiting: for a rate limit or quota to reset (the reason says) */
};
int rpc_cmd_set_status_args(int argc, char **argv, struct set_status_args *out);
/* Does this process have the pane's bridge (a token, or a sandbox)? */
bool rpc_cmd_has_bridge(void);

int rpc_cmd_set_status(int argc, char **argv);
/* The same, from parsed arguments, saying nothing: 0, or non-zero and *said (caller frees). */
int rpc_cmd_set_status_try(const struct set_status_args *a, char **said);
int rpc_cmd_set_title(int argc, char **argv);
int rpc_cmd_notify(int argc, char **argv);
int rpc_cmd_add(int argc, char **argv);
int rpc_cmd_merge(int argc, char **argv);
int rpc_cmd_close(int argc, char **argv);
/* tool (xclip, wl-paste) inside a sandbox: the host clipboard's image, read only. */
int rpc_cmd_clipboard(const char *tool, int argc, char **argv);
/* Run an allow-listed host command; its output and exit status are ours. */
int rpc_cmd_host_exec(int argc, char **argv);

#endif
