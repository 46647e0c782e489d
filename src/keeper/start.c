/*
 * start.c - starting a keeper: `workrex-keeper __keeper` (or `workrex
 * __keeper`, the same code, where that is not installed) spawned with its spec,
 * and its answer heard, waiting (keeper_start) or on a loop
 * (keeper_start_async, through the spawner when the loop has one:
 * spawner.h).
 */
#include "keeper.h"

#include "../util/log.h"
#include "../util/util.h"
#include "proto.h"
#include "spawner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a keeper has to listen and run its program. */
#define START_TIMEOUT_MS 10000

/*
 * Run `workrex __keeper` detached (its own session, then a child of that)
 * with spec on its stdin: the read end of its answer pipe, or -errno with
 * *cause; *first is the process to reap once it answers.
 */
static int spawn(const char *self_exe, json_object *spec, pid_t *first, char **cause)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0) {
		*cause = xasprintf("pipe: %s", strerror(errno));
		return -errno;
	}
	if (pipe2(out, O_CLOEXEC) < 0) {
		int e = errno;
		close(in[0]);
		close(in[1]);
		*cause = xasprintf("pipe: %s", strerror(e));
		return -e;
	}
	/*
	 * posix_spawn (a vfork: the caller's loop waits for an exec, not for a
	 * copy of its memory, which grows with its panes), in its own session;
	 * keeper_main forks once more at once, so that the keeper is not the
	 * session's leader, and that first child is reaped once the keeper
	 * answers (reap).
	 */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
	/* The keeper's own program where it is installed (bin.c), else this one's keeper. */
	char *dir = path_parent(self_exe), *small = xasprintf("%s/workrex-keeper", dir);
	const char *exe = access(small, X_OK) == 0 ? small : self_exe;
	char *argv[] = {(char *)exe, "__keeper", NULL};
	pid_t pid;
	int e = posix_spawn(&pid, exe, &fa, &at, argv, environ);
	free(small);
	free(dir);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(in[0]);
	close(out[1]);
	if (e != 0) {
		close(in[1]);
		close(out[0]);
		*cause = xasprintf("cannot start a keeper (%s): %s", self_exe, strerror(e));
		return -e;
	}
	*first = pid;
	const char *s = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN);
	/* A keeper that died first costs an EPIPE (callers ignore SIGPIPE); its answer says so. */
	(void)fd_write_all(in[1], s, strlen(s));
	close(in[1]);
	return out[0];
}

/* The keeper's first process: it forks the keeper and goes at once. */
static void reap(pid_t first)
{
	while (first > 0 && waitpid(first, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * A keeper that has not answered in time ends: told it did not start, its
 * caller forgets it, and a keeper that answered later (a loaded machine)
 * would run on unknown to anyone. It is the leader's child in the group
 * the spawn made (POSIX_SPAWN_SETSID): the group's number stays taken
 * while the keeper is in it, so the signal reaches it or nobody. Its
 * program, in a session of its own, goes with its pty; its socket and
 * the link naming its agent, if it made them, go here (a keeper ended
 * before its handler is set leaves them).
 */
static void end_unheard(pid_t group, const char *socket)
{
	if (group > 0)
		kill(-group, SIGTERM);
	if (socket && *socket) {
		char *link = keeper_beside(socket, "agent");
		unlink(socket);
		if (link)
			unlink(link);
		free(link);
	}
}

/* Where spec's keeper listens: "" for none. */
static const char *spec_socket(json_object *spec)
{
	json_object *v;
	return json_object_object_get_ex(spec, "socket", &v) ? json_object_get_string(v) : "";
}

/* The answer so far: 1 "ok", 0 more to come, -ECHILD with *cause: why not. */
static int answer(const struct buf *ans, bool ended, char **cause)
{
	if (ans->len >= 3 && !memcmp(ans->data, "ok\n", 3))
		return 1;
	const char *nl = ans->data ? memchr(ans->data, '\n', ans->len) : NULL;
	if (nl == NULL && !ended)
		return 0;
	*cause = ans->len ? xstrndup(ans->data, nl ? (size_t)(nl - ans->data) : ans->len)
			  : xstrdup("the keeper died as it started");
	return -ECHILD;
}

int keeper_start(const char *self_exe, json_object *spec, char **cause)
{
	pid_t first;
	int fd = spawn(self_exe, spec, &first, cause);
	if (fd < 0)
		return fd;
	struct buf ans = {0};
	uint64_t deadline = now_ms() + START_TIMEOUT_MS;
	int rc = 0;
	while (rc == 0) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int left = (int)(deadline - WRX_MIN(now_ms(), deadline));
		int r = poll(&pf, 1, left);
		if (r < 0 && errno == EINTR)
			continue;
		char b[512];
		ssize_t n = r > 0 ? read(fd, b, sizeof b) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			buf_add(&ans, b, (size_t)n);
		if (r == 0) {
			end_unheard(first, spec_socket(spec));
			*cause = xstrdup("the keeper did not start in time");
			rc = -ETIMEDOUT;
			break;
		}
		rc = answer(&ans, n <= 0, cause);
	}
	close(fd);
	buf_free(&ans);
	reap(first);
	return rc < 0 ? rc : 0;
}

/* ---- the same on a loop ---- */

struct start {
	uv_pipe_t out;
	uv_timer_t timer;
	struct buf ans;
	keeper_started_fn *done;
	void *arg;
	pid_t first;  /* reaped at the end (0: the spawner's child, not ours) */
	pid_t group;  /* the keeper's process group: first, ours or the spawner's */
	char *socket; /* where it listens (owned) */
	int open;     /* handles not closed yet */
	bool queued;  /* the spawner's answer, with the pipe, is still to come */
};

static void start_free(struct start *st)
{
	if (st->open == 0 && !st->queued) {
		buf_free(&st->ans);
		free(st->socket);
		free(st);
	}
}

static void start_closed(uv_handle_t *h)
{
	struct start *st = h->data;
	st->open--;
	start_free(st);
}

static void start_end(struct start *st, int rc, const char *cause)
{
	reap(st->first);
	if (st->done)
		st->done(st->arg, rc, cause);
	st->done = NULL;
	uv_close((uv_handle_t *)&st->out, start_closed);
	uv_close((uv_handle_t *)&st->timer, start_closed);
}

static void start_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct start *st = h->data;
	(void)want;
	keeper_read_room(&st->ans, 512, b);
}

static void start_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct start *st = s->data;
	(void)b;
	if (st->done == NULL)
		return;
	if (n > 0)
		st->ans.len += (size_t)n;
	char *cause = NULL;
	int rc = n == 0 ? 0 : answer(&st->ans, n < 0, &cause);
	if (rc != 0) {
		uv_read_stop(s);
		start_end(st, rc < 0 ? rc : 0, cause);
	}
	free(cause);
}

static void start_timeout(uv_timer_t *t)
{
	struct start *st = t->data;
	uv_read_stop((uv_stream_t *)&st->out);
	end_unheard(st->group, st->socket);
	start_end(st, -ETIMEDOUT, "the keeper did not start in time");
}

/* The answer pipe fd of st, on the loop: 0, or -errno with st ended. */
static int start_listen(struct start *st, int fd)
{
	int rc = uv_pipe_open(&st->out, fd);
	if (rc == 0)
		rc = uv_read_start((uv_stream_t *)&st->out, start_alloc, start_read);
	if (rc < 0) {
		close(fd);
		char *why = xasprintf("the keeper's answer: %s", uv_strerror(rc));
		start_end(st, rc, why);
		free(why);
	}
	return rc;
}

/*
 * The spawner's answer to a keeper's start (spawner.h): the keeper's
 * answer pipe and process group, or why not. A start that timed out
 * meanwhile ends its keeper unheard.
 */
static void spawned(void *arg, int rc, const char *why, int fd, pid_t pid)
{
	struct start *st = arg;
	st->queued = false;
	st->group = pid;
	if (st->done == NULL) {
		if (fd >= 0) {
			end_unheard(pid, st->socket);
			close(fd);
		}
		start_free(st);
	} else if (rc == 0 && fd >= 0) {
		start_listen(st, fd);
	} else {
		if (fd >= 0)
			close(fd);
		start_end(st, rc ? rc : -EPROTO, why ? why : "no pipe");
	}
}

int keeper_start_async(uv_loop_t *loop, const char *self_exe, json_object *spec,
		       keeper_started_fn *done, void *arg, char **cause)
{
	struct start *st = xcalloc(1, sizeof *st);
	st->done = done;
	st->arg = arg;
	uv_pipe_init(loop, &st->out, 0);
	uv_timer_init(loop, &st->timer);
	st->out.data = st->timer.data = st;
	st->open = 2;
	st->socket = xstrdup(spec_socket(spec));
	uv_timer_start(&st->timer, start_timeout, START_TIMEOUT_MS, 0);
	const char *text = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN);
	if (spawner_ask(text, strlen(text), NULL, 0, spawned, st) == 0) {
		st->queued = true;
		return 0;
	}
	int fd = spawn(self_exe, spec, &st->first, cause);
	if (fd < 0) {
		st->done = NULL;
		uv_close((uv_handle_t *)&st->out, start_closed);
		uv_close((uv_handle_t *)&st->timer, start_closed);
		return fd;
	}
	st->done = NULL; /* an error now is told to the caller, not to done */
	st->group = st->first;
	int rc = uv_pipe_open(&st->out, fd);
	if (rc == 0)
		rc = uv_read_start((uv_stream_t *)&st->out, start_alloc, start_read);
	if (rc < 0) {
		*cause = xasprintf("the keeper's answer: %s", uv_strerror(rc));
		start_end(st, rc, NULL);
		return rc;
	}
	st->done = done;
	return 0;
}

int keeper_spawn_spec(const char *self_exe, const char *text, pid_t *first, char **cause)
{
	json_object *spec = json_tokener_parse(text);
	int fd = spec ? spawn(self_exe, spec, first, cause) : -EINVAL;
	json_object_put(spec);
	return fd;
}
