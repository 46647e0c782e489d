/*
 * proc.c - run a program and wait for it (proc.h).
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
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
	if (pid > 0)
		return pid;
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
