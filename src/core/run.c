/*
 * run.c - child processes on the loop (run.h).
 *
 * A run is done when the process has exited and its output pipe is
 * closed, whichever comes last: only then is the output whole.
 */
#include "run.h"

#include "../config/config.h"
#include "../util/log.h"
#include "../util/util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct run {
	uv_process_t proc; /* proc.data = this */
	uv_pipe_t out;     /* output, when somebody waits */
	uv_pipe_t in;      /* input, when given */
	uv_write_t wreq;
	char *input; /* owned */
	struct buf text;
	int open; /* handles not closed yet */
	int status;
	run_done_fn *done;
	run_progress_fn *progress;
	void *arg;
};

static void finish(struct run *r)
{
	if (--r->open > 0)
		return;
	if (r->done) {
		while (r->text.len && r->text.data[r->text.len - 1] == '\n')
			r->text.data[--r->text.len] = '\0';
		const char *out = r->text.data ? r->text.data : "";
		const char *last = strrchr(out, '\n');
		r->done(r->arg, r->status, out, last ? last + 1 : out);
	}
	buf_free(&r->text);
	free(r->input);
	free(r);
}

static void closed(uv_handle_t *h)
{
	finish(h->data);
}

static void exited(uv_process_t *p, int64_t status, int sig)
{
	struct run *r = p->data;
	r->status = sig ? 128 + sig : (int)status;
	uv_close((uv_handle_t *)p, closed);
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

static void detached_exit(uv_process_t *p, int64_t status, int sig)
{
	(void)status;
	(void)sig;
	uv_close((uv_handle_t *)p, (uv_close_cb)free);
}

static int start_detached(uv_loop_t *loop, const struct run_opts *o)
{
	uv_stdio_container_t stdio[3] = {
		{.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
	uv_process_options_t po = {.file = o->argv[0],
				   .args = (char **)o->argv,
				   .cwd = o->cwd,
				   .exit_cb = detached_exit,
				   .flags = UV_PROCESS_DETACHED,
				   .stdio_count = 3,
				   .stdio = stdio};
	uv_process_t *p = xcalloc(1, sizeof *p);
	int rc = uv_spawn(loop, p, &po);
	if (rc < 0) {
		uv_close((uv_handle_t *)p, (uv_close_cb)free);
		return rc;
	}
	uv_unref((uv_handle_t *)p); /* it may outlive the loop */
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
	uv_stdio_container_t stdio[3] = {
		{.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
	uv_file fds[2] = {-1, -1};
	int rc;
	if (o->done) {
		/* One pipe for both: the command's last line is its outcome, whichever stream. */
		if ((rc = uv_pipe(fds, 0, 0)) < 0) {
			free(r);
			return rc;
		}
		stdio[1] = stdio[2] =
			(uv_stdio_container_t){.flags = UV_INHERIT_FD, .data.fd = fds[1]};
		uv_pipe_init(loop, &r->out, 0);
		uv_pipe_open(&r->out, fds[0]);
		r->out.data = r;
		r->open++;
	}
	if (o->input) {
		uv_pipe_init(loop, &r->in, 0);
		r->in.data = r;
		stdio[0] = (uv_stdio_container_t){.flags = UV_CREATE_PIPE | UV_READABLE_PIPE,
						  .data.stream = (uv_stream_t *)&r->in};
		r->open++;
	}
	uv_process_options_t po = {.file = o->argv[0],
				   .args = (char **)o->argv,
				   .cwd = o->cwd,
				   .exit_cb = exited,
				   .stdio_count = 3,
				   .stdio = stdio};
	r->proc.data = r;
	rc = uv_spawn(loop, &r->proc, &po);
	if (fds[1] >= 0)
		close(fds[1]);
	r->open++; /* the process handle: initialised, started or not */
	if (rc < 0) {
		/* Every handle closes; nothing is reported through done. */
		r->done = NULL;
		uv_close((uv_handle_t *)&r->proc, closed);
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

/* ---- streams ---- */

struct stream {
	uv_process_t proc;
	uv_pipe_t out[2]; /* stdout, stderr */
	uv_timer_t wait;  /* while the caller has a backlog */
	uv_timer_t limit; /* its time, when it has a limit */
	int open;         /* handles not closed yet */
	bool reading[2], eof[2], exited, paused, killed;
	int code;
	struct run_stream r; /* its argv, env, cwd: the caller's, at the start only */
	char *name;          /* owned: argv[0], for the log */
};

static void stream_closed(uv_handle_t *h)
{
	struct stream *x = h->data;
	if (--x->open == 0) {
		free(x->name);
		free(x);
	}
}

/* Every pipe at its end and the process gone: the status, once, then the handles. */
static void stream_done(struct stream *x)
{
	if (!x->exited || !x->eof[0] || !x->eof[1])
		return;
	x->r.exit(x->r.arg, x->code);
	uv_close((uv_handle_t *)&x->proc, stream_closed);
	uv_close((uv_handle_t *)&x->out[0], stream_closed);
	uv_close((uv_handle_t *)&x->out[1], stream_closed);
	uv_close((uv_handle_t *)&x->wait, stream_closed);
	uv_close((uv_handle_t *)&x->limit, stream_closed);
}

static void stream_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[65536];
	*b = uv_buf_init(slab, sizeof slab);
}

static void stream_kill(struct stream *x)
{
	if (!x->killed && !x->exited)
		uv_process_kill(&x->proc,
				SIGKILL); /* (bwrap's --die-with-parent takes its child) */
	x->killed = true;
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
		stream_reading(x, true);
	}
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
	if (!x->killed)
		x->r.output(x->r.arg, i + 1, b->base, (size_t)n);
	long backlog = x->r.backlog ? x->r.backlog(x->r.arg) : 0;
	if (backlog < 0) {
		stream_kill(x);
	} else if (backlog > (long)BACKLOG_HIGH && !x->paused) {
		/* No more until the caller reads: its queue, not ours, bounds the memory. */
		x->paused = true;
		stream_reading(x, false);
		uv_timer_start(&x->wait, stream_wait, BACKLOG_POLL_MS, BACKLOG_POLL_MS);
	}
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

static void stream_exited(uv_process_t *p, int64_t status, int sig)
{
	struct stream *x = p->data;
	x->exited = true;
	x->code = sig ? 128 + sig : (int)status;
	uv_timer_stop(&x->limit);
	stream_done(x);
}

int run_stream(uv_loop_t *loop, const struct run_stream *r)
{
	struct stream *x = xcalloc(1, sizeof *x);
	x->r = *r;
	x->name = xstrdup(r->argv[0]);
	uv_stdio_container_t stdio[3] = {{.flags = UV_IGNORE}};
	for (int i = 0; i < 2; i++) {
		uv_pipe_init(loop, &x->out[i], 0);
		x->out[i].data = x;
		stdio[i + 1] = (uv_stdio_container_t){.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
						      .data.stream = (uv_stream_t *)&x->out[i]};
	}
	uv_timer_init(loop, &x->wait);
	uv_timer_init(loop, &x->limit);
	x->wait.data = x->limit.data = x;
	x->proc.data = x;
	x->open = 5;
	uv_process_options_t po = {.file = r->argv[0],
				   .args = (char **)r->argv,
				   .env = (char **)r->env,
				   .cwd = r->cwd,
				   .exit_cb = stream_exited,
				   .stdio_count = 3,
				   .stdio = stdio};
	int rc = uv_spawn(loop, &x->proc, &po);
	if (rc < 0) {
		log_msg("run: %s: %s", r->argv[0], uv_strerror(rc));
		uv_close((uv_handle_t *)&x->proc, stream_closed);
		uv_close((uv_handle_t *)&x->out[0], stream_closed);
		uv_close((uv_handle_t *)&x->out[1], stream_closed);
		uv_close((uv_handle_t *)&x->wait, stream_closed);
		uv_close((uv_handle_t *)&x->limit, stream_closed);
		return rc;
	}
	if (r->timeout_ms > 0)
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
