/*
 * spawner.c - processes started off the loop (spawner.h): the loop's side
 * of the spawner, the spawner itself, and the one way a child is made.
 */
#include "spawner.h"

#include "../util/log.h"
#include "../util/util.h"
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h> /* struct clone_args */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A request: a keeper's spec, or a run with its environment. */
#define SPAWN_REQ_MAX (256 * 1024)

/* What the spawner says: 0 or -errno, the process made, and (on an error) why. */
struct said {
	int32_t rc;
	int32_t pid;
	char why[256];
};

/* A run on the wire: this, then path, cwd ("": ours), argv, env, each NUL-ended. */
struct run_head {
	char kind; /* 'R'; a keeper's spec starts with '{' */
	uint8_t detach;
	uint8_t fdmask; /* which of stdin, stdout, stderr come with it, in order */
	uint8_t pad;
	uint32_t argc, envc;
};

/* ---- making a child ---- */

/* Why a child did not exec: the step and its errno, written to its parent's pipe. */
struct failed {
	int32_t step, err;
};
static const char *const steps[] = {"its stdio", "its directory", "exec"};

/*
 * In the child: stdio (fds: stdin, stdout, stderr, -1 for /dev/null, and
 * what goes on fd 3, -1 for nothing), signals, session, directory, then
 * the program.
 */
static _Noreturn void child(const char *path, char *const *argv, char *const *env, const char *cwd,
			    const int fds[4], bool detach, int errfd)
{
	struct failed f = {0};
	int use[4];
	/* Below 4, one dup2 would overwrite another's source: moved up first. */
	for (int i = 0; i < 4; i++)
		use[i] = fds[i] >= 0 && fds[i] < 4 ? fcntl(fds[i], F_DUPFD_CLOEXEC, 4) : fds[i];
	for (int i = 0; i < 4; i++) {
		int fd = use[i] >= 0 || i == 3
				 ? use[i]
				 : open("/dev/null", (i ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
		if (i == 3 && fd < 0)
			break;
		/* (dup2 onto itself keeps close-on-exec: cleared by hand) */
		if (fd < 0 || (fd == i ? fcntl(fd, F_SETFD, 0) : dup2(fd, i)) < 0)
			goto fail;
	}
	/* What a program expects to find: every signal as the system sets it, none blocked. */
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (detach)
		setsid();
	f.step = 1;
	if (cwd && chdir(cwd) < 0)
		goto fail;
	f.step = 2;
	execve(path, argv, env);
fail:
	f.err = errno;
	(void)!write(errfd, &f, sizeof f);
	_exit(127);
}

/*
 * Make the child, as the caller's (parents: as its parent's, the loop's
 * when the spawner makes it), and wait for its exec: its pid, even when
 * the exec failed (*rc, *why); -1 when nothing was made.
 */
static pid_t make_child(const char *path, char *const *argv, char *const *env, const char *cwd,
			const int fds[4], bool detach, bool parents, int *rc, char **why)
{
	int ep[2];
	*rc = 0;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		*rc = -errno;
		*why = xasprintf("pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid;
	if (parents) {
		/* (its exit signal is ours, SIGCHLD, sent to our parent: clone3 wants 0 here) */
		struct clone_args ca = {.flags = CLONE_PARENT};
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
	} else {
		pid = fork();
	}
	if (pid == 0)
		child(path, argv, env ? env : environ, cwd, fds, detach, ep[1]);
	int e = errno;
	close(ep[1]);
	if (pid < 0) {
		close(ep[0]);
		*rc = -e;
		*why = xasprintf("cannot start %s: %s", path, strerror(e));
		return -1;
	}
	struct failed f;
	ssize_t n;
	while ((n = read(ep[0], &f, sizeof f)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (n == (ssize_t)sizeof f) {
		*rc = -f.err;
		*why = f.step == 1 ? xasprintf("cannot enter %s: %s", cwd, strerror(f.err))
				   : xasprintf("cannot run %s: %s (%s)", argv[0], strerror(f.err),
					       steps[f.step]);
	}
	return pid;
}

/* ---- the loop's side ---- */

struct ask {
	spawner_answer_fn *answer;
	void *arg;
	struct ask *next;
};

struct spawner {
	uv_poll_t poll;
	int fd; /* ours: SOCK_SEQPACKET, non-blocking */
	pid_t pid;
	struct ask *first, *last; /* waiting for their answers, oldest first */
};
static struct spawner *spawner; /* one loop per process */

static struct ask *dequeue(void)
{
	struct ask *a = spawner->first;
	if (a) {
		spawner->first = a->next;
		if (spawner->first == NULL)
			spawner->last = NULL;
	}
	return a;
}

static void spawner_gone(const char *why);

static void on_spawner(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)events;
	for (;;) {
		struct said said = {0};
		char ctl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {.iov_base = &said, .iov_len = sizeof said - 1};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctl,
				   .msg_controllen = sizeof ctl};
		ssize_t n = status < 0 ? -1 : recvmsg(spawner->fd, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < (ssize_t)(sizeof said.rc + sizeof said.pid)) {
			spawner_gone(n < 0 ? strerror(errno) : "it ended");
			return;
		}
		int fd = -1;
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof fd);
		struct ask *a = dequeue();
		if (a == NULL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		a->answer(a->arg, said.rc, said.rc < 0 ? said.why : NULL, fd, said.pid);
		free(a);
	}
}

static void spawner_closed(uv_handle_t *h)
{
	free(h->data);
}

/* The spawner went: those that wait hear -EPIPE; the next requests are served here. */
static void spawner_gone(const char *why)
{
	struct spawner *sp = spawner;
	log_msg("spawner: %s; processes are started by the loop itself now", why);
	char *cause = xasprintf("the spawner went (%s)", why);
	struct ask *a;
	while ((a = dequeue()) != NULL) {
		a->answer(a->arg, -EPIPE, cause, -1, 0);
		free(a);
	}
	free(cause);
	spawner = NULL;
	uv_poll_stop(&sp->poll);
	close(sp->fd);
	while (waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR)
		;
	uv_close((uv_handle_t *)&sp->poll, spawner_closed);
}

int spawner_start(uv_loop_t *loop, const char *self_exe)
{
	if (spawner)
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* Its stdio /dev/null, its socket on fd 3. */
	int fds[4] = {-1, -1, -1, sv[1]};
	char *argv[] = {(char *)self_exe, "__spawner", NULL};
	int rc;
	char *why = NULL;
	pid_t pid = make_child(self_exe, argv, NULL, NULL, fds, false, false, &rc, &why);
	close(sv[1]);
	free(why);
	if (pid > 0 && rc < 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	if (pid < 0 || rc < 0) {
		close(sv[0]);
		return rc;
	}
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	struct spawner *sp = xcalloc(1, sizeof *sp);
	sp->fd = sv[0];
	sp->pid = pid;
	uv_poll_init(loop, &sp->poll, sp->fd);
	sp->poll.data = sp;
	uv_poll_start(&sp->poll, UV_READABLE | UV_DISCONNECT, on_spawner);
	/* It never keeps the loop running by itself. */
	uv_unref((uv_handle_t *)&sp->poll);
	spawner = sp;
	return 0;
}

void spawner_stop(void)
{
	if (spawner)
		spawner_gone("the dashboard ends");
}

int spawner_ask(const void *req, size_t len, const int *fds, int nfds, spawner_answer_fn *answer,
		void *arg)
{
	if (spawner == NULL || len > SPAWN_REQ_MAX || nfds > 3)
		return -EMSGSIZE;
	char ctl[CMSG_SPACE(3 * sizeof(int))] = {0};
	struct iovec iov = {.iov_base = (void *)req, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		m.msg_control = ctl;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	/* A request is a few KB, the socket's room some hundreds: a full one is a spawner stuck. */
	if (sendmsg(spawner->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -errno;
	struct ask *a = xcalloc(1, sizeof *a);
	a->answer = answer;
	a->arg = arg;
	if (spawner->last)
		spawner->last->next = a;
	else
		spawner->first = a;
	spawner->last = a;
	return 0;
}

/* ---- runs ---- */

/* argv[0] as exec will find it, looked up on our PATH: a path to free, or NULL (errno). */
static char *resolve(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	char *path = path_which(name);
	if (path == NULL)
		errno = ENOENT;
	return path;
}

static size_t count(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

static void add_strings(struct buf *b, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_add(b, v[i], strlen(v[i]) + 1);
}

/* n strings from *p, NUL-ended, within end: a vector to free (its strings are the request's). */
static char **take_strings(char **p, const char *end, size_t n)
{
	if (n > (size_t)(end - *p))
		return NULL;
	char **v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		char *nul = memchr(*p, '\0', (size_t)(end - *p));
		if (nul == NULL) {
			free(v);
			return NULL;
		}
		v[i] = *p;
		*p = nul + 1;
	}
	return v;
}

/*
 * A run asked for, made: as the loop's child when parents (by the
 * spawner), else as ours; said tells its pid, or why not.
 */
static void serve_run(char *req, size_t n, const int *fds, int nfds, bool parents,
		      struct said *said)
{
	struct run_head h;
	char *p = req + sizeof h, *end = req + n;
	char **head = NULL, **argv = NULL, **env = NULL;
	int stdio[4] = {-1, -1, -1, -1}, k = 0;
	memcpy(&h, req, sizeof h);
	for (int i = 0; i < 3; i++)
		if (h.fdmask & (1u << i))
			stdio[i] = k < nfds ? fds[k++] : -1;
	if (k != nfds || (head = take_strings(&p, end, 2)) == NULL || h.argc == 0 ||
	    (argv = take_strings(&p, end, h.argc)) == NULL ||
	    (env = take_strings(&p, end, h.envc)) == NULL) {
		said->rc = -EINVAL;
		snprintf(said->why, sizeof said->why, "a malformed request");
	} else {
		int rc;
		char *why = NULL;
		pid_t pid = make_child(head[0], argv, env, head[1][0] ? head[1] : NULL, stdio,
				       h.detach, parents, &rc, &why);
		said->rc = rc;
		said->pid = pid > 0 ? pid : 0;
		if (why)
			snprintf(said->why, sizeof said->why, "%s", why);
		free(why);
	}
	free(head);
	free(argv);
	free(env);
}

/*
 * A run on its way to the spawner. If the spawner goes first, it fails:
 * the spawner may have made it already, and a merge or a commit is not
 * run twice.
 */
struct started {
	spawn_started_fn *fn;
	void *arg;
};

static void run_answer(void *arg, int rc, const char *why, int fd, pid_t pid)
{
	struct started *s = arg;
	if (fd >= 0)
		close(fd);
	s->fn(s->arg, rc, pid > 0 ? pid : 0, why);
	free(s);
}

int spawn_run(const struct spawn_run *r, spawn_started_fn *started, void *arg)
{
	char *path = resolve(r->argv[0]);
	if (path == NULL)
		return -errno;
	char *const *env = r->env ? r->env : environ;
	size_t argc = count(r->argv), envc = count(env);
	struct run_head h = {
		.kind = 'R', .detach = r->detach, .argc = (uint32_t)argc, .envc = (uint32_t)envc};
	int fds[3], nfds = 0;
	for (int i = 0; i < 3; i++)
		if (r->fds[i] >= 0) {
			h.fdmask |= (uint8_t)(1u << i);
			fds[nfds++] = r->fds[i];
		}
	struct buf req = {0};
	buf_add(&req, &h, sizeof h);
	buf_add(&req, path, strlen(path) + 1);
	buf_add(&req, r->cwd ? r->cwd : "", strlen(r->cwd ? r->cwd : "") + 1);
	add_strings(&req, r->argv, argc);
	add_strings(&req, env, envc);
	free(path);
	struct started *s = xcalloc(1, sizeof *s);
	s->fn = started;
	s->arg = arg;
	int rc = 0;
	if (spawner_ask(req.data, req.len, fds, nfds, run_answer, s) < 0) {
		/* Served here: a fork of this process, waited for until it has exec'd. */
		free(s);
		struct said said = {0};
		serve_run(req.data, req.len, fds, nfds, false, &said);
		if (said.pid > 0)
			started(arg, said.rc, said.pid, said.rc < 0 ? said.why : NULL);
		else
			rc = said.rc;
	}
	buf_free(&req);
	return rc;
}

/* ---- the spawner ---- */

int spawner_main(const char *self_exe)
{
	signal(SIGHUP, SIG_IGN); /* the dashboard's terminal hanging up detaches it */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	char *buf = xmalloc(SPAWN_REQ_MAX + 1);
	for (;;) {
		int fds[3];
		char ctl[CMSG_SPACE(sizeof fds)];
		struct iovec iov = {.iov_base = buf, .iov_len = SPAWN_REQ_MAX + 1};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctl,
				   .msg_controllen = sizeof ctl};
		ssize_t n = recvmsg(3, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		int nfds = 0;
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
		}
		struct said said = {0};
		int fd = -1;
		pid_t first = 0;
		if (n > SPAWN_REQ_MAX || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			said.rc = -EMSGSIZE;
			snprintf(said.why, sizeof said.why, "the request is too large");
		} else if (buf[0] == 'R' && (size_t)n >= sizeof(struct run_head)) {
			serve_run(buf, (size_t)n, fds, nfds, true, &said);
		} else {
			buf[n] = '\0';
			char *cause = NULL;
			fd = keeper_spawn_spec(self_exe, buf, &first, &cause);
			said.rc = fd < 0 ? fd : 0;
			said.pid = fd < 0 ? 0 : first; /* the keeper's process group */
			if (fd < 0)
				snprintf(said.why, sizeof said.why, "%s",
					 cause ? cause : "a malformed spec");
			free(cause);
		}
		explicit_bzero(buf, (size_t)WRX_MIN(n, SPAWN_REQ_MAX));
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		char out[CMSG_SPACE(sizeof(int))] = {0};
		struct iovec oiov = {.iov_base = &said, .iov_len = sizeof said};
		struct msghdr om = {.msg_iov = &oiov, .msg_iovlen = 1};
		if (fd >= 0) {
			om.msg_control = out;
			om.msg_controllen = sizeof out;
			struct cmsghdr *oc = CMSG_FIRSTHDR(&om);
			oc->cmsg_level = SOL_SOCKET;
			oc->cmsg_type = SCM_RIGHTS;
			oc->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(oc), &fd, sizeof fd);
		}
		while (sendmsg(3, &om, MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
		if (fd >= 0)
			close(fd);
		while (first > 0 && waitpid(first, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(buf);
	return 0;
}
