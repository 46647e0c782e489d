/*
 * run.c - child processes on the loop (run.h).
 *
 * A run is done when the process has exited and its output pipe is
 * closed, whichever comes last: only then is the output whole.
 */
#include "run.h"

#include "../config/config.h"
#include "../keeper/spawner.h"
#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- children ---- */

/*
 * A child of ours, started by spawn_run (through the spawner when the loop
 * has one: it never waits for a fork) and reaped here, by its pid, when
 * SIGCHLD says that one went. A process is no handle of the loop: one
 * watcher serves them all, and keeps the loop running while a child that
 * somebody waits for runs.
 */
struct child {
	pid_t pid;  /* 0 until it started */
	int status; /* once gone: its code, 128 + signal, 127 when it could not run */
	char *why;  /* it could not run: why */
	bool gone, kill, held;
	void (*exit)(struct child *c); /* once gone */
	struct child *next;            /* watched */
};
static struct child *children;
static uv_loop_t *watch_loop; /* one loop per process */
static uv_signal_t *sigchld;  /* while a child runs or starts */
static int holding;           /* children that keep the loop running */

static void on_sigchld(uv_signal_t *h, int sig);

static void watch(void)
{
	if (sigchld)
		return;
	sigchld = xcalloc(1, sizeof *sigchld);
	uv_signal_init(watch_loop, sigchld);
	uv_signal_start(sigchld, on_sigchld, SIGCHLD);
	uv_unref((uv_handle_t *)sigchld);
}

/* No child left to reap: the watcher goes, and a loop can close. */
static void unwatch(void)
{
	if (sigchld == NULL || children || holding)
		return;
	uv_close((uv_handle_t *)sigchld, (uv_close_cb)free);
	sigchld = NULL;
}

static void hold(struct child *c, bool on)
{
	if (c->held == on)
		return;
	c->held = on;
	holding += on ? 1 : -1;
	if (holding)
		uv_ref((uv_handle_t *)sigchld);
	else
		uv_unref((uv_handle_t *)sigchld);
}

static void child_gone(struct child *c, int status)
{
	c->gone = true;
	c->status = status;
	hold(c, false);
	c->exit(c);
}

/* Every watched child that went: reaped, and told, one at a time (exit may start another). */
static void reap(void)
{
	for (;;) {
		struct child *c, **pp;
		int st = 0;
		for (pp = &children; (c = *pp) != NULL; pp = &c->next) {
			pid_t r = waitpid(c->pid, &st, WNOHANG);
			if (r == c->pid)
				break;
			if (r < 0 && errno == ECHILD) {
				st = -1;
				break;
			}
		}
		if (c == NULL) {
			unwatch();
			return;
		}
		*pp = c->next;
		if (st == -1) /* reaped by another: what it did is not known */
			log_msg("run: child %d was reaped elsewhere", (int)c->pid);
		child_gone(c, st == -1          ? 127
			      : WIFSIGNALED(st) ? 128 + WTERMSIG(st)
						: WEXITSTATUS(st));
	}
}

static void on_sigchld(uv_signal_t *h, int sig)
{
	(void)h;
	(void)sig;
	reap();
}

static void child_kill(struct child *c)
{
	c->kill = true;
	if (c->pid > 0 && !c->gone)
		kill(c->pid, SIGKILL);
}

static void started(void *arg, int rc, pid_t pid, const char *why)
{
	struct child *c = arg;
	if (rc < 0)
		c->why = xstrdup(why ? why : strerror(-rc));
	if (pid <= 0) {
		child_gone(c, 127);
		unwatch();
		return;
	}
	watch();
	c->pid = pid;
	if (c->kill)
		kill(pid, SIGKILL);
	c->next = children;
	children = c;
	reap(); /* it may have gone before it was watched */
}

/* Start r as c: 0, or -errno and exit is never called. held: the loop runs while it does. */
static int child_start(uv_loop_t *loop, struct child *c, const struct spawn_run *r, bool held,
		       void (*exit)(struct child *c))
{
	watch_loop = loop;
	watch();
	c->exit = exit;
	hold(c, held);
	int rc = spawn_run(r, started, c);
	if (rc < 0) {
		hold(c, false);
		unwatch();
	}
	return rc;
}

/* ---- runs ---- */

struct run {
	struct child child;
	uv_pipe_t out; /* output, when somebody waits */
	uv_pipe_t in;  /* input, when given */
	uv_write_t wreq;
	char *input; /* owned */
	struct buf text;
	int open; /* the child and handles not done yet */
	run_done_fn *done;
	run_progress_fn *progress;
	void *arg;
};

static void finish(struct run *r)
{
	if (--r->open > 0)
		return;
	if (r->done) {
		if (r->child.why) {
			if (r->text.len)
				buf_addstr(&r->text, "\n");
			buf_addstr(&r->text, r->child.why);
		}
		while (r->text.len && r->text.data[r->text.len - 1] == '\n')
			r->text.data[--r->text.len] = '\0';
		const char *out = r->text.data ? r->text.data : "";
		const char *last = strrchr(out, '\n');
		r->done(r->arg, r->child.status, out, last ? last + 1 : out);
	}
	buf_free(&r->text);
	free(r->child.why);
	free(r->input);
	free(r);
}

static void closed(uv_handle_t *h)
{
	finish(h->data);
}

static void exited(struct child *c)
{
	finish((struct run *)c);
}

static void alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[16384];
	*b = uv_buf_init(slab, sizeof slab);
}

static void readable(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct run *r = s->data;
	if (n < 0) {
		uv_close((uv_handle_t *)s, closed);
		return;
	}
	if (n == 0)
		return;
	buf_add(&r->text, b->base, (size_t)n);
	if (r->text.len > RUN_KEEP)
		buf_consume(&r->text, r->text.len - RUN_KEEP / 2);
	if (r->progress) {
		char *end = r->text.data + r->text.len;
		while (end > r->text.data && (end[-1] == '\n' || end[-1] == '\r'))
			end--;
		char *start = end;
		while (start > r->text.data && start[-1] != '\n' && start[-1] != '\r')
			start--;
		if (end > start)
			r->progress(r->arg, start, (size_t)(end - start));
	}
}

static void written(uv_write_t *req, int status)
{
	(void)status;
	uv_close((uv_handle_t *)req->handle, closed);
}

static void detached_exit(struct child *c)
{
	free(c->why);
	free(c);
}

static int start_detached(uv_loop_t *loop, const struct run_opts *o)
{
	struct spawn_run sr = {.argv = o->argv, .cwd = o->cwd, .fds = {-1, -1, -1}, .detach = true};
	struct child *c = xcalloc(1, sizeof *c);
	int rc = child_start(loop, c, &sr, false, detached_exit); /* it may outlive the loop */
	if (rc < 0)
		free(c);
	return rc;
}

/* A pipe: the loop's end on h (reading or writing), the child's end in *theirs. */
static int pipe_for(uv_loop_t *loop, uv_pipe_t *h, bool ours_reads, int *theirs, void *data)
{
	uv_file fds[2];
	int rc = uv_pipe(fds, 0, 0);
	if (rc < 0)
		return rc;
	uv_pipe_init(loop, h, 0);
	uv_pipe_open(h, fds[ours_reads ? 0 : 1]);
	h->data = data;
	*theirs = fds[ours_reads ? 1 : 0];
	return 0;
}

int run_start(uv_loop_t *loop, const struct run_opts *o)
{
	if (o->detach)
		return start_detached(loop, o);
	struct run *r = xcalloc(1, sizeof *r);
	r->done = o->done;
	r->progress = o->progress;
	r->arg = o->arg;
	struct spawn_run sr = {.argv = o->argv, .cwd = o->cwd, .fds = {-1, -1, -1}};
	int rc = 0;
	/* One pipe for both: the command's last line is its outcome, whichever stream. */
	if (o->done && (rc = pipe_for(loop, &r->out, true, &sr.fds[1], r)) == 0) {
		sr.fds[2] = sr.fds[1];
		r->open++;
	}
	if (rc == 0 && o->input && (rc = pipe_for(loop, &r->in, false, &sr.fds[0], r)) == 0)
		r->open++;
	if (rc == 0) {
		r->open++; /* the child: its exit may come before child_start returns */
		if ((rc = child_start(loop, &r->child, &sr, true, exited)) < 0)
			r->open--;
	}
	for (int i = 0; i < 2; i++)
		if (sr.fds[i] >= 0)
			close(sr.fds[i]);
	if (rc < 0) {
		/* Every handle closes; nothing is reported through done. */
		r->done = NULL;
		if (r->open == 0) {
			free(r);
			return rc;
		}
		if (o->done)
			uv_close((uv_handle_t *)&r->out, closed);
		if (o->input)
			uv_close((uv_handle_t *)&r->in, closed);
		return rc;
	}
	if (o->done)
		uv_read_start((uv_stream_t *)&r->out, alloc, readable);
	if (o->input) {
		size_t n = o->input_len ? o->input_len : strlen(o->input);
		r->input = xmalloc(n + 1);
		memcpy(r->input, o->input, n);
		uv_buf_t b = uv_buf_init(r->input, (unsigned)n);
		if (uv_write(&r->wreq, (uv_stream_t *)&r->in, &b, 1, written) < 0)
			uv_close((uv_handle_t *)&r->in, closed);
	}
	return 0;
}

/* Read no more while the caller has this much unread; again below the half. */
#define BACKLOG_HIGH (1u << 20)
#define BACKLOG_POLL_MS 5
/*
 * Passed on in one turn of the loop at most, then the rest in the next:
 * libuv reads a pipe up to 32 times a turn, and a caller that splits a
 * diff into lines takes about 1 ms for each 64 KB.
 */
#define STREAM_TURN 65536

/* ---- streams ---- */

struct stream {
	struct child child;
	uv_pipe_t out[2]; /* stdout, stderr */
	uv_timer_t wait;  /* while the caller has a backlog */
	uv_timer_t limit; /* its time, when it has a limit */
	int open;         /* the child and handles not done yet */
	size_t turn;      /* bytes passed on since reading began again */
	bool reading[2], eof[2], paused;
	struct run_stream r; /* its argv, env, cwd: the caller's, at the start only */
	char *name;          /* owned: argv[0], for the log */
};

static void stream_free(struct stream *x)
{
	if (--x->open == 0) {
		free(x->child.why);
		free(x->name);
		free(x);
	}
}

static void stream_closed(uv_handle_t *h)
{
	stream_free(h->data);
}

static void stream_close(struct stream *x)
{
	uv_close((uv_handle_t *)&x->out[0], stream_closed);
	uv_close((uv_handle_t *)&x->out[1], stream_closed);
	uv_close((uv_handle_t *)&x->wait, stream_closed);
	uv_close((uv_handle_t *)&x->limit, stream_closed);
}

/* Every pipe at its end and the process gone: the status, once, then the handles. */
static void stream_done(struct stream *x)
{
	if (!x->child.gone || !x->eof[0] || !x->eof[1])
		return;
	if (x->child.why)
		x->r.output(x->r.arg, 2, x->child.why, strlen(x->child.why));
	x->r.exit(x->r.arg, x->child.status);
	stream_close(x);
	stream_free(x); /* the child */
}

static void stream_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[65536];
	*b = uv_buf_init(slab, sizeof slab);
}

/* (bwrap's --die-with-parent takes its child) */
static void stream_kill(struct stream *x)
{
	child_kill(&x->child);
}

static void stream_reading(struct stream *x, bool on);

static void stream_limit(uv_timer_t *t)
{
	struct stream *x = t->data;
	log_msg("run: %s: killed after %d ms", x->name, x->r.timeout_ms);
	stream_kill(x);
}

static void stream_wait(uv_timer_t *t)
{
	struct stream *x = t->data;
	long backlog = x->r.backlog ? x->r.backlog(x->r.arg) : 0;
	if (backlog < 0)
		stream_kill(x);
	if (backlog < 0 || backlog < (long)(BACKLOG_HIGH / 2)) {
		uv_timer_stop(t);
		x->paused = false;
		x->turn = 0;
		stream_reading(x, true);
	}
}

/* No more reading for now: again after BACKLOG_POLL_MS, or next turn (after 0). */
static void stream_pause(struct stream *x, uint64_t after)
{
	x->paused = true;
	stream_reading(x, false);
	uv_timer_start(&x->wait, stream_wait, after, BACKLOG_POLL_MS);
}

static void stream_readable(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct stream *x = s->data;
	int i = s == (uv_stream_t *)&x->out[0] ? 0 : 1;
	if (n < 0) {
		uv_read_stop(s);
		x->reading[i] = false;
		x->eof[i] = true;
		stream_done(x);
		return;
	}
	if (n == 0)
		return;
	if (!x->child.kill)
		x->r.output(x->r.arg, i + 1, b->base, (size_t)n);
	x->turn += (size_t)n;
	long backlog = x->r.backlog ? x->r.backlog(x->r.arg) : 0;
	if (backlog < 0)
		stream_kill(x);
	else if (x->paused)
		return;
	else if (backlog > (long)BACKLOG_HIGH)
		stream_pause(x, BACKLOG_POLL_MS); /* its queue, not ours, bounds the memory */
	else if (x->turn >= STREAM_TURN)
		stream_pause(x, 0);
}

static void stream_reading(struct stream *x, bool on)
{
	for (int i = 0; i < 2; i++) {
		if (x->eof[i] || x->reading[i] == on)
			continue;
		if (on)
			uv_read_start((uv_stream_t *)&x->out[i], stream_alloc, stream_readable);
		else
			uv_read_stop((uv_stream_t *)&x->out[i]);
		x->reading[i] = on;
	}
}

static void stream_exited(struct child *c)
{
	struct stream *x = (struct stream *)c;
	uv_timer_stop(&x->limit);
	stream_done(x);
}

int run_stream(uv_loop_t *loop, const struct run_stream *r)
{
	struct stream *x = xcalloc(1, sizeof *x);
	x->r = *r;
	x->name = xstrdup(r->argv[0]);
	struct spawn_run sr = {.argv = r->argv, .env = r->env, .cwd = r->cwd, .fds = {-1, -1, -1}};
	uv_file p[2][2];
	int rc = uv_pipe(p[0], 0, 0);
	if (rc == 0 && (rc = uv_pipe(p[1], 0, 0)) < 0) {
		close(p[0][0]);
		close(p[0][1]);
	}
	if (rc < 0) {
		log_msg("run: %s: %s", r->argv[0], uv_strerror(rc));
		free(x->name);
		free(x);
		return rc;
	}
	for (int i = 0; i < 2; i++) {
		uv_pipe_init(loop, &x->out[i], 0);
		uv_pipe_open(&x->out[i], p[i][0]);
		x->out[i].data = x;
		sr.fds[i + 1] = p[i][1];
	}
	uv_timer_init(loop, &x->wait);
	uv_timer_init(loop, &x->limit);
	x->wait.data = x->limit.data = x;
	x->open = 5; /* the child, two pipes, two timers */
	rc = child_start(loop, &x->child, &sr, true, stream_exited);
	close(p[0][1]);
	close(p[1][1]);
	if (rc < 0) {
		log_msg("run: %s: %s", r->argv[0], uv_strerror(rc));
		stream_close(x);
		stream_free(x); /* the child that did not start */
		return rc;
	}
	if (r->timeout_ms > 0 && !x->child.gone)
		uv_timer_start(&x->limit, stream_limit, (uint64_t)r->timeout_ms, 0);
	stream_reading(x, true);
	return 0;
}

void run_detached(uv_loop_t *loop, const struct strlist *argv)
{
	if (argv->n == 0)
		return;
	char **v = strlist_argv(argv);
	struct run_opts o = {.argv = v, .detach = true};
	int rc = run_start(loop, &o);
	if (rc < 0)
		log_msg("%s: %s", v[0], uv_strerror(rc));
	free(v);
}
