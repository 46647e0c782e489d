/*
 * agents.c - worktree agents in the dashboard: listing them at start,
 * opening their panes, answering the control socket, and the keys that run
 * workrex commands (n, m, X, :).
 *
 * Git work never runs on the loop. A key that adds, merges or removes an
 * agent starts `workrex add|merge|remove` as a child process; that command
 * does the work and tells this dashboard through the control socket to open,
 * close or forget the agent's panes. The child's last line of output becomes
 * the message on the status line.
 */
#include "../core/agentcmd.h"
#include "../git/private.h"
#include "../git/worktree.h"
#include "../rpc/control.h"
#include "../util/beneath.h"
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void agents_load(struct ui *ui)
{
	struct repo *r = NULL;
	char *cause = NULL;
	if (repo_open(ui->root, &r, &cause) < 0) {
		free(cause);
		return;
	}
	struct agent_rec *as;
	size_t n;
	if (agent_list(r, &as, &n, &cause) == 0) {
		/* Those with a recorded number first, so that others cannot take it. */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < n; i++) {
				if ((as[i].number > 0) != (pass == 0) ||
				    session_find_agent(ui->s, as[i].handle))
					continue;
				struct agent *a = session_add_agent(ui->s, as[i].handle, as[i].path);
				session_set_agent_num(ui->s, a, as[i].number);
				a->worktree = true;
				a->branch = as[i].branch ? xstrdup(as[i].branch) : NULL;
				a->agent = as[i].agent ? xstrdup(as[i].agent) : NULL;
				a->sandbox = as[i].sandbox;
			}
		}
		for (size_t i = 0; i < n; i++)
			agent_rec_free(&as[i]);
		free(as);
	} else {
		ui_message(ui, true, "listing agents: %s", cause);
		free(cause);
	}
	repo_free(r);
}

/*
 * The prompt file for a first open, if one waits (caller frees). The
 * worktree may be a sandbox's: neither file is followed through a symlink.
 */
static char *pending_prompt(struct agent *a)
{
	int dir = beneath_dir(a->path, ".workrex", false, 0);
	if (dir < 0)
		return NULL;
	char *name = xasprintf("PROMPT-%s.md", a->handle);
	struct stat st;
	bool ok = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
	if (ok) {
		int fd = openat(dir, ".prompted", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0644);
		ok = fd >= 0; /* there already: it was used */
		if (fd >= 0)
			close(fd);
	}
	close(dir);
	char *file = ok ? xasprintf("%s/.workrex/%s", a->path, name) : NULL;
	free(name);
	return file;
}

/*
 * An agent spawned from a sandbox has its post_create waiting in its
 * host-only dir (worktree.c): its first sandboxed agent pane runs it
 * inside the container, then the agent. Caller frees; line is taken.
 */
static char *with_setup(struct ui *ui, struct agent *a, char *line)
{
	char *dir = private_agent_dir(ui->root, a->handle, false), *setup = NULL;
	if (dir && beneath_read(dir, "setup", 1u << 20, &setup) == 0) {
		char *f = xasprintf("%s/setup", dir);
		unlink(f);
		free(f);
		char *both = xasprintf("%s%s", setup, line);
		free(line);
		line = both;
	}
	free(setup);
	free(dir);
	return line;
}

int agents_open(struct ui *ui, struct agent *a, bool focus, bool cont, char **cause)
{
	if (session_agent_panes(ui->s, a) > 0) {
		if (focus)
			session_set_focus(ui->s, session_agent_pane(ui->s, a));
		return 0;
	}
	int rows = WRX_MAX(ui->area.h - 1, 1), cols = WRX_MAX(ui->area.w, 1);
	/* Its own (add -a), else the configured one. */
	const char *name = a->agent ? a->agent : agentcmd_default(&ui->cfg);
	char *prompt = a->worktree && !cont ? pending_prompt(a) : NULL;
	size_t n = ui->cfg.npanes ? ui->cfg.npanes : 2;
	struct wpane *first = NULL, *focused = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *spec = ui->cfg.npanes ? ui->cfg.panes[i].command : (i == 0 ? "<agent>" : NULL);
		char *line;
		const char *label;
		bool is_agent = spec && strcmp(spec, "<agent>") == 0;
		bool boxed = sandbox_pane_wanted(ui, a, is_agent);
		if (is_agent) {
			line = agentcmd_build_sandboxed(&ui->cfg, name, prompt, cont, boxed);
			if (boxed)
				line = with_setup(ui, a, line);
			label = name ? name : "shell";
		} else if (spec) {
			line = xasprintf("exec %s", spec);
			label = spec;
		} else {
			line = agentcmd_build(&ui->cfg, NULL, NULL, false); /* the user's shell */
			label = "shell";
		}
		char *argv[] = {"/bin/sh", "-c", line, NULL};
		struct wpane *wp = session_open_pane_ex(ui->s, a, argv, label, rows, cols, false, boxed,
							cause);
		free(line);
		if (wp == NULL) {
			free(prompt);
			return -EIO;
		}
		if (first == NULL)
			first = wp;
		if (ui->cfg.npanes && ui->cfg.panes[i].focus)
			focused = wp;
	}
	if (prompt && !agentcmd_takes_prompt(&ui->cfg, name))
		ui_message(ui, false, "%s: %s takes no prompt argument; the prompt is in "
				      "$WORKREX_PROMPT_FILE ({prompt} in its command passes it)",
			   a->handle, name ? name : "the shell");
	free(prompt);
	if (focus)
		session_set_focus(ui->s, focused ? focused : first);
	ui_relayout(ui);
	return 0;
}

static json_object *err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_object *err(const char *fmt, ...)
{
	json_object *r = json_object_new_object();
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	json_object_object_add(r, "error", json_object_new_string(msg));
	free(msg);
	return r;
}

static const char *str_field(json_object *req, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool bool_field(json_object *req, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(req, key, &v) && json_object_get_boolean(v);
}

/*
 * Find an agent by handle; an "open" for one not listed yet (created by
 * `workrex add` just now) brings its path and branch, so no git is read here.
 */
static struct agent *lookup(struct ui *ui, json_object *req, const char *handle, bool learn)
{
	struct agent *a = session_find_agent(ui->s, handle);
	const char *path = str_field(req, "path");
	if (a || !learn || path == NULL || path[0] != '/')
		return a;
	a = session_add_agent(ui->s, handle, path);
	a->worktree = true;
	const char *branch = str_field(req, "branch"), *agent = str_field(req, "agent");
	a->branch = branch ? xstrdup(branch) : NULL;
	a->agent = agent ? xstrdup(agent) : NULL;
	json_object *num;
	if (json_object_object_get_ex(req, "number", &num) && json_object_is_type(num, json_type_int))
		session_set_agent_num(ui->s, a, json_object_get_int(num));
	json_object *sb;
	if (json_object_object_get_ex(req, "sandbox", &sb) && json_object_is_type(sb, json_type_boolean))
		a->sandbox = json_object_get_boolean(sb);
	return a;
}

static json_object *capture(struct ui *ui, struct agent *a, json_object *req)
{
	struct wpane *wp = session_agent_pane(ui->s, a);
	if (wp == NULL)
		return err("'%s' has no open pane", a->handle);
	json_object *v;
	int lines = -1;
	if (json_object_object_get_ex(req, "lines", &v))
		lines = json_object_get_int(v);
	int hist = (int)pane_history(wp->term), rows = pane_rows(wp->term);
	/* The screen without its trailing blank lines. */
	int last = rows - 1;
	for (; last >= 0; last--) {
		char *t = pane_line_text(wp->term, last);
		bool blank = *t == '\0';
		free(t);
		if (!blank)
			break;
	}
	int from = -hist;
	if (lines >= 0 && last + 1 - lines > from)
		from = last + 1 - lines;
	struct buf b = {0};
	bool colour = bool_field(req, "colour");
	for (int l = from; l <= last; l++) {
		if (colour)
			pane_line_append_sgr(wp->term, l, &b);
		else
			pane_line_append(wp->term, l, 0, 4095, &b);
		buf_addch(&b, '\n');
	}
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	json_object_object_add(r, "data", json_object_new_string(b.data ? b.data : ""));
	buf_free(&b);
	return r;
}

json_object *agents_control(json_object *req, void *data)
{
	struct ui *ui = data;
	const char *cmd = str_field(req, "cmd");
	if (strcmp(cmd, "ping") == 0)
		return NULL;
	if (strcmp(cmd, "list") == 0) {
		json_object *arr = json_object_new_array();
		for (int i = 0; i < session_agent_count(ui->s); i++) {
			struct agent *a = session_agent(ui->s, i);
			json_object *o = json_object_new_object();
			uint64_t now = now_ms();
			json_object_object_add(o, "handle", json_object_new_string(a->handle));
			json_object_object_add(o, "status",
					       a->status != WRX_STATUS_NONE
						       ? json_object_new_string(status_word(a->status))
						       : NULL);
			json_object_object_add(o, "interrupted",
					       json_object_new_boolean(session_interrupted(ui->s, a, now)));
			json_object_object_add(o, "since_ms",
					       json_object_new_int64((int64_t)(now - WRX_MIN(now, a->status_since))));
			if (a->title)
				json_object_object_add(o, "title", json_object_new_string(a->title));
			json_object_object_add(o, "panes",
					       json_object_new_int(session_agent_panes(ui->s, a)));
			json_object_array_add(arr, o);
		}
		json_object *r = json_object_new_object();
		json_object_object_add(r, "ok", json_object_new_boolean(1));
		json_object_object_add(r, "agents", arr);
		return r;
	}
	if (strcmp(cmd, "reload") == 0) {
		struct strlist warnings = {0};
		char *cause = NULL;
		if (ui_config_reload(ui, &warnings, &cause) < 0) {
			json_object *r = err("%s", cause);
			free(cause);
			return r;
		}
		json_object *r = json_object_new_object(), *arr = json_object_new_array();
		for (size_t i = 0; i < warnings.n; i++)
			json_object_array_add(arr, json_object_new_string(warnings.v[i]));
		json_object_object_add(r, "ok", json_object_new_boolean(1));
		json_object_object_add(r, "warnings", arr);
		strlist_free(&warnings);
		ui_message(ui, false, "config reloaded (workrex config reload)");
		trust_ask(ui);
		return r;
	}
	const char *handle = str_field(req, "handle");
	if (handle == NULL)
		return err("%s needs \"handle\"", cmd);
	struct agent *a = lookup(ui, req, handle, strcmp(cmd, "open") == 0);
	/* add made its sandbox's git dir a moment ago: its first pane need not. */
	if (a && strcmp(cmd, "open") == 0 && bool_field(req, "git_ready"))
		a->git_ready = true;
	if (a == NULL)
		return strcmp(cmd, "close") == 0 || strcmp(cmd, "forget") == 0 ||
				       strcmp(cmd, "rename") == 0
			       ? NULL /* nothing open: nothing to do */
			       : err("no agent '%s' in this dashboard", handle);
	if (strcmp(cmd, "open") == 0) {
		char *cause = NULL;
		if (agents_open(ui, a, bool_field(req, "focus"), bool_field(req, "continue"),
				&cause) < 0) {
			json_object *r = err("%s", cause);
			free(cause);
			return r;
		}
		return NULL;
	}
	if (strcmp(cmd, "close") == 0) {
		struct wpane *wp;
		while ((wp = session_agent_pane(ui->s, a)) != NULL)
			session_close_pane(ui->s, wp);
		ui_relayout(ui);
		return NULL;
	}
	if (strcmp(cmd, "rename") == 0) {
		const char *to = str_field(req, "to"), *path = str_field(req, "to_path");
		if (to == NULL || path == NULL || path[0] != '/')
			return err("rename needs \"to\" and \"to_path\"");
		/* Its programs run in the old directory, its sandbox has it mounted. */
		if (session_agent_panes(ui->s, a) > 0)
			return err("'%s' has open panes; close them first (workrex close %s)", handle,
				   handle);
		if (session_find_agent(ui->s, to))
			return err("an agent named '%s' is in the dashboard already", to);
		session_rename_agent(ui->s, a, to, path, str_field(req, "to_branch"));
		ui_relayout(ui);
		return NULL;
	}
	if (strcmp(cmd, "forget") == 0) {
		session_remove_agent(ui->s, a);
		ui_relayout(ui);
		return NULL;
	}
	if (strcmp(cmd, "send") == 0) {
		struct wpane *wp = session_agent_pane(ui->s, a);
		const char *text = str_field(req, "text");
		if (wp == NULL)
			return err("'%s' has no open pane", handle);
		if (text)
			pane_paste(wp->term, text, strlen(text));
		if (bool_field(req, "enter"))
			pane_write(wp->term, "\r", 1);
		return NULL;
	}
	if (strcmp(cmd, "capture") == 0)
		return capture(ui, a, req);
	return err("unknown command '%s'", cmd);
}

/* ---- workrex commands run from keys ---- */

struct cli_run {
	uv_process_t proc; /* proc.data = this */
	uv_pipe_t out;
	struct buf text;
	struct ui *ui;
	int closing;
	int64_t status;
	char *what; /* owned */
	cli_done_fn *done; /* or NULL: the outcome becomes a message */
	void *done_arg;
	char *shown; /* owned: the command line, when its whole output is to be shown */
};

static void cli_maybe_done(struct cli_run *r)
{
	if (r->closing < 2)
		return;
	struct ui *ui = r->ui;
	while (r->text.len && (r->text.data[r->text.len - 1] == '\n'))
		r->text.data[--r->text.len] = '\0';
	const char *last = r->text.data ? strrchr(r->text.data, '\n') : NULL;
	last = last ? last + 1 : (r->text.data ? r->text.data : "");
	if (strncmp(last, "workrex: ", 9) == 0)
		last += 9;
	if (r->done) {
		r->done(ui, (int)r->status, last, r->done_arg);
	} else if (r->shown && !ui->quitting && r->text.data && strchr(r->text.data, '\n')) {
		char *title = xasprintf("%s%s", r->shown, r->status ? "  (failed)" : "");
		textview_open(ui, title, r->text.data);
		free(title);
	} else if (!ui->quitting) {
		if (r->status == 0 && *last)
			ui_message(ui, false, "%s", last);
		else if (r->status == 0)
			ui_message(ui, false, "%s done", r->what);
		else
			ui_message(ui, true, "%s", *last ? last : "failed");
	}
	buf_free(&r->text);
	free(r->what);
	free(r->shown);
	free(r);
	trust_ask(ui); /* a merge may have brought a new project config */
}

static void cli_closed(uv_handle_t *h)
{
	struct cli_run *r = h->data;
	r->closing++;
	cli_maybe_done(r);
}

static void cli_exit(uv_process_t *p, int64_t status, int sig)
{
	struct cli_run *r = p->data;
	r->status = sig ? 128 + sig : status;
	uv_close((uv_handle_t *)p, cli_closed);
}

static void cli_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[16384];
	*b = uv_buf_init(slab, sizeof slab);
}

static void cli_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct cli_run *r = s->data;
	if (n < 0) {
		uv_close((uv_handle_t *)s, cli_closed);
		return;
	}
	if (n == 0)
		return;
	buf_add(&r->text, b->base, (size_t)n);
	/* Keep the tail only: the last line is the outcome, the rest is progress. */
	if (r->text.len > 65536)
		buf_consume(&r->text, r->text.len - 32768);
	/* A long command (an image build, a pull) shows its latest line as it goes. */
	if (r->done == NULL && !r->ui->quitting) {
		char *end = r->text.data + r->text.len;
		while (end > r->text.data && (end[-1] == '\n' || end[-1] == '\r'))
			end--;
		char *start = end;
		while (start > r->text.data && start[-1] != '\n' && start[-1] != '\r')
			start--;
		if (end > start)
			ui_message(r->ui, false, "%s %.*s", r->what, (int)WRX_MIN(end - start, 200), start);
	}
}

static void run_cli(struct ui *ui, char *const args[], cli_done_fn *done, void *arg, char *shown);

void agents_run_cli(struct ui *ui, char *const args[])
{
	run_cli(ui, args, NULL, NULL, NULL);
}

void agents_run_cli_then(struct ui *ui, char *const args[], cli_done_fn *done, void *arg)
{
	run_cli(ui, args, done, arg, NULL);
}

void agents_run_cli_shown(struct ui *ui, char *const args[])
{
	struct buf line = {0};
	buf_addstr(&line, "workrex");
	for (size_t i = 0; args[i]; i++)
		buf_addf(&line, " %s", args[i]);
	run_cli(ui, args, NULL, NULL, line.data);
}

/* shown (taken): the command line, to show an output of more than one line whole. */
static void run_cli(struct ui *ui, char *const args[], cli_done_fn *done, void *arg, char *shown)
{
	size_t n = 0;
	while (args[n])
		n++;
	char **argv = xcalloc(n + 2, sizeof *argv);
	argv[0] = ui->self_exe;
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = args[i];
	struct cli_run *r = xcalloc(1, sizeof *r);
	r->ui = ui;
	r->what = xasprintf("%s:", args[0]);
	r->done = done;
	r->done_arg = arg;
	r->shown = shown;
	uv_file fds[2];
	int prc = uv_pipe(fds, 0, 0);
	if (prc < 0) {
		ui_message(ui, true, "cannot run workrex %s: %s", args[0], uv_strerror(prc));
		if (done)
			done(ui, 127, uv_strerror(prc), arg);
		free(argv);
		free(r->what);
		free(r->shown);
		free(r);
		return;
	}
	uv_pipe_init(ui->loop, &r->out, 0);
	uv_pipe_open(&r->out, fds[0]);
	r->out.data = r->proc.data = r;
	/* stderr joins stdout: the command's last line is what the user sees. */
	uv_stdio_container_t stdio[3] = {
		{.flags = UV_IGNORE},
		{.flags = UV_INHERIT_FD, .data.fd = fds[1]},
		{.flags = UV_INHERIT_FD, .data.fd = fds[1]},
	};
	uv_process_options_t o = {.file = ui->self_exe,
				  .args = argv,
				  .cwd = ui->root,
				  .exit_cb = cli_exit,
				  .stdio_count = 3,
				  .stdio = stdio};
	int rc = uv_spawn(ui->loop, &r->proc, &o);
	close(fds[1]);
	free(argv);
	if (rc < 0) {
		ui_message(ui, true, "cannot run workrex %s: %s", args[0], uv_strerror(rc));
		r->status = 127;
		r->closing = 1;
		uv_close((uv_handle_t *)&r->out, cli_closed);
		return;
	}
	uv_read_start((uv_stream_t *)&r->out, cli_alloc, cli_read);
}

/* n: branch name, then an optional prompt. */
static void new_prompt_answer(struct ui *ui, const char *answer, void *arg)
{
	char *branch = arg;
	if (answer == NULL) {
		free(branch);
		return;
	}
	if (*answer) {
		char *const args[] = {"add", branch, "-p", (char *)answer, NULL};
		agents_run_cli(ui, args);
	} else {
		char *const args[] = {"add", branch, NULL};
		agents_run_cli(ui, args);
	}
	ui_message(ui, false, "creating %s...", branch);
	free(branch);
}

static void new_branch_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer == NULL || *answer == '\0')
		return;
	/* What can be known without git, before the user writes a prompt for nothing. */
	char *handle = handle_from_branch(answer);
	if (!repo_branch_name_valid(answer))
		ui_message(ui, true, "new agent: '%s' is not a valid branch name", answer);
	else if (handle == NULL || !handle_valid(handle))
		ui_message(ui, true, "new agent: '%s' cannot be a worktree name", answer);
	else if (session_find_agent(ui->s, handle))
		ui_message(ui, true, "new agent: an agent named '%s' exists already", handle);
	else
		ui_prompt(ui, "prompt (Enter for none):", false, new_prompt_answer, xstrdup(answer));
	free(handle);
}

void agents_key_new(struct ui *ui)
{
	if (!ui->in_repo) {
		ui_message(ui, true, "new agent: %s is not a git repository", ui->root);
		return;
	}
	ui_prompt(ui, "new agent, branch:", false, new_branch_answer, NULL);
}

static struct agent *focused_agent(struct ui *ui, const char *what)
{
	struct wpane *f = session_focus(ui->s);
	struct agent *a = f ? f->agent : NULL;
	if (a == NULL || !a->worktree) {
		ui_message(ui, true, "%s: focus an agent's pane first (the main worktree is never %s)",
			   what, strcmp(what, "merge") == 0 ? "merged" : "removed");
		return NULL;
	}
	return a;
}

static void confirm_run(struct ui *ui, const char *answer, void *arg)
{
	char **args = arg;
	if (answer && strcmp(answer, "y") == 0)
		agents_run_cli(ui, args);
	for (char **p = args; *p; p++)
		free(*p);
	free(args);
}

static void confirm_cli(struct ui *ui, const char *question, const char *verb, const char *handle)
{
	char **args = xcalloc(3, sizeof *args);
	args[0] = xstrdup(verb);
	args[1] = xstrdup(handle);
	ui_prompt(ui, question, true, confirm_run, args);
}

void agents_key_merge(struct ui *ui)
{
	struct agent *a = focused_agent(ui, "merge");
	if (a == NULL)
		return;
	char *q = xasprintf("merge %s and remove its worktree? (y/n)", a->branch ? a->branch : a->handle);
	confirm_cli(ui, q, "merge", a->handle);
	free(q);
}

void agents_key_remove(struct ui *ui)
{
	struct agent *a = focused_agent(ui, "remove");
	if (a == NULL)
		return;
	char *q = xasprintf("remove the worktree and branch of %s? (y/n)", a->handle);
	confirm_cli(ui, q, "remove", a->handle);
	free(q);
}

/* Split a command line into words: spaces separate, quotes group. */
static char **split_words(const char *s, char **cause)
{
	char **v = xcalloc(strlen(s) + 2, sizeof *v);
	size_t n = 0;
	struct buf w = {0};
	bool in_word = false;
	char quote = 0;
	for (; *s; s++) {
		if (quote) {
			if (*s == quote)
				quote = 0;
			else
				buf_addch(&w, *s);
		} else if (*s == '\'' || *s == '"') {
			quote = *s;
			in_word = true;
		} else if (*s == ' ' || *s == '\t') {
			if (in_word) {
				v[n++] = w.data ? w.data : xstrdup("");
				memset(&w, 0, sizeof w);
				in_word = false;
			}
		} else {
			buf_addch(&w, *s);
			in_word = true;
		}
	}
	if (quote) {
		*cause = xstrdup("unterminated quote");
		buf_free(&w);
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return NULL;
	}
	if (in_word)
		v[n++] = w.data ? w.data : xstrdup("");
	return v;
}

static void command_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer == NULL || *answer == '\0')
		return;
	char *cause = NULL;
	char **words = split_words(answer, &cause);
	if (words == NULL) {
		ui_message(ui, true, ": %s", cause);
		free(cause);
		return;
	}
	if (words[0])
		agents_run_cli_shown(ui, words);
	for (char **p = words; *p; p++)
		free(*p);
	free(words);
}

void agents_key_command(struct ui *ui)
{
	ui_prompt(ui, "workrex", false, command_answer, NULL);
}
