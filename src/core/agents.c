/*
 * agents.c - a project's agents: listing them at start, and opening an
 * agent's panes (its agent, the configured panes, a prompt waiting for a
 * first open, a sandbox's set-up).
 */
#include "../config/kinds.h"
#include "../git/adopted.h"
#include "../git/comments.h"
#include "../git/private.h"
#include "../git/worktree.h"
#include "../util/beneath.h"
#include "../util/util.h"
#include "agentcmd.h"
#include "deliver.h"
#include "wrx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void agents_adopted(struct wrx *w, struct repo *r);

void agents_load(struct wrx *w)
{
	struct repo *r = w->repo;
	char *cause = NULL;
	if (r == NULL && repo_open(w->root, &r, &cause) < 0) {
		free(cause);
		return;
	}
	struct agent_rec *as;
	size_t n;
	/* A command's core for one agent's request: that agent's record alone. */
	struct agent_rec one;
	int rc = -1;
	if (w->attach_only && agent_get(r, w->attach_only, &one, &cause) == 0) {
		as = xmalloc(sizeof *as);
		as[0] = one;
		n = 1;
		rc = 0;
	} else if (w->attach_only) {
		free(cause);
		cause = NULL;
	}
	if (rc == 0 || agent_list(r, &as, &n, &cause) == 0) {
		/* Those with a recorded number first, so that others cannot take it. */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < n; i++) {
				if ((as[i].number > 0) != (pass == 0) ||
				    session_find_agent(w->s, as[i].handle))
					continue;
				struct agent *a = session_add_agent(w->s, as[i].handle, as[i].path);
				session_set_agent_num(w->s, a, as[i].number);
				a->git.worktree = true;
				a->git.branch = as[i].branch ? xstrdup(as[i].branch) : NULL;
				a->git.agent = as[i].agent ? xstrdup(as[i].agent) : NULL;
				a->box.wanted = as[i].sandbox;
				a->remote.host = as[i].remote ? xstrdup(as[i].remote) : NULL;
				a->git.missing = as[i].missing;
				a->git.parent = as[i].parent ? xstrdup(as[i].parent) : NULL;
				a->git.group = as[i].group ? xstrdup(as[i].group) : NULL;
				a->git.layout = as[i].layout ? xstrdup(as[i].layout) : NULL;
				a->git.ports = as[i].ports ? xstrdup(as[i].ports) : NULL;
				a->git.home = as[i].home ? xstrdup(as[i].home) : NULL;
				a->git.max_concurrent = as[i].max_concurrent;
				a->git.queued = as[i].queued;
				/* One open, which fails but for the few with comments waiting. */
				a->comments = comments_count(w->root, as[i].handle);
			}
		}
		for (size_t i = 0; i < n; i++)
			agent_rec_free(&as[i]);
		free(as);
	} else {
		wrx_message(w, true, "listing agents: %s", cause);
		free(cause);
	}
	agents_adopted(w, r);
	if (r != w->repo)
		repo_free(r);
}

struct agent *agents_adopt(struct wrx *w, const struct adopted_rec *ad)
{
	if (session_find_agent(w->s, ad->handle))
		return NULL;
	struct agent *a = session_add_agent(w->s, ad->handle, ad->cwd);
	a->adopted = xstrdup(ad->id);
	a->adopted_attach = ad->attach;
	a->git.agent = xstrdup(ad->kind);
	a->session_id = ad->session ? xstrdup(ad->session) : NULL;
	return a;
}

/* The sessions adopted from outside workrex (git/adopted.h): rows of their own. */
static void agents_adopted(struct wrx *w, struct repo *r)
{
	struct adopted_rec *ad;
	size_t n;
	adopted_list(r, &ad, &n);
	for (size_t i = 0; i < n; i++) {
		/* A command's core for one agent's request: that one alone. */
		if (!w->attach_only || !strcmp(w->attach_only, ad[i].handle))
			agents_adopt(w, &ad[i]);
	}
	adopted_list_free(ad, n);
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
		int fd = openat(dir, ".prompted",
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		ok = fd >= 0; /* there already: it was used */
		if (fd >= 0)
			close(fd);
	}
	close(dir);
	char *file = ok ? xasprintf("%s/.workrex/%s", a->path, name) : NULL;
	free(name);
	return file;
}

static void prompt_typed(struct wrx *w, const char *why, void *arg)
{
	char *handle = arg;
	if (why)
		wrx_message(w, true, "%s: its prompt was not taken: %s (it is in %s)", handle, why,
			    "$WORKREX_PROMPT_FILE");
	free(handle);
}

/*
 * A kind with no prompt on its command line: the prompt is typed into it
 * once its screen settles, and verified as send verifies it.
 */
static void type_prompt(struct wrx *w, struct agent *a, const char *file)
{
	char *text = NULL, *cause = NULL;
	struct wpane *wp = session_agent_pane(w->s, a);
	if (wp == NULL || file_read(file, 1u << 20, &text, &cause) < 0) {
		wrx_message(w, true, "%s: its prompt cannot be typed in: %s", a->handle,
			    cause ? cause : "no pane");
		free(cause);
		return;
	}
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	deliver_start(w, wp, text, true, true, prompt_typed, xstrdup(a->handle));
	free(text);
}

/*
 * An agent spawned from a sandbox has its post_create waiting in its
 * host-only dir (worktree.c): its first sandboxed agent pane runs it
 * inside the container, then the agent. Caller frees; line is taken.
 */
static char *with_setup(struct wrx *w, struct agent *a, char *line)
{
	char *dir = private_agent_dir(w->root, a->handle, false), *setup = NULL;
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

/*
 * Whether a's record went behind the dashboard's back: a command killed
 * part way, whose add the next command undid or whose remove or merge it
 * finished, told no dashboard that was starting or gone. Opened, it
 * would run a keeper for no agent, which nothing ends.
 */
static bool record_gone(struct wrx *w, const struct agent *a)
{
	if (!a->git.worktree)
		return false;
	struct repo *r = w->repo;
	char *cause = NULL;
	if (r == NULL && repo_open(w->root, &r, &cause) < 0) {
		free(cause);
		return false; /* no telling: opened as before */
	}
	/* Only "no such agent": a git that cannot be read now says nothing of it. */
	struct agent_rec rec;
	int rc = agent_get(r, a->handle, &rec, &cause);
	if (rc < 0)
		free(cause);
	else
		agent_rec_free(&rec);
	bool gone = rc == -ENOENT;
	if (r != w->repo)
		repo_free(r);
	return gone;
}

/* An agent whose record went, let go (on the loop's next turn: its callers hold it now). */
static void drop(struct wrx *w, struct agent *a)
{
	if (session_agent_panes(w->s, a) == 0 && record_gone(w, a)) {
		session_remove_agent(w->s, a);
		wrx_relayout(w);
	}
}

/*
 * What opening an agent's panes needs, resolved once before any pane:
 * its kind, its prompt, its session, its layout.
 */
struct open_plan {
	const char *name;   /* the kind or profile its agent pane runs; NULL: the shell */
	char *prompt;       /* owned: the prompt file it starts with; NULL: none */
	char *fork;         /* a->fork_from, when it forks now */
	char *session;      /* owned: the session named for it; NULL: the CLI names it */
	const char *resume; /* continued: its session, "" its latest; NULL: new */
	bool fresh;         /* continued, but its kind cannot resume: its shell */
	const struct pane_def *panes;
	size_t npanes; /* 0: the agent and a shell */
};

/* Why a cannot open now (its record or worktree went): -ENOENT with *cause, else 0. */
static int open_refused(struct wrx *w, struct agent *a, char **cause)
{
	if (record_gone(w, a)) {
		*cause = xasprintf("'%s' is no longer recorded (its worktree was removed outside "
				   "this dashboard): not opened, and taken off the list",
				   a->handle);
		wrx_agent_later(w, a->handle, drop);
		return -ENOENT;
	}
	if (a->git.missing) {
		*cause = xasprintf("its worktree %s is gone (deleted by hand?); workrex rm %s "
				   "cleans up, keeping a branch with unmerged commits",
				   a->path, a->handle);
		return -ENOENT;
	}
	return 0;
}

/*
 * The kind a runs: its own (add -a), else the configured one; on a
 * server, no guess from this machine's PATH: the configured agent, else
 * the shell there.
 */
static const char *open_kind(struct wrx *w, const struct agent *a)
{
	const char *name = a->git.agent     ? a->git.agent
			   : a->remote.host ? w->cfg.agent
					    : agentcmd_default(&w->cfg);
	/*
	 * A profile added to agents: a moment ago (add -a made the agent from
	 * the file as it is now): read the files again rather than run its
	 * name as a command.
	 */
	if (name && !a->remote.host && config_agent(&w->cfg, name) == NULL && !strchr(name, ' ') &&
	    !strchr(name, '/') && !path_has(name)) {
		struct strlist warnings = {0};
		char *why = NULL;
		if (wrx_config_reload(w, &warnings, &why) < 0)
			free(why);
		strlist_free(&warnings);
		/* The config's strings are new: the name again (an agent's own is its). */
		name = a->git.agent ? a->git.agent : agentcmd_default(&w->cfg);
	}
	return name;
}

static void open_plan_make(struct wrx *w, struct agent *a, bool cont, struct open_plan *p)
{
	const char *name = p->name = open_kind(w, a);
	p->prompt = a->git.worktree && !cont ? pending_prompt(a) : NULL;
	/*
	 * Continued, an agent with no way to resume would start over: its
	 * first prompt again, or a task run twice. Its shell opens instead.
	 */
	p->fresh = cont && name && !agentcmd_resumes(&w->cfg, name);
	if (p->fresh)
		wrx_message(w, false,
			    "%s: %s cannot resume a session; its shell opened in the worktree "
			    "(start it again there if you want)",
			    a->handle, name);
	if (a->remote.host) {
		free(p->prompt);
		p->prompt = a->remote.prompt_waits && !cont
				    ? xasprintf("%s/.workrex/PROMPT-%s.md", a->path, a->handle)
				    : NULL;
		a->remote.prompt_waits = false;
	}
	/* Resumed: the session its hooks reported, else its latest. */
	p->resume = !cont ? NULL : a->session_id ? a->session_id : "";
	/*
	 * A new session: named by us where the kind takes an id, so that its
	 * hooks are known by it even from a daemon without the pane's
	 * environment. A fork continues the session it was given, once.
	 */
	p->fork = !cont && a->fork_from && agentcmd_forks(&w->cfg, name) ? a->fork_from : NULL;
	p->session = !cont && agentcmd_names_sessions(&w->cfg, name) ? uuid_new() : NULL;
	if (p->session)
		kept_session(w, a, p->session);
	/* Its layout's panes (add -l), else the config's. */
	p->panes = w->cfg.panes;
	p->npanes = w->cfg.npanes;
	const struct layout_def *lay = a->git.layout ? config_layout(&w->cfg, a->git.layout) : NULL;
	if (lay) {
		p->panes = lay->panes;
		p->npanes = lay->npanes;
	} else if (a->git.layout) {
		wrx_message(w, true,
			    "%s: no layout '%s' in the config now; its panes are panes:", a->handle,
			    a->git.layout);
	}
}

/*
 * Pane i's shell line (owned) and label: the agent, a command of the
 * layout's, or the user's shell; on a server, run by the login shell there.
 */
static char *open_line(struct wrx *w, struct agent *a, const struct open_plan *p, size_t i,
		       struct pane_open *o)
{
	const char *spec = p->npanes ? p->panes[i].command : (i == 0 ? "<agent>" : NULL);
	bool agent_spec = spec && strcmp(spec, "<agent>") == 0;
	bool is_agent = agent_spec && !p->fresh;
	char *line;
	o->sandboxed = sandbox_pane_wanted(w, a, is_agent);
	if (is_agent) {
		struct agentcmd_opts ao = {
			.prompt_file = p->prompt,
			.resume = p->resume,
			.fork = p->fork,
			.session = p->session,
			.sandboxed = o->sandboxed,
		};
		line = agentcmd_line(&w->cfg, p->name, &ao);
		if (o->sandboxed)
			line = with_setup(w, a, line);
		o->label = p->name ? p->name : "shell";
	} else if (spec && !agent_spec) {
		/* One command is exec'd (the pane's program); a shell line runs as written. */
		line = strpbrk(spec, ";&|\n") ? xstrdup(spec) : xasprintf("exec %s", spec);
		o->label = spec;
	} else {
		line = agentcmd_line(&w->cfg, NULL, NULL); /* the user's shell */
		o->label = "shell";
	}
	if (!a->remote.host)
		return line;
	/*
	 * There: the user's shell there, the PATH of its login profile (which
	 * may set it anew: Debian's /etc/profile does) with the workrex there
	 * first, for the agent's hooks.
	 */
	bool shell = (is_agent && p->name == NULL) || spec == NULL || agent_spec != is_agent;
	char *there = xasprintf("PATH=\"$WORKREX_BIN:$PATH\"; export PATH; %s",
				shell ? "exec \"${SHELL:-/bin/sh}\"" : line);
	free(line);
	return there;
}

/* After its panes opened: the prompt typed in, or said where it is. */
static void open_prompt(struct wrx *w, struct agent *a, const struct open_plan *p)
{
	if (p->prompt && agentcmd_types_prompt(&w->cfg, p->name))
		type_prompt(w, a, p->prompt);
	else if (p->prompt && !agentcmd_takes_prompt(&w->cfg, p->name))
		wrx_message(w, false,
			    "%s: %s takes no prompt argument; the prompt is in "
			    "$WORKREX_PROMPT_FILE ({prompt} in its command passes it)",
			    a->handle, p->name ? p->name : "the shell");
}

/*
 * An adopted session's one pane: its CLI showing it (claude attach ID),
 * never a new session; none for one that runs in a terminal elsewhere.
 */
static int open_adopted(struct wrx *w, struct agent *a, bool focus, char **cause)
{
	const struct agent_kind *k = kind_find(a->git.agent);
	if (!a->adopted_attach || k == NULL || k->attach == NULL) {
		*cause = xasprintf("%s runs in a terminal elsewhere: its status is shown here, its "
				   "pane is there",
				   a->handle);
		return -EPERM;
	}
	char state[32];
	if (kind_job_state(k, getenv("HOME"), a->adopted, state, sizeof state) == 0 &&
	    strcmp(state, "working") != 0 && strcmp(state, "blocked") != 0 &&
	    strcmp(state, "resuming") != 0) {
		*cause = xasprintf("%s's job is over (%s): nothing to attach to", a->handle, state);
		return -ENOENT;
	}
	int rows, cols;
	wrx_pane_size(w, &rows, &cols);
	char *qid = sh_quote(a->adopted);
	char *line = xasprintf("exec %s %s %s", k->name, k->attach, qid);
	char *argv[] = {"/bin/sh", "-c", line, NULL};
	struct pane_open o = {.argv = argv, .focus = focus, .label = k->attach};
	int rc = session_open_panes(w->s, a, &o, 1, rows, cols, NULL, cause);
	free(line);
	free(qid);
	if (rc == 0)
		wrx_relayout(w);
	return rc < 0 ? -EIO : 0;
}

int agents_open(struct wrx *w, struct agent *a, bool focus, bool cont, char **cause)
{
	if (session_agent_panes(w->s, a) > 0) {
		if (focus)
			session_set_focus(w->s, session_agent_pane(w->s, a));
		return 0;
	}
	if (a->adopted)
		return open_adopted(w, a, focus, cause);
	int rc = open_refused(w, a, cause);
	if (rc < 0)
		return rc;
	int rows, cols;
	wrx_pane_size(w, &rows, &cols);
	struct open_plan p = {0};
	open_plan_make(w, a, cont, &p);
	size_t n = p.npanes ? p.npanes : 2;
	struct pane_open *o = xcalloc(n, sizeof *o);
	char *(*argv)[4] = xcalloc(n, sizeof *argv);
	bool chosen = false;
	for (size_t i = 0; i < n; i++) {
		argv[i][0] = "/bin/sh";
		argv[i][1] = a->remote.host ? "-lc" : "-c";
		argv[i][2] = open_line(w, a, &p, i, &o[i]);
		o[i].argv = argv[i];
		o[i].focus = focus && p.npanes && p.panes[i].focus;
		chosen = chosen || o[i].focus;
	}
	/* Focused: the configured pane, else the first. */
	o[0].focus = o[0].focus || (focus && !chosen);
	rc = session_open_panes(w->s, a, o, (int)n, rows, cols, NULL, cause);
	for (size_t i = 0; i < n; i++)
		free(argv[i][2]);
	free(argv);
	free(o);
	if (p.session && rc == 0)
		keep_meta(w, a); /* its keepers hold the name for the next dashboard */
	free(p.session);
	if (p.fork) {
		free(a->fork_from);
		a->fork_from = NULL;
	}
	if (rc == 0) {
		open_prompt(w, a, &p);
		wrx_relayout(w);
	}
	free(p.prompt);
	return rc < 0 ? -EIO : 0;
}
