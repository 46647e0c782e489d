/*
 * proc.h - running a program and waiting for it: the one blocking way,
 * for CLI commands (git, cp, hooks, a container runtime). On the loop,
 * core/run.h starts children instead.
 */
#ifndef WRX_PROC_H
#define WRX_PROC_H

#include <stdbool.h>
#include <sys/types.h>

#define PROC_INHERIT (-1) /* the fd as we have it */
#define PROC_NULL (-2)    /* /dev/null */

struct proc_opts {
	const char *dir;  /* chdir there first (126 if it cannot), or NULL */
	char *const *env; /* "NAME=value" set in the child, NULL-terminated, or NULL */
	int in, out, err; /* the child's 0, 1, 2: an fd, PROC_INHERIT or PROC_NULL */
	int keep;         /* an fd left open across exec (cleared of FD_CLOEXEC), or -1 */
	bool group;       /* a process group of its own (its children killed with it) */
};

#define PROC_OPTS_DEFAULT                                                                          \
	{                                                                                          \
		.in = PROC_INHERIT, .out = PROC_INHERIT, .err = PROC_INHERIT, .keep = -1           \
	}

/*
 * Start argv (argv[0] looked up on PATH). Returns its pid, or -errno when
 * it could not fork; a program that cannot be run exits 127, saying why on
 * its stderr.
 */
pid_t proc_spawn(char *const argv[], const struct proc_opts *o);
/* Wait for pid: its exit status, 128 + the signal that ended it, or -errno. */
int proc_wait(pid_t pid);
/* proc_spawn then proc_wait (stdout flushed first). */
int proc_run(char *const argv[], const struct proc_opts *o);

struct buf;
/*
 * Run argv with in (len bytes, or NULL: /dev/null) on its stdin and its
 * stdout and stderr gathered into out and err (either may be NULL: dropped),
 * all three at once, so that none fills while another waits. dir and env
 * as in o (its fds are ours here). timeout_ms > 0: it runs in a process
 * group of its own, killed whole (SIGKILL) when it runs longer, status
 * 128 + 9. Its exit status, or -errno.
 */
int proc_capture(char *const argv[], const struct proc_opts *o, const char *in, size_t len,
		 struct buf *out, struct buf *err, int timeout_ms);

#endif
