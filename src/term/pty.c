/*
 * pty.c - forkpty children, their master fds on the loop, and reaping.
 *
 * Every started pty is on a list so SIGCHLD can waitpid() exactly our own
 * pids (waitpid(-1) would steal libuv's children). When a pane is closed
 * before its program exits, closing the master hangs the terminal up: the
 * kernel sends SIGHUP and SIGCONT to the session leader (the pane's
 * program), and a shell passes the hang-up on to its jobs. The pid
 * stays on the list, detached from the pane, until it is reaped.
 */
#include "pty.h"

#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Input the program does not read is dropped past this, never buffered forever. */
#define WRITE_QUEUE_MAX (16 * 1024 * 1024)

struct pty {
	uv_poll_t poll;    /* poll.data = this */
	int fd;            /* master; -1 once closed */
	pid_t pid;         /* -1 once reaped */
	struct pane *pane; /* borrowed; NULL once the pane let go */
	struct buf wq;     /* bytes waiting for the master to take them */
	int events;        /* UV_READABLE / UV_WRITABLE being polled */
	bool eof;
	struct pty *next;
};

static struct pty *ptys;
static uint64_t echo_until; /* uv_hrtime() until which reads take turns quickly */

static void on_poll(uv_poll_t *h, int status, int events);

static void poll_set(struct pty *t)
{
	if (t->fd < 0)
		return;
	int ev = (t->eof ? 0 : UV_READABLE) | (t->wq.len ? UV_WRITABLE : 0);
	if (ev == t->events)
		return;
	t->events = ev;
	if (ev)
		uv_poll_start(&t->poll, ev, on_poll);
	else
		uv_poll_stop(&t->poll);
}

static void flush_writes(struct pty *t)
{
	while (t->wq.len > 0 && t->fd >= 0) {
		ssize_t n = write(t->fd, t->wq.data, t->wq.len);
		if (n > 0) {
			buf_consume(&t->wq, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			buf_consume(&t->wq, t->wq.len); /* the program is gone */
		break;
	}
}

/*
 * Read until the master is empty, or the turn's budget is spent: bytes, and
 * time, because libvterm's cost per byte varies a hundredfold (a flood of
 * short lines scrolls the whole screen per line). Level-triggered polling
 * brings us back on the next loop turn, after the keyboard and other panes.
 */
static void read_some(struct pty *t)
{
	static char chunk[64 * 1024];
	size_t budget = PTY_READ_BUDGET;
	uint64_t now = uv_hrtime();
	uint64_t until = now + (now < echo_until ? PTY_READ_NSEC_ECHO : PTY_READ_NSEC);
	while (budget > 0 && !t->eof && uv_hrtime() < until) {
		ssize_t n = read(t->fd, chunk, sizeof chunk);
		if (n > 0) {
			if (t->pane)
				pane_feed(t->pane, chunk, (size_t)n);
			budget -= WRX_MIN(budget, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		t->eof = true; /* EIO: every slave fd is closed */
	}
}

void pty_expect_echo(uint64_t until_ns)
{
	echo_until = until_ns;
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	struct pty *t = h->data;
	if (status < 0) {
		t->eof = true;
	} else {
		if (events & UV_READABLE)
			read_some(t);
		if (events & UV_WRITABLE)
			flush_writes(t);
	}
	poll_set(t);
}

static int io_write(void *ctx, const char *buf, size_t len)
{
	struct pty *t = ctx;
	if (t->fd < 0 || t->eof)
		return -EPIPE;
	if (t->wq.len + len > WRITE_QUEUE_MAX) {
		log_msg("pty %d: program is not reading its input; dropped %zu bytes", (int)t->pid,
			len);
		return -ENOBUFS;
	}
	buf_add(&t->wq, buf, len);
	flush_writes(t);
	poll_set(t);
	return 0;
}

static void io_resize(void *ctx, int rows, int cols)
{
	struct pty *t = ctx;
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	if (t->fd >= 0)
		ioctl(t->fd, TIOCSWINSZ, &ws);
}

static void on_closed(uv_handle_t *h)
{
	struct pty *t = h->data;
	close(t->fd);
	t->fd = -1;
	if (t->pid < 0) {
		buf_free(&t->wq);
		free(t);
	}
}

static void unlink_pty(struct pty *t)
{
	for (struct pty **pp = &ptys; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return;
		}
	}
}

/*
 * The pane is going away: closing the master (in on_closed) is the hang-up;
 * keep the pid to reap. No SIGHUP of our own before it: a shell that gets
 * two in a row can lose the one it owes its jobs (bash did, 5 times in 100,
 * leaving `sleep 1000 &` running after the dashboard quit).
 */
static void io_close(void *ctx)
{
	struct pty *t = ctx;
	t->pane = NULL;
	buf_free(&t->wq);
	if (t->pid < 0)
		unlink_pty(t);
	uv_close((uv_handle_t *)&t->poll, on_closed);
}

void pty_reap(void)
{
	struct pty **pp = &ptys;
	while (*pp) {
		struct pty *t = *pp;
		int status;
		pid_t r = t->pid > 0 ? waitpid(t->pid, &status, WNOHANG) : 0;
		if (r != t->pid) {
			pp = &t->next;
			continue;
		}
		t->pid = -1;
		if (t->pane) {
			/* Take what is still buffered before saying it ended. */
			if (t->fd >= 0 && !t->eof)
				read_some(t);
			pane_set_exited(t->pane, status);
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		if (t->fd < 0) { /* closed already: the close callback left it to us */
			buf_free(&t->wq);
			free(t);
		}
	}
}

pid_t pty_pid(const struct pane *p)
{
	for (struct pty *t = ptys; t; t = t->next)
		if (t->pane == p)
			return t->pid;
	return -1;
}

static void child(const struct pty_spawn *sp)
{
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	if (sp->cwd && chdir(sp->cwd) < 0) {
		fprintf(stderr, "workrex: cannot enter %s: %s\r\n", sp->cwd, strerror(errno));
		_exit(126);
	}
	/*
	 * The outer terminal's multiplexer is not the pane's: a tmux command
	 * in a pane would drive the user's tmux, and agent CLIs give tmux
	 * advice. The pane's terminal is workrex, whatever TERM_PROGRAM said.
	 */
	static const char *const outer[] = {"TMUX", "TMUX_PANE", "TERM_PROGRAM",
					    "TERM_PROGRAM_VERSION"};
	for (size_t i = 0; i < sizeof outer / sizeof *outer; i++)
		unsetenv(outer[i]);
	for (char *const *e = sp->env; e && *e; e++)
		putenv(*e);
	execvp(sp->argv[0], sp->argv);
	fprintf(stderr, "workrex: cannot run %s: %s\r\n", sp->argv[0], strerror(errno));
	_exit(127);
}

int pty_start(uv_loop_t *loop, struct pane *p, const struct pty_spawn *sp, char **cause)
{
	struct winsize ws = {.ws_row = (unsigned short)pane_rows(p),
			     .ws_col = (unsigned short)pane_cols(p)};
	int fd;
	pid_t pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0) {
		int e = errno;
		*cause = xasprintf("cannot start %s: forkpty: %s", sp->argv[0], strerror(e));
		return -e;
	}
	if (pid == 0)
		child(sp);
	fd_set_cloexec(fd);
	fd_set_nonblock(fd);

	struct pty *t = xcalloc(1, sizeof *t);
	t->fd = fd;
	t->pid = pid;
	t->pane = p;
	int rc = uv_poll_init(loop, &t->poll, fd);
	if (rc < 0) {
		*cause = xasprintf("cannot watch the pty of %s: %s", sp->argv[0], uv_strerror(rc));
		kill(pid, SIGKILL);
		close(fd);
		t->fd = -1;
		t->pane = NULL;
		t->next = ptys;
		ptys = t;
		return rc;
	}
	t->poll.data = t;
	t->next = ptys;
	ptys = t;
	poll_set(t);

	struct pane_io io = {.write = io_write, .resize = io_resize, .close = io_close, .ctx = t};
	pane_set_io(p, &io);
	return 0;
}
