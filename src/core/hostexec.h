/*
 * hostexec.h - a sandboxed agent runs one of the user's host commands
 * (sandbox.host_commands: `just`, `cargo`, `npm`), SPEC §7.
 *
 * The caller is assumed hostile. Its request names a command and its
 * arguments, nothing else: the name must be well formed and on the list
 * of the global config (a project file cannot add one), the program is
 * the one the host's PATH finds, run by argv (never a shell), in the
 * agent's worktree, with a cleaned environment and /dev/null for stdin.
 * Without bubblewrap it is refused unless
 * sandbox.dangerously_allow_unsandboxed_host_exec says otherwise.
 *
 * The box (bubblewrap, then guest/hostbox.c inside) is built from an
 * allow-list, whatever user workrex runs as:
 *   - namespaces of its own: user (no capability; uid 0 gains nothing),
 *     pid, ipc, uts, cgroup and network: loopback only, and the agent's
 *     proxy forwarded to 127.0.0.1:3128 as the container has it;
 *   - the system read-only (/usr, /etc less its secrets, /opt, /lib*),
 *     an empty home with only the toolchains a command needs (rustup,
 *     cargo's bin, nvm, pyenv, sdkman, sandbox.host_command_paths)
 *     read-only; /tmp, /run and the rest are empty;
 *   - the code as the container sees it: the worktree read-write, the main
 *     worktree and the git dir read-only with the credential-free config,
 *     the agent's private git dir, excluded_files hidden;
 *   - the user's caches (cargo, go, npm, pip, maven, gradle, ...)
 *     read-only, under a layer of the agent's own (an overlay; the layer
 *     lives in the agent's host-only directory and goes with it);
 *   - no mount, namespace, ptrace, keyring or bpf calls (seccomp); at
 *     most host_command_processes processes and host_command_memory
 *     resident, stopped after host_command_seconds; one at a time.
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

#define HOSTEXEC_BOX "/run/workrex" /* the box's own files */
/* The agent's proxy, in there; forwarded to 127.0.0.1:BACKEND_PROXY_PORT. */
#define HOSTEXEC_PROXY_SOCKET HOSTEXEC_BOX "/proxy.sock"

struct hostexec_spec {
	const char *prog;     /* the program, an absolute path */
	char *const *args;    /* its arguments (NULL-terminated; may be NULL) */
	const char *worktree; /* cwd, and the one place it may write besides its caches */
	const char *home;     /* the user's home: empty in there, but for toolchains */
	/* The code's git, as the container mounts it (backend.h); NULL: the worktree alone. */
	const char *project_root, *git_dir, *snapshot, *private_gitdir, *private_gitfile;
	const struct strlist *excluded; /* excluded_files, hidden; may be NULL */
	const struct strlist *paths;    /* host_command_paths, read-only; may be NULL */
	const char *layers; /* the agent's cache layers (host-only dir), made as needed */
	const char *guest;  /* workrex-guest, the box's first program */
	const char *proxy;  /* the proxy's socket on the host; NULL: no network at all */
	unsigned uid, gid;  /* ours: the command's in there */
	long procs;         /* at most this many processes */
	const struct strlist
		*cgroups; /* cgroups it joins before bwrap (hostexec_cgroups), or NULL */
	long long memory; /* bytes resident at most; 0: no limit */
	bool unsandboxed; /* no bubblewrap: the user allowed it */
};

/* The argv that runs spec's command (bwrap's, unless unsandboxed), into out. */
void hostexec_argv(const struct hostexec_spec *s, struct strlist *out);
/*
 * The environment it gets ("K=V" strings from ours, cleaned, HOME the
 * user's), into out; with a proxy, the proxy's variables for token.
 */
void hostexec_env(const char *proxy_token, struct strlist *out);
/*
 * Where we may (root, or a delegated cgroup): a cgroup of its own for
 * each of the pids and memory controllers, under ours, with those limits;
 * their directories into dirs (the spec's cgroups: the command joins each
 * before bwrap runs). None made is no error: the box's own watch and
 * RLIMIT_NPROC still hold. hostexec_cgroups_remove removes them after.
 */
void hostexec_cgroups(const char *name, long procs, long long memory, struct strlist *dirs);
void hostexec_cgroups_remove(struct strlist *dirs);
/* "8GiB", "512M": bytes, or 0 for anything else. */
long long hostexec_size(const char *s);

#endif
