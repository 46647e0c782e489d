/*
 * proc.c - run a program and wait for it (proc.h).
 */
#include "proc.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void child_fd(int fd, int target)
{
	if (fd == PROC_INHERIT)
		return;
	if (fd == PROC_NULL) {
		int n = open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
		if (n < 0)
			_exit(126);
		fd = n;
	}
	if (fd != target && dup2(fd, target) < 0)
		_exit(126);
}

pid_t proc_spawn(char *const argv[], const struct proc_opts *o)
{
	static const struct proc_opts none = PROC_OPTS_DEFAULT;
	if (o == NULL)
		o = &none;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		if (o->group)
			setpgid(pid, pid); /* as the child does: whichever runs first */
		return pid;
	}
	if (o->group)
		setpgid(0, 0);
	/* The child: 2 last, so that a failure below still reaches the right stderr. */
	child_fd(o->in, 0);
	child_fd(o->out, 1);
	child_fd(o->err, 2);
	if (o->keep >= 0)
		fcntl(o->keep, F_SETFD, 0);
	if (o->dir && chdir(o->dir) < 0)
		_exit(126);
	for (char *const *e = o->env; e && *e; e++)
		putenv(*e);
	execvp(argv[0], argv);
	fprintf(stderr, "workrex: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int proc_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int proc_run(char *const argv[], const struct proc_opts *o)
{
	fflush(stdout);
	pid_t pid = proc_spawn(argv, o);
	return pid < 0 ? pid : proc_wait(pid);
}

int proc_capture(char *const argv[], const struct proc_opts *o, const char *in, size_t len,
		 struct buf *out, struct buf *err, int timeout_ms)
{
	int pi[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
	    (in && pipe2(pi, O_CLOEXEC) < 0)) {
		int e = -errno;
		for (int i = 0; i < 2; i++) {
			if (po[i] >= 0)
				close(po[i]);
			if (pe[i] >= 0)
				close(pe[i]);
		}
		return e;
	}
	struct proc_opts c = PROC_OPTS_DEFAULT;
	if (o) {
		c.dir = o->dir;
		c.env = o->env;
	}
	c.in = in ? pi[0] : PROC_NULL;
	c.out = po[1];
	c.err = pe[1];
	/* Timed: its group, so that what it started dies with it and the pipes close. */
	c.group = timeout_ms > 0;
	fflush(stdout);
	pid_t pid = proc_spawn(argv, &c);
	close(po[1]);
	close(pe[1]);
	if (in)
		close(pi[0]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		if (in)
			close(pi[1]);
		return pid;
	}
	/* A child that exits unread costs the write EPIPE, not the caller its life. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	if (in) {
		fd_set_nonblock(pi[1]);
		sigaction(SIGPIPE, &ign, &old);
	}
	struct pollfd pf[3] = {{.fd = po[0], .events = POLLIN},
			       {.fd = pe[0], .events = POLLIN},
			       {.fd = in ? pi[1] : -1, .events = POLLOUT}};
	struct buf *dst[2] = {out, err};
	size_t sent = 0;
	uint64_t end = timeout_ms > 0 ? now_ms() + (uint64_t)timeout_ms : 0;
	bool killed = false;
	if (in && len == 0) {
		close(pi[1]);
		pf[2].fd = -1;
	}
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		int wait = -1;
		if (end) {
			uint64_t now = now_ms();
			wait = now >= end ? 0 : (int)(end - now);
		}
		int n = poll(pf, 3, wait);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && end && !killed) {
			killpg(pid, SIGKILL);
			killed = true;
			end = 0;
			continue;
		}
		char tmp[16384];
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read(pf[i].fd, tmp, sizeof tmp);
			if (r > 0 && dst[i])
				buf_add(dst[i], tmp, (size_t)r);
			else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				close(pf[i].fd);
				pf[i].fd = -1;
			}
		}
		if (pf[2].fd >= 0 && (pf[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(pf[2].fd, in + sent, len - sent);
			if (w > 0)
				sent += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == len) {
				close(pf[2].fd);
				pf[2].fd = -1;
			}
		}
	}
	if (pf[2].fd >= 0)
		close(pf[2].fd);
	if (in)
		sigaction(SIGPIPE, &old, NULL);
	return proc_wait(pid);
}
