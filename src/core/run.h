/*
 * run.h - child processes on the loop: the one way the core and the
 * dashboard start a program without waiting for it.
 *
 * Its output (stdout and stderr together) is gathered for done, the tail
 * only (RUN_KEEP bytes): the last line of a command is its outcome, the
 * rest progress. A detached child is not waited for and may outlive us
 * (stopping a container while the dashboard exits). Blocking runs, for CLI
 * commands, are proc_run (util/proc.h).
 */
#ifndef WRX_RUN_H
#define WRX_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#define RUN_KEEP 65536

/* status: the exit status, 128 + signal, or 127 when it could not start. */
typedef void run_done_fn(void *arg, int status, const char *output, const char *last);
/* The latest line of output so far (not NUL-terminated). */
typedef void run_progress_fn(void *arg, const char *line, size_t len);

struct run_opts {
	char *const *argv; /* argv[0]: a path, or a name looked up on PATH */
	const char *cwd;   /* NULL: ours */
	const char *input; /* written to its stdin, then closed; NULL: none */
	size_t input_len;  /* of input; 0: strlen(input) */
	bool detach;       /* its own session; nothing read, nothing waited for */
	run_done_fn *done; /* NULL: its output is discarded */
	run_progress_fn *progress;
	void *arg;
};

/* Start it. 0, or -errno (uv's) and done is not called. */
int run_start(uv_loop_t *loop, const struct run_opts *o);

struct strlist;
/* Start argv (none: nothing), not waited for: it finishes even as we exit; a failure logged. */
void run_detached(uv_loop_t *loop, const struct strlist *argv);

/*
 * A child whose stdout and stderr are taken apart, as they come, all of
 * them: a host command's (hostexec.h), a clipboard's image. The reader
 * stops while the caller's backlog is over 1 MiB and goes on below half
 * of it; a backlog of -1 (the caller went) kills the child, and so does
 * the end of timeout_ms. stdin is /dev/null.
 */
struct run_stream {
	char *const *argv; /* argv[0]: a path */
	char *const *env;  /* NULL: ours */
	const char *cwd;   /* NULL: ours */
	int timeout_ms;    /* 0: none */
	/* stream 1 stdout, 2 stderr. */
	void (*output)(void *arg, int stream, const char *p, size_t n);
	/* Bytes the caller has not taken yet, or -1: it went away. NULL: always 0. */
	long (*backlog)(void *arg);
	/* The exit status (128 + signal when killed), after all of the output. */
	void (*exit)(void *arg, int code);
	void *arg;
};
/* Start it: 0, or -errno (exit is not called). */
int run_stream(uv_loop_t *loop, const struct run_stream *r);

#endif
