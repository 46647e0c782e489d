/*
 * hostexec.h - a sandboxed agent runs one of the user's host commands
 * (sandbox.host_commands: `just`, `cargo`, `npm`), SPEC §7.
 *
 * The caller is assumed hostile. Its request names a command and its
 * arguments, nothing else: the name must be well formed and on the list
 * of the global config (a project file cannot add one), the program is
 * the one the host's PATH finds, run by argv (never a shell), in the
 * agent's worktree, with a cleaned environment and /dev/null for stdin,
 * inside bubblewrap: the host read-only, host secrets (~/.ssh, ~/.aws,
 * credentials files, the runtime directory with workrex's own sockets)
 * masked, writes only to the worktree and the user's caches, the network
 * cut when the sandbox's policy is deny. Without bubblewrap it is refused
 * unless sandbox.dangerously_allow_unsandboxed_host_exec says otherwise.
 *
 * Output streams back as it comes; the producer stops reading the
 * command's pipes while the caller has a backlog (RPC_MAX_WRITE_QUEUE
 * would drop it), and kills the command when the caller goes away.
 */
#ifndef WRX_HOSTEXEC_H
#define WRX_HOSTEXEC_H

#include "../config/config.h"
#include "../util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#define HOSTEXEC_NOT_ALLOWED 127 /* not a name, or not on the list */
#define HOSTEXEC_NO_START 126    /* allowed, but it could not start */

/* ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ */
bool hostexec_name_ok(const char *name);
/* Well formed and on the config's host_commands. */
bool hostexec_allowed(const struct config *c, const char *name);

struct hostexec_spec {
	const char *prog;     /* the program, an absolute path */
	char *const *args;    /* its arguments (NULL-terminated; may be NULL) */
	const char *worktree; /* cwd, and the one place it may write besides caches */
	const char *home;     /* the user's home, whose secrets are masked */
	const char *runtime;  /* $XDG_RUNTIME_DIR, masked; may be NULL */
	bool network;         /* share the host's network (policy allow) */
	bool unsandboxed;     /* no bubblewrap: the user allowed it */
};

/* name's program on our PATH (an executable regular file), or NULL. Caller frees. */
char *hostexec_which(const char *name);
/* The argv that runs spec's command (bwrap's, unless unsandboxed), into out. */
void hostexec_argv(const struct hostexec_spec *s, struct strlist *out);
/* The environment it gets ("K=V" strings from ours, cleaned), into out. */
void hostexec_env(struct strlist *out);

/* stream: 1 stdout, 2 stderr. */
typedef void hostexec_output_fn(void *arg, int stream, const char *p, size_t n);
/* Bytes the caller has not taken yet, or -1: it went away (the command is killed). */
typedef long hostexec_backlog_fn(void *arg);
/* The exit status (128 + signal when killed), after all of its output. */
typedef void hostexec_exit_fn(void *arg, int code);

struct hostexec_run {
	char *const *argv;
	char *const *env;
	const char *cwd;
	hostexec_output_fn *output;
	hostexec_backlog_fn *backlog;
	hostexec_exit_fn *exit;
	void *arg;
};

/* Start it: 0, or -errno (exit is not called). */
int hostexec_start(uv_loop_t *loop, const struct hostexec_run *r);

#endif
