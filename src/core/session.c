/*
 * session.c - agents and panes, focus and layout choice.
 *
 * Panes are created through pty_start() and freed here; the UI learns of
 * every change through the hooks and redraws from this state.
 */
#include "runner.h"
#include "session.h"

#include "../term/pty.h"
#include "../util/ports.h"
#include "../util/util.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct session {
	uv_loop_t *loop; /* borrowed */
	struct session_hooks hooks;
	void *ui;

	struct agent **agents; /* owned */
	int nagents;
	struct wpane **panes; /* owned, display order */
	int npanes;
	struct wpane *focus;
	struct wpane **last_focus; /* per agent index; borrowed */

	enum wrx_layout layout;
	bool zoom;
	size_t scrollback;
	int next_pane_id;
	bool mirrors;
	int next_agent_id;
};

struct session *session_new(uv_loop_t *loop, const struct session_hooks *hooks, void *ui)
{
	struct session *s = xcalloc(1, sizeof *s);
	s->loop = loop;
	s->hooks = *hooks;
	s->ui = ui;
	s->scrollback = 10000;
	s->next_pane_id = 1;
	s->next_agent_id = 1;
	return s;
}

/*
 * The parts of an agent and a pane other modules fill (session.h,
 * runner.h) are plain data: freed here, with the agent or pane they are
 * part of, so that the session never calls up to the modules above it.
 */
static void agent_git_release(struct agent_git *g)
{
	free(g->branch);
	free(g->agent);
	free(g->parent);
	free(g->group);
	free(g->layout);
	free(g->ports);
	free(g->home);
	memset(g, 0, sizeof *g);
}

static void sandbox_release(struct agent_box *b)
{
	free(b->rpc_dir);
	free(b->proxy_token);
	for (size_t i = 0; i < b->negress; i++)
		free(b->egress[i]);
	free(b->egress);
	memset(b, 0, sizeof *b);
}

static void remote_release(struct agent_remote *r)
{
	free(r->host);
	memset(r, 0, sizeof *r);
}

/* A pane's, made with it and freed with it (session.c). */
static struct runner *runner_pane_new(void)
{
	return xcalloc(1, sizeof(struct runner));
}

static void runner_pane_free(struct runner *h)
{
	if (h == NULL)
		return;
	free(h->container);
	free(h->link);
	free(h->remote_spec);
	free(h);
}

static void agent_free(struct agent *a)
{
	free(a->handle);
	free(a->path);
	free(a->session_id);
	free(a->kept_meta);
	free(a->asks);
	free(a->fork_from);
	free(a->adopted);
	free(a->title);
	free(a->note);
	free(a->failure);
	agent_git_release(&a->git);
	sandbox_release(&a->box);
	remote_release(&a->remote);
	free(a);
}

static void pane_release(struct session *s, struct wpane *wp)
{
	if (s->hooks.pane_gone)
		s->hooks.pane_gone(s->ui, wp);
	pane_free(wp->term);
	free(wp->label);
	runner_pane_free(wp->runner);
	free(wp);
}

/* Out of the list; the focus goes to a neighbour. */
static void pane_unlink(struct session *s, struct wpane *wp)
{
	int i = session_pane_index(s, wp);
	memmove(s->panes + i, s->panes + i + 1, (size_t)(s->npanes - i - 1) * sizeof *s->panes);
	s->npanes--;
	wp->agent->npanes--;
	for (int k = 0; k < s->nagents; k++)
		if (s->last_focus[k] == wp)
			s->last_focus[k] = NULL;
	if (s->focus == wp) {
		s->focus = NULL;
		if (s->npanes > 0)
			session_set_focus(s, s->panes[i < s->npanes ? i : s->npanes - 1]);
		else
			s->zoom = false;
	}
}

void *session_owner(const struct session *s)
{
	return s->ui;
}

void session_free(struct session *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->npanes; i++)
		pane_release(s, s->panes[i]);
	for (int i = 0; i < s->nagents; i++)
		agent_free(s->agents[i]);
	free(s->panes);
	free(s->agents);
	free(s->last_focus);
	free(s);
}

void session_set_scrollback(struct session *s, size_t lines)
{
	s->scrollback = lines;
	for (int i = 0; i < s->npanes; i++)
		pane_set_scrollback(s->panes[i]->term, lines);
}

static void changed(struct session *s)
{
	if (s->hooks.changed)
		s->hooks.changed(s->ui);
}

int session_agent_by_num(const struct session *s, int num)
{
	for (int i = 0; i < s->nagents; i++)
		if (s->agents[i]->num == num)
			return i;
	return -1;
}

void session_set_agent_num(struct session *s, struct agent *a, int num)
{
	if (num > 0 && session_agent_by_num(s, num) < 0) {
		a->num = num;
		changed(s);
	}
}

struct agent *session_add_agent(struct session *s, const char *handle, const char *path)
{
	struct agent *a = xcalloc(1, sizeof *a);
	a->id = s->next_agent_id++;
	a->num = 1;
	while (session_agent_by_num(s, a->num) >= 0)
		a->num++;
	a->handle = xstrdup(handle);
	a->path = xstrdup(path);
	a->status_since = wall_ms();
	a->box.wanted = -1;
	s->agents = xrealloc(s->agents, (size_t)(s->nagents + 1) * sizeof *s->agents);
	s->last_focus = xrealloc(s->last_focus, (size_t)(s->nagents + 1) * sizeof *s->last_focus);
	s->last_focus[s->nagents] = NULL;
	s->agents[s->nagents++] = a;
	changed(s);
	return a;
}

void session_rename_agent(struct session *s, struct agent *a, const char *handle, const char *path,
			  const char *branch)
{
	free(a->handle);
	free(a->path);
	a->handle = xstrdup(handle);
	a->path = xstrdup(path);
	if (branch) {
		free(a->git.branch);
		a->git.branch = xstrdup(branch);
	}
	changed(s);
}

struct agent *session_find_agent(const struct session *s, const char *handle)
{
	for (int i = 0; s && i < s->nagents; i++)
		if (strcmp(s->agents[i]->handle, handle) == 0)
			return s->agents[i];
	return NULL;
}

int session_agent_panes(const struct session *s, const struct agent *a)
{
	(void)s;
	return a->npanes;
}

struct wpane *session_agent_pane(const struct session *s, const struct agent *a)
{
	for (int i = 0; i < s->npanes; i++)
		if (s->panes[i]->agent == a)
			return s->panes[i];
	return NULL;
}

void session_remove_agent(struct session *s, struct agent *a)
{
	struct wpane *wp;
	while ((wp = session_agent_pane(s, a)) != NULL)
		session_close_pane(s, wp);
	int i;
	for (i = 0; i < s->nagents; i++)
		if (s->agents[i] == a)
			break;
	if (i == s->nagents)
		return;
	memmove(s->agents + i, s->agents + i + 1, (size_t)(s->nagents - i - 1) * sizeof *s->agents);
	memmove(s->last_focus + i, s->last_focus + i + 1,
		(size_t)(s->nagents - i - 1) * sizeof *s->last_focus);
	s->nagents--;
	agent_free(a);
	changed(s);
}

static int agent_index(const struct session *s, const struct agent *a)
{
	for (int i = 0; i < s->nagents; i++)
		if (s->agents[i] == a)
			return i;
	return -1;
}

/*
 * The agent's own program ended. Having said done, it stays done; else it
 * is done when it ended well, failed when not (a CLI that did not start,
 * exit 127; one that crashed): with how it ended and the last line it
 * printed, which is usually why.
 */
static void agent_program_ended(struct session *s, struct wpane *wp)
{
	struct agent *a = wp->agent;
	int st;
	/* An adopted session's pane only shows it: its end says nothing of the session. */
	if (a->status == WRX_STATUS_DONE || a->adopted || !pane_exited(wp->term, &st))
		return;
	char how[48] = "its keeper is gone";
	if (st != PANE_LOST && status_ended(st, how, sizeof how) == WRX_STATUS_DONE) {
		session_set_status(s, a, WRX_STATUS_DONE);
		return;
	}
	char *why = pane_failure(wp->term, how);
	free(a->failure);
	a->failure = why;
	session_set_status(s, a, WRX_STATUS_FAILED);
	if (s->hooks.agent_failed)
		s->hooks.agent_failed(s->ui, a);
}

static void on_pane_event(struct pane *p, int events, void *data)
{
	struct wpane *wp = data;
	struct session *s = wp->session;
	if (events & PANE_EV_DAMAGE) {
		wp->last_output = now_ms();
		wp->changes++;
	}
	if ((events & PANE_EV_BELL) && s->hooks.bell)
		s->hooks.bell(s->ui, wp);
	if ((events & PANE_EV_CLIPBOARD) && s->hooks.clipboard) {
		size_t len;
		const char *text = pane_clipboard(p, &len);
		s->hooks.clipboard(s->ui, wp, text, len);
	}
	if ((events & PANE_EV_EXIT) && session_agent_pane(s, wp->agent) == wp)
		agent_program_ended(s, wp);
	if (events & (PANE_EV_DAMAGE | PANE_EV_TITLE | PANE_EV_EXIT | PANE_EV_BELL))
		changed(s);
}

static const char *user_shell(void)
{
	const char *sh = getenv("SHELL");
	if (sh && *sh)
		return sh;
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_shell && *pw->pw_shell)
		return pw->pw_shell;
	return "/bin/sh";
}

/*
 * PATH for a pane: the running workrex's own directory first (unless PATH
 * has it), so that the README's commands and the hooks `setup` installs
 * (`workrex set-status ...`) work in panes of a workrex built from source
 * and never installed. Caller frees.
 */
static char *pane_path(void)
{
	static char *dir;
	if (dir == NULL) {
		char *self = realpath("/proc/self/exe", NULL);
		char *slash = self ? strrchr(self, '/') : NULL;
		if (slash)
			*slash = '\0';
		dir = self ? self : xstrdup("");
	}
	const char *path = getenv("PATH");
	path = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
	size_t n = strlen(dir);
	for (const char *p = path; n && *p;) {
		const char *e = strchrnul(p, ':');
		if ((size_t)(e - p) == n && !strncmp(p, dir, n))
			return xasprintf("PATH=%s", path);
		p = *e ? e + 1 : e;
	}
	return n ? xasprintf("PATH=%s:%s", dir, path) : xasprintf("PATH=%s", path);
}

/* After the last pane of its agent with a smaller id (a new pane has the largest). */
static void insert_pane(struct session *s, struct wpane *wp)
{
	int first = -1, after = -1;
	for (int i = 0; i < s->npanes; i++) {
		if (s->panes[i]->agent != wp->agent)
			continue;
		if (first < 0)
			first = i;
		if (s->panes[i]->id < wp->id)
			after = i + 1;
	}
	int at = after >= 0 ? after : first >= 0 ? first : s->npanes;
	s->panes = xrealloc(s->panes, (size_t)(s->npanes + 1) * sizeof *s->panes);
	memmove(s->panes + at + 1, s->panes + at, (size_t)(s->npanes - at) * sizeof *s->panes);
	s->panes[at] = wp;
	s->npanes++;
	wp->agent->npanes++;
}

/* A pane of agent a, in the list but not started: its program runs from pane_launch. */
static struct wpane *pane_create(struct session *s, struct agent *a, const struct pane_open *o,
				 int rows, int cols)
{
	struct wpane *wp = xcalloc(1, sizeof *wp);
	wp->runner = runner_pane_new();
	wp->id = s->next_pane_id++;
	wp->sandboxed = o->sandboxed;
	wp->agent = a;
	wp->session = s;
	const char *argv0 = o->argv ? o->argv[0] : user_shell();
	const char *base = strrchr(argv0, '/');
	wp->label = xstrdup(o->label ? o->label : base ? base + 1 : argv0);
	wp->term = s->mirrors ? pane_mirror_new(rows, cols, s->scrollback, on_pane_event, wp)
			      : pane_new(rows, cols, s->scrollback, on_pane_event, wp);
	wp->last_output = now_ms();
	insert_pane(s, wp);
	return wp;
}

/* Start wp's program at the size its term has now. 0, or -errno with *cause. */
static int pane_launch(struct session *s, struct wpane *wp, char *const *argv, char **cause)
{
	char *shell_argv[] = {(char *)user_shell(), NULL};
	if (argv == NULL)
		argv = shell_argv;
	char **extra = s->hooks.pane_env ? s->hooks.pane_env(s->ui, wp) : NULL;
	size_t nextra = 0;
	while (extra && extra[nextra])
		nextra++;
	/* Its ports: WORKREX_PORT, and WORKREX_PORT_1... each (config ports). */
	int ports[PORTS_MAX];
	size_t nports = ports_split(wp->agent->git.ports, ports, PORTS_MAX);
	char **env = xcalloc(nextra + nports + 7, sizeof *env);
	env[0] = xstrdup("TERM=xterm-256color");
	env[1] = xstrdup("COLORTERM=truecolor");
	env[2] = xasprintf("WORKREX_PANE=%d", wp->id);
	env[3] = xasprintf("WORKREX_HANDLE=%s", wp->agent->handle);
	env[4] = pane_path();
	for (size_t i = 0; i < nextra; i++)
		env[5 + i] = extra[i];
	char **at = env + 5 + nextra;
	for (size_t i = 0; i < nports; i++) {
		if (i == 0)
			*at++ = xasprintf("WORKREX_PORT=%d", ports[0]);
		*at++ = xasprintf("WORKREX_PORT_%zu=%d", i + 1, ports[i]);
	}
	free(extra);
	char **run = NULL;
	int rc = s->hooks.pane_argv ? s->hooks.pane_argv(s->ui, wp, argv, env, &run, cause) : 0;
	if (rc == 0) {
		struct pty_spawn sp = {.argv = run ? run : argv,
				       .cwd = wp->agent->git.home ? wp->agent->git.home
								  : wp->agent->path,
				       .env = env};
		rc = s->hooks.pane_start ? s->hooks.pane_start(s->ui, wp, &sp, cause)
					 : pty_start(s->loop, wp->term, &sp, cause);
	}
	/* putenv() in the child only: the parent's copies can go. */
	strv_free(env);
	strv_free(run);
	return rc;
}

/*
 * Every pane is in the list and laid out (the place hook) before the
 * first program starts, so each starts at the size it keeps. A resize
 * just after the start races the program's own: less reads the size,
 * then sets its SIGWINCH handler, and a resize between the two leaves it
 * drawn for a size the pane no longer has.
 */
int session_open_panes(struct session *s, struct agent *a, const struct pane_open *o, int n,
		       int rows, int cols, struct wpane **out, char **cause)
{
	struct wpane **wp = xcalloc((size_t)WRX_MAX(n, 1), sizeof *wp);
	for (int i = 0; i < n; i++) {
		wp[i] = pane_create(s, a, &o[i], rows, cols);
		if (o[i].focus || s->focus == NULL)
			session_set_focus(s, wp[i]);
	}
	if (s->hooks.place)
		s->hooks.place(s->ui);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (rc == 0 && (rc = pane_launch(s, wp[i], o[i].argv, cause)) == 0) {
			if (out)
				out[i] = wp[i];
			continue;
		}
		/* This one did not start: neither will those after it. */
		pane_unlink(s, wp[i]);
		pane_release(s, wp[i]);
		if (out)
			out[i] = NULL;
	}
	free(wp);
	changed(s);
	return rc;
}

struct wpane *session_open_pane(struct session *s, struct agent *a, char *const *argv, int rows,
				int cols, bool focus, char **cause)
{
	struct pane_open o = {.argv = argv, .focus = focus};
	struct wpane *wp = NULL;
	return session_open_panes(s, a, &o, 1, rows, cols, &wp, cause) < 0 ? NULL : wp;
}

struct wpane *session_adopt_pane(struct session *s, struct agent *a, struct pane *term, int id,
				 const char *label, bool sandboxed)
{
	struct wpane *wp = xcalloc(1, sizeof *wp);
	wp->runner = runner_pane_new();
	wp->id = id;
	wp->sandboxed = sandboxed;
	wp->agent = a;
	wp->session = s;
	wp->label = xstrdup(label ? label : "shell");
	wp->term = term;
	pane_set_hook(term, on_pane_event, wp);
	wp->last_output = now_ms();
	if (id >= s->next_pane_id)
		s->next_pane_id = id + 1;
	insert_pane(s, wp);
	if (s->focus == NULL)
		session_set_focus(s, wp);
	changed(s);
	return wp;
}

void session_set_next_pane_id(struct session *s, int id)
{
	s->next_pane_id = WRX_MAX(s->next_pane_id, id);
}

void session_set_mirrors(struct session *s, bool on)
{
	s->mirrors = on;
}

void session_close_pane(struct session *s, struct wpane *wp)
{
	if (session_pane_index(s, wp) < 0)
		return;
	if (s->hooks.pane_closing)
		s->hooks.pane_closing(s->ui, wp);
	pane_unlink(s, wp);
	pane_release(s, wp);
	changed(s);
}

int session_pane_count(const struct session *s)
{
	return s->npanes;
}

struct wpane *session_pane(const struct session *s, int i)
{
	return i >= 0 && i < s->npanes ? s->panes[i] : NULL;
}

int session_pane_index(const struct session *s, const struct wpane *wp)
{
	for (int i = 0; i < s->npanes; i++)
		if (s->panes[i] == wp)
			return i;
	return -1;
}

int session_agent_count(const struct session *s)
{
	return s->nagents;
}

struct agent *session_agent(const struct session *s, int i)
{
	return i >= 0 && i < s->nagents ? s->agents[i] : NULL;
}

struct wpane *session_focus(const struct session *s)
{
	return s->focus;
}

void session_set_focus(struct session *s, struct wpane *wp)
{
	if (wp == s->focus)
		return;
	if (s->focus)
		pane_focus(s->focus->term, false);
	s->focus = wp;
	if (wp) {
		pane_focus(wp->term, true);
		wp->bell = false;
		wp->agent->bell = false;
		wp->agent->attention = false;
		int ai = agent_index(s, wp->agent);
		if (ai >= 0)
			s->last_focus[ai] = wp;
	}
	changed(s);
}

void session_focus_agent(struct session *s, int i)
{
	if (i < 0 || i >= s->nagents)
		return;
	struct agent *a = s->agents[i];
	struct wpane *target = NULL;
	if (s->focus && s->focus->agent == a) {
		/* Already here: cycle through the agent's panes. */
		int at = session_pane_index(s, s->focus);
		for (int k = 1; k <= s->npanes && !target; k++) {
			struct wpane *wp = s->panes[(at + k) % s->npanes];
			if (wp->agent == a)
				target = wp;
		}
	} else {
		target = s->last_focus[i];
		for (int k = 0; k < s->npanes && !target; k++)
			if (s->panes[k]->agent == a)
				target = s->panes[k];
	}
	if (target)
		session_set_focus(s, target);
}

enum wrx_layout session_layout(const struct session *s)
{
	return s->layout;
}

/* As it was chosen before (the dashboard's start): nothing is told; the first frame lays it out. */
void session_set_layout(struct session *s, enum wrx_layout kind)
{
	if (kind < WRX_LAYOUT_COUNT)
		s->layout = kind;
}

void session_next_layout(struct session *s)
{
	s->layout = (s->layout + 1) % WRX_LAYOUT_COUNT;
	s->zoom = false;
	changed(s);
}

bool session_zoomed(const struct session *s)
{
	return s->zoom;
}

void session_toggle_zoom(struct session *s)
{
	s->zoom = !s->zoom && s->focus;
	changed(s);
}

static bool agent_focused(const struct session *s, const struct agent *a)
{
	return s->focus && s->focus->agent == a;
}

uint64_t agent_status_age(const struct agent *a)
{
	uint64_t now = wall_ms();
	return now - WRX_MIN(now, a->status_since);
}

void session_set_status(struct session *s, struct agent *a, enum wrx_status st)
{
	session_set_status_at(s, a, st, 0);
}

void session_set_status_at(struct session *s, struct agent *a, enum wrx_status st, uint64_t since)
{
	bool same = a->status == st;
	a->status = st;
	if (st != WRX_STATUS_FAILED) {
		free(a->failure);
		a->failure = NULL;
	}
	if (since)
		a->status_since = since;
	else if (!same)
		a->status_since = wall_ms();
	if ((st == WRX_STATUS_WAITING || st == WRX_STATUS_DONE || st == WRX_STATUS_FAILED) &&
	    !agent_focused(s, a)) {
		bool raise = !a->attention || !same;
		if (raise)
			a->attention_since = now_ms();
		a->attention = true;
		if (raise && s->hooks.attention)
			s->hooks.attention(s->ui, a, status_word(st));
	} else if (st == WRX_STATUS_WORKING || st == WRX_STATUS_NONE) {
		a->attention = false;
	}
	if (!same && s->hooks.status)
		s->hooks.status(s->ui, a);
	changed(s);
}

/*
 * An agent's words (its title, its notice) as one line: control bytes
 * dropped, runs of blanks one space, none at either end; NULL when empty.
 * (The sidebar marks them as the agent's, so no row can pass for another.)
 */
static char *one_line(const char *text)
{
	if (text == NULL)
		return NULL;
	char *out = xmalloc(strlen(text) + 1), *o = out;
	bool blank = false;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == ' ') {
			blank = o > out;
			continue;
		}
		if (blank)
			*o++ = ' ';
		blank = false;
		*o++ = (char)*p;
	}
	*o = '\0';
	if (*out == '\0') {
		free(out);
		return NULL;
	}
	return out;
}

struct agent *session_family_root(const struct session *s, struct agent *a)
{
	for (int depth = 0; a->git.parent && depth < 64; depth++) {
		struct agent *up = session_find_agent(s, a->git.parent);
		if (up == NULL)
			break; /* its parent went: its line starts here */
		a = up;
	}
	return a;
}

void session_set_title(struct session *s, struct agent *a, const char *title)
{
	free(a->title);
	a->title = one_line(title);
	changed(s);
}

void session_set_comments(struct session *s, struct agent *a, int n)
{
	a->comments = n;
	changed(s);
}

void session_agent_changed(struct session *s, struct agent *a)
{
	(void)a;
	changed(s);
}

void session_note(struct session *s, struct agent *a, const char *text)
{
	free(a->note);
	a->note = one_line(text);
	changed(s);
}

void session_notify(struct session *s, struct agent *a, const char *text)
{
	session_note(s, a, text);
	if (!agent_focused(s, a)) {
		a->attention = true;
		a->attention_since = now_ms();
		if (s->hooks.attention)
			s->hooks.attention(s->ui, a, text && *text ? text : "notification");
	}
	changed(s);
}

bool session_interrupted(const struct session *s, const struct agent *a, uint64_t now)
{
	if (a->status != WRX_STATUS_WORKING)
		return false;
	struct wpane *wp = session_agent_pane(s, a);
	/* Its status's start on now_ms()'s clock, as it is (now may be a time to come). */
	uint64_t mono = now_ms(), age = agent_status_age(a);
	uint64_t quiet_since = WRX_MAX(wp ? wp->last_output : 0, mono - WRX_MIN(mono, age));
	return wp && !pane_exited(wp->term, NULL) && now >= quiet_since + WRX_SILENCE_MS;
}

void session_pane_view(struct wpane *wp)
{
	pane_view(wp->term, wp->drawn || wp->wanted > 0);
}

void session_pane_want(struct wpane *wp, bool on)
{
	wp->wanted += on ? 1 : -1;
	session_pane_view(wp);
}

struct wpane *session_find_pane(const struct session *s, int id)
{
	for (int i = 0; s && i < s->npanes; i++)
		if (s->panes[i]->id == id)
			return s->panes[i];
	return NULL;
}

int session_running(const struct session *s)
{
	int n = 0;
	for (int i = 0; i < s->npanes; i++)
		if (!pane_exited(s->panes[i]->term, NULL))
			n++;
	return n;
}
