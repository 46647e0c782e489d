/*
 * cmd_keepers.c - the keepers from the command line: `workrex attach
 * HANDLE` and `workrex watch HANDLE` (one agent's pane in this terminal,
 * from its keeper, with or without a dashboard elsewhere), and `workrex
 * shutdown` (every keeper of the project ended).
 *
 * attach is the pane's writer while it runs (a dashboard that had the
 * pane watches it meanwhile, and writes again after): keys go to the
 * program as the terminal sends them, the pane takes this terminal's size,
 * C-b d detaches. watch only looks: nothing typed reaches the program;
 * q, C-c or C-b d leave. The pane is drawn from its mirror, each changed
 * row as one line with its colours, on the terminal's alternate screen.
 */
#include "cmd.h"

#include "../keeper/client.h"
#include "../keeper/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#define PREFIX 0x02 /* C-b */

struct view {
	uv_loop_t *loop;
	struct pane *m;
	struct keeper_conn *conn;
	bool writer;
	bool prefixed; /* C-b came: d detaches, C-b sends one */
	int colours;
	const char *why; /* why it ended, or NULL: detached */
	uv_poll_t in;
	uv_signal_t winch, term;
	struct buf out;
};

static void flush_out(struct view *v)
{
	(void)fd_write_all(STDOUT_FILENO, v->out.data,
			   v->out.len); /* a terminal gone: its EOF ends us */
	buf_consume(&v->out, v->out.len);
}

static void draw(struct view *v, bool all)
{
	struct buf *o = &v->out;
	int rows = pane_rows(v->m);
	struct winsize ws = {0};
	ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	int height = ws.ws_row ? ws.ws_row : rows;
	buf_addstr(o, "\033[?25l");
	for (int r = 0; r < rows && r < height; r++) {
		if (!all && !pane_row_dirty(v->m, r))
			continue;
		buf_addf(o, "\033[%d;1H\033[0m", r + 1);
		pane_line_append_sgr(v->m, r, v->colours, o);
		buf_addstr(o, "\033[0m\033[K");
	}
	if (all)
		buf_addf(o, "\033[%d;1H\033[0m\033[J", WRX_MIN(rows, height) + 1);
	pane_clean(v->m);
	int crow, ccol, shape;
	bool visible;
	pane_cursor(v->m, &crow, &ccol, &visible, &shape);
	buf_addf(o, "\033[%d;%dH\033[%d q%s", crow + 1, ccol + 1,
		 shape == WRX_CURSOR_BAR         ? 6
		 : shape == WRX_CURSOR_UNDERLINE ? 4
						 : 2,
		 visible ? "\033[?25h" : "");
	/* The program's mouse wishes are the terminal's, so that clicks reach it as it asked. */
	buf_addstr(o, pane_mouse_mode(v->m) ? "\033[?1002h\033[?1006h" : "\033[?1002l\033[?1006l");
	flush_out(v);
}

static void on_event(struct pane *p, int events, void *data)
{
	struct view *v = data;
	(void)p;
	if (events & PANE_EV_EXIT) {
		int status = 0;
		pane_exited(v->m, &status);
		v->why = status == PANE_LOST ? "its keeper went" : "its program ended";
		uv_stop(v->loop);
		return;
	}
	draw(v, false);
}

static void send_size(struct view *v)
{
	struct winsize ws;
	if (v->writer && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		pane_resize(v->m, ws.ws_row, ws.ws_col);
	draw(v, true);
}

static void on_winch(uv_signal_t *h, int sig)
{
	(void)sig;
	send_size(h->data);
}

static void on_term(uv_signal_t *h, int sig)
{
	struct view *v = h->data;
	(void)sig;
	v->why = "ended by a signal";
	uv_stop(v->loop);
}

static void on_input(uv_poll_t *h, int status, int events)
{
	struct view *v = h->data;
	(void)events;
	char b[4096];
	ssize_t n = status < 0 ? -1 : read(STDIN_FILENO, b, sizeof b);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		v->why = "the terminal went";
		uv_stop(v->loop);
		return;
	}
	/* Bytes go on as typed, but the prefix: C-b d detaches, C-b C-b is one C-b. */
	struct buf send = {0};
	for (ssize_t i = 0; i < n; i++) {
		char c = b[i];
		if (v->prefixed) {
			v->prefixed = false;
			if (c == 'd') {
				v->why = NULL;
				uv_stop(v->loop);
				break;
			}
			buf_addch(&send, PREFIX);
			if (c != PREFIX)
				buf_addch(&send, c);
		} else if (c == PREFIX) {
			v->prefixed = true;
		} else if (!v->writer && (c == 'q' || c == 0x03)) {
			v->why = NULL;
			uv_stop(v->loop);
			break;
		} else {
			buf_addch(&send, c);
		}
	}
	if (v->writer && send.len)
		pane_write(v->m, send.data, send.len);
	buf_free(&send);
}

/* The socket of the agent's first pane that a keeper holds, or NULL (caller frees). */
static char *agent_socket(const char *root, const char *handle, char **cause)
{
	char *dir = keeper_dir(root, cause);
	if (dir == NULL)
		return NULL;
	struct keeper_entry *e;
	size_t n = keeper_list(dir, &e);
	free(dir);
	char *path = NULL;
	for (size_t i = 0; i < n && path == NULL; i++) /* by pane id: its first pane first */
		if (e[i].info.handle && !strcmp(e[i].info.handle, handle))
			path = xstrdup(e[i].path);
	keeper_list_free(e, n);
	if (path == NULL)
		*cause = xasprintf("no pane of '%s' runs (workrex open %s starts it)", handle,
				   handle);
	return path;
}

static int view(struct cmd_ctx *ctx, const char *what, bool writer)
{
	struct agent_rec a;
	int rc = cmd_which_agent(ctx, what, cmd_arg(ctx, 0), &a);
	if (rc)
		return rc;
	char *cause = NULL;
	/* On a server: its keeper there, forwarded here through the link. */
	char *path = a.remote ? cmd_remote_pane(ctx, &a, &cause)
			      : agent_socket(repo_root(ctx->repo), a.handle, &cause);
	agent_rec_free(&a);
	if (path == NULL) {
		rc = cmd_fail(what, "%s", cause);
		free(cause);
		return rc;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		free(path);
		return cmd_fail(what, "needs a terminal");
	}
	signal(SIGPIPE, SIG_IGN);
	struct view v = {.loop = uv_default_loop(), .writer = writer};
	const char *ct = getenv("COLORTERM");
	v.colours = ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")) ? 0 : 256;
	v.m = pane_mirror_new(24, 80, 100, on_event, &v);
	struct keeper_info info;
	int fd = keeper_open(path, writer ? "writer" : "observer", v.m, &info, &cause);
	free(path);
	if (fd < 0) {
		pane_free(v.m);
		rc = cmd_fail(what, "%s", cause);
		free(cause);
		return rc;
	}
	keeper_info_free(&info);
	v.conn = keeper_conn_new(v.loop, fd, v.m, NULL, NULL);

	struct termios saved, raw;
	tcgetattr(STDIN_FILENO, &saved);
	raw = saved;
	cfmakeraw(&raw);
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	buf_addstr(&v.out, "\033[?1049h\033[H\033[2J");
	uv_poll_init(v.loop, &v.in, STDIN_FILENO);
	v.in.data = &v;
	uv_poll_start(&v.in, UV_READABLE, on_input);
	uv_signal_init(v.loop, &v.winch);
	uv_signal_init(v.loop, &v.term);
	v.winch.data = v.term.data = &v;
	uv_signal_start(&v.winch, on_winch, SIGWINCH);
	uv_signal_start(&v.term, on_term, SIGTERM);
	send_size(&v);

	uv_run(v.loop, UV_RUN_DEFAULT);

	buf_addstr(&v.out, "\033[?1002l\033[?1006l\033[0m\033[?25h\033[2 q\033[?1049l");
	flush_out(&v);
	tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	uv_close((uv_handle_t *)&v.in, NULL);
	uv_close((uv_handle_t *)&v.winch, NULL);
	uv_close((uv_handle_t *)&v.term, NULL);
	pane_free(v.m); /* closes the connection: the keeper goes on */
	uv_run(v.loop, UV_RUN_NOWAIT);
	buf_free(&v.out);
	/*
	 * On a line of its own: a terminal that did not give the screen back
	 * whole (no alternate screen) leaves the cursor after the pane's last
	 * line, and the goodbye, then the prompt, would follow it there.
	 */
	const char *fresh = isatty(STDERR_FILENO) ? "\r\033[K" : "";
	if (v.why)
		fprintf(stderr, "%sworkrex: %s: %s: %s\n", fresh, what, cmd_arg(ctx, 0), v.why);
	else
		fprintf(stderr, "%sworkrex: %s: detached from %s\n", fresh, what, cmd_arg(ctx, 0));
	return 0;
}

int cmd_attach(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	return view(ctx, "attach", true);
}

int cmd_watch(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	return view(ctx, "watch", false);
}

/*
 * SIGTERM to each (ending a keeper as closing its pane does; its pid is from
 * its own hello), then a wait (bounded) until every socket is gone. Those not
 * asked before are added to asked; how many that was.
 */
static int end_keepers(const struct keeper_entry *e, size_t n, pid_t **asked, size_t *nasked)
{
	int ended = 0;
	for (size_t i = 0; i < n; i++) {
		pid_t pid = e[i].info.keeper_pid;
		if (pid <= 0 || kill(pid, SIGTERM) < 0)
			continue;
		size_t j = 0;
		while (j < *nasked && (*asked)[j] != pid)
			j++;
		if (j == *nasked) {
			*asked = xrealloc(*asked, (*nasked + 1) * sizeof **asked);
			(*asked)[(*nasked)++] = pid;
			ended++;
		}
	}
	uint64_t deadline = now_ms() + 5000;
	for (size_t i = 0; i < n; i++)
		while (access(e[i].path, F_OK) == 0 && now_ms() < deadline)
			usleep(20000);
	return ended;
}

/* `workrex shutdown [-y]`: every keeper of the project ended, its program with it. */
int cmd_shutdown(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool yes = cmd_given(ctx, "yes");
	int rc = cmd_open_repo(ctx, "shutdown");
	if (rc)
		return rc;
	char *cause = NULL;
	char *dir = keeper_dir(repo_root(ctx->repo), &cause);
	if (dir == NULL) {
		rc = cmd_fail("shutdown", "%s", cause);
		free(cause);
		return rc;
	}
	struct keeper_entry *e;
	size_t n = keeper_list(dir, &e);
	/* And those of its agents on servers. */
	json_object *there = json_object_new_object();
	size_t all = n + (size_t)cmd_remote_keepers(ctx, there);
	if (all == 0) {
		cmd_sandbox_end(ctx); /* a container left from a program that went (kill -9) */
		printf("no program of this project runs\n");
		keeper_list_free(e, n);
		json_object_put(there);
		free(dir);
		return 0;
	}
	if (!yes) {
		char answer[16] = "";
		if (!isatty(STDIN_FILENO))
			rc = cmd_fail("shutdown", "%zu program%s; -y ends %s without asking", all,
				      all == 1 ? " runs" : "s run", all == 1 ? "it" : "them");
		else
			fprintf(stderr, "end %zu running program%s of this project? (y/n) ", all,
				all == 1 ? "" : "s");
		if (rc || fgets(answer, sizeof answer, stdin) == NULL || answer[0] != 'y') {
			keeper_list_free(e, n);
			json_object_put(there);
			free(dir);
			return rc ? rc : 1;
		}
	}
	/* Then the directory again: one a dashboard started meanwhile goes too. */
	int ended = 0;
	pid_t *asked = NULL;
	size_t nasked = 0;
	for (int round = 0; round < 3 && n > 0; round++) {
		ended += end_keepers(e, n, &asked, &nasked);
		keeper_list_free(e, n);
		n = keeper_list(dir, &e);
	}
	free(asked);
	free(dir);
	ended += cmd_remote_end(ctx, there);
	json_object_put(there);
	/* Their containers too: a killed `podman run` leaves its container up. */
	if (cmd_sandbox_end(ctx) != 0)
		fprintf(stderr, "workrex: shutdown: the project's containers could not all be "
				"removed; `workrex sandbox stop` tries again\n");
	printf("ended %d program%s\n", ended, ended == 1 ? "" : "s");
	keeper_list_free(e, n);
	return 0;
}
