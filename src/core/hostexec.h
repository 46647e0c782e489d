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
 * It runs through run_stream (run.h): its output streams back as it
 * comes, it waits while the caller has a backlog (RPC_MAX_WRITE_QUEUE
 * would drop it) and is killed when the caller goes away.
 */
#ifndef WRX_HOSTEXEC_H
#define WRX_HOSTEXEC_H

#include "../config/config.h"
#include "../util/util.h"

#include <stdbool.h>

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

#endif
