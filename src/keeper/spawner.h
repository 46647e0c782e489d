/*
 * spawner.h - processes started off the loop.
 *
 * Starting a process stalls its parent until the child has exec'd: 1 to 5
 * ms on a busy machine for a vfork, more for a fork of a dashboard that
 * holds many panes. A dashboard's starts (keepers, and every command it
 * runs: a diff, a merge, git apply) go through a process of its own
 * instead, `workrex __spawner`, started once while the dashboard is still
 * small. The loop sends it a request on a socket and hears the answers
 * in the order asked. A run's process is cloned as the loop's own child
 * (CLONE_PARENT), so the loop reaps it and reads its status as if it had
 * forked it; its stdio travels with the request (SCM_RIGHTS).
 *
 * Without a spawner (a command, a keeper) the same requests are served
 * here, on the caller's loop.
 */
#ifndef WRX_SPAWNER_H
#define WRX_SPAWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

/* Start this process's spawner: 0 or -errno (requests are then served here). */
int spawner_start(uv_loop_t *loop, const char *self_exe);
void spawner_stop(void);
/* `workrex __spawner`: that process, its socket on fd 3. */
int spawner_main(const char *self_exe);

/*
 * One request to the spawner, fds passed with it: 0, and answer(arg, rc,
 * why, fd, pid) is called once on the loop with the fd it sent back (or
 * -1), -EPIPE if the spawner went first; or -errno: not taken, serve it
 * here. The caller's fds are its own still.
 */
typedef void spawner_answer_fn(void *arg, int rc, const char *why, int fd, pid_t pid);
int spawner_ask(const void *req, size_t len, const int *fds, int nfds, spawner_answer_fn *answer,
		void *arg);

/* A program to run as a child of the caller. */
struct spawn_run {
	char *const *argv; /* argv[0]: a path, or a name looked up on our PATH */
	char *const *env;  /* NULL: ours */
	const char *cwd;   /* NULL: ours */
	int fds[3];        /* its stdin, stdout, stderr; -1: /dev/null */
	bool detach;       /* its own session */
};
/*
 * started(arg, rc, pid, why): pid > 0, a child of ours to reap (waitpid),
 * even when rc < 0 says it could not exec (it exits 127 at once); pid 0,
 * nothing runs. Called once: on the loop, later, through the spawner;
 * before spawn_run returns without one.
 *
 * spawn_run: 0, or -errno (argv[0] is not on PATH, or cannot be run) and
 * started is not called. The fds stay the caller's, to close.
 */
typedef void spawn_started_fn(void *arg, int rc, pid_t pid, const char *why);
int spawn_run(const struct spawn_run *r, spawn_started_fn *started, void *arg);

#endif
