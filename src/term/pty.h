/*
 * pty.h - run a program on a pseudo-terminal and connect it to a pane.
 *
 * libuv cannot make a pty and its pipe reader loses the end of a child's
 * output on a pty master, so this uses forkpty() and one uv_poll_t per
 * master, with its own read loop (bounded per loop turn, so one flooding
 * program cannot starve the keyboard or the other panes) and its own write
 * queue. SIGCHLD is the owner's: it calls pty_reap() from its uv_signal_t.
 */
#ifndef WRX_PTY_H
#define WRX_PTY_H

#include "pane.h"

#include <sys/types.h>
#include <uv.h>

struct pty_spawn {
	char *const *argv; /* argv[0] looked up on PATH */
	const char *cwd;   /* NULL: inherit */
	char *const *env;  /* extra "NAME=value" entries set in the child; NULL-terminated */
};

/*
 * Start sp->argv on a new pty sized like the pane and attach it as the
 * pane's io. Returns 0 or -errno with *cause set (caller frees).
 */
int pty_start(uv_loop_t *loop, struct pane *p, const struct pty_spawn *sp, char **cause);

/* The program on p's pty, or -1. */
pid_t pty_pid(const struct pane *p);

/* Collect exited children we started; tells their panes. Call on SIGCHLD. */
void pty_reap(void);

/* Read budget per master per loop turn: bytes, and nanoseconds. */
#define PTY_READ_BUDGET (256 * 1024)
#define PTY_READ_NSEC (2 * 1000 * 1000)
/* The time budget while a key's echo is awaited (see pty_expect_echo). */
#define PTY_READ_NSEC_ECHO (500 * 1000)

/*
 * A key went to a pane and its echo is due: until uv_hrtime() reaches
 * until_ns, a flooding pane holds the loop for PTY_READ_NSEC_ECHO at a time,
 * so the echo is read (and drawn) sooner.
 */
void pty_expect_echo(uint64_t until_ns);

#endif
