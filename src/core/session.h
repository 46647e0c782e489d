/*
 * session.h - what the dashboard shows: agents, their panes, focus, layout.
 *
 * The session is the model; src/ui/ draws it and turns keys into calls on
 * it. It never includes curses. An agent is a working directory (later a
 * worktree) with one or more panes; a plain directory has one agent, its
 * shell panes. Panes are kept in display order.
 */
#ifndef WRX_SESSION_H
#define WRX_SESSION_H

#include "../rpc/proto.h"
#include "../rpc/status.h"
#include "../term/pane.h"
#include "../term/pty.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

enum wrx_layout {
	WRX_LAYOUT_TILE,
	WRX_LAYOUT_GRID,
	WRX_LAYOUT_FULL,
	WRX_LAYOUT_WINDOW, /* the focused agent's panes as its panes' split and size say */
	WRX_LAYOUT_COUNT
};

/*
 * An agent's facts, split by who owns them. The session owns the agent
 * and what it shows (below); each group beside is filled, changed and
 * freed by the module named on it, and read by anyone.
 */

/* What the repository records of it (agents.c reads it). */
struct agent_git {
	char *branch;       /* owned; NULL for the home directory */
	char *agent;        /* owned; what add -a recorded, or NULL: the configured agent */
	char *parent;       /* owned: the agent whose spawn_agent made it; NULL: the user */
	char *group;        /* owned: the group of the add that made it (SPEC §11), or NULL */
	char *layout;       /* owned: its layout (add -l), or NULL: the config's panes */
	char *ports;        /* owned: its ports, "30100,30101" (config ports), or NULL */
	char *home;         /* owned: where its panes start (add --repos), or NULL: its path */
	int max_concurrent; /* its group's limit of agents at work; 0: none */
	bool queued;        /* it waits for a slot of its group (queue.c): no panes yet */
	bool opening;       /* the queue opens it now: its slot is taken */
	bool worktree;      /* an agent's worktree (not the main directory) */
	bool missing;       /* its worktree was deleted by hand: no pane opens there */
	bool ready;         /* add prepared its private git dir just now (backends/) */
};

/*
 * Its sandbox, and what it asked of the host from there: sandbox.c makes
 * its socket and proxy token, keep.c counts the connections its proxy
 * saw, actions.c paces its requests.
 */
struct agent_box {
	int wanted;        /* recorded by add: 1 -S, 0 --no-sandbox, -1 as configured */
	char *rpc_dir;     /* owned; its own RPC socket's directory once a sandbox needs it */
	char *proxy_token; /* owned; under policy: deny, its proxy's, or NULL */
	int egress_ok, egress_refused; /* connections through its proxy, since its keeper began */
	uint64_t egress_said;          /* when a refusal was last said (now_ms) */
	unsigned long egress_quiet;    /* refusals since, counted only */
	char **egress;                 /* owned: the latest of them, one line each, oldest first */
	size_t negress;
	bool host_busy;        /* a host command of its runs (one at a time) */
	uint64_t declined_at;  /* the user last said no to a request of its (now_ms) */
	uint64_t spawn_window; /* now_ms() when its current minute of spawn_agent calls began */
	int spawns;            /* spawn_agent calls in that minute */
	bool merge_asked;      /* its own merge request waits for the user's yes */
};

/* Its pull request as the sidebar shows it (prs.c asks gh about it). */
struct agent_pr {
	int number;     /* 0: none followed */
	char state[12]; /* OPEN, MERGED, CLOSED; "" before the first answer */
	char checks[8]; /* ✓ ✗ ◌, or - for none */
	uint64_t due;   /* now_ms() of its next question */
	uint64_t backoff_ms;
};

/* The server it runs on (remote.c). */
struct agent_remote {
	char *host;        /* owned: its name in remote.hosts, or NULL: here */
	bool prompt_waits; /* add left a prompt in its worktree there, for a first open */
	/* Its server does not answer now: its panes go on there, out of reach (not failed). */
	bool unreachable;
};

struct agent {
	int id;
	int num;      /* its number (prefix 1..9, the sidebar): kept for its life, as tmux
			 keeps a window's index; the lowest free one when it came */
	char *handle; /* owned */
	char *path;   /* owned; working directory of its panes */
	enum wrx_status status;
	uint64_t status_since; /* wall_ms(): kept across restarts, reboots too */
	uint64_t hook_at;      /* when the hook that set status started (wall ms), or 0 */
	bool has_usage;        /* usage: what its session used, as its hooks last said */
	struct rpc_usage usage;
	bool bell;                /* rang while not focused */
	bool attention;           /* needs the user: waiting/done/notify while not focused */
	uint64_t attention_since; /* now_ms() when it last came to need the user */
	uint64_t notified;        /* its last bell or desktop notification (now_ms) */
	char *title;              /* owned; set by the agent (set-title), or NULL */
	char *note;               /* owned; last notify text, or NULL */
	char *failure;    /* owned; failed: how its program ended ("exit 127: ..."), or NULL */
	char *session_id; /* owned; the agent CLI's session: named at start or reported, or NULL */
	char *kept_meta; /* owned; what its keeper and mark were last told (core/keep.c), or NULL */
	char *asks;      /* owned; the questions of its that wait for the user, JSON, or NULL */
	char *fork_from; /* owned; add --fork: the session its first start continues, or NULL */
	char *adopted; /* owned; adopt: the CLI's id of the session it shows (no worktree), or NULL */
	bool adopted_attach; /* its pane shows that session (the CLI's attach); else none here */
	bool quota; /* it waits for its CLI's rate limit or quota: new agents of its kind wait too */
	int npanes;          /* its panes in the session (the session's count) */
	int comments;        /* review comments waiting for it (the sidebar's ✎N) */
	uint64_t resumed_at; /* now_ms() when resume_kept opened it with its resume flag, or 0 */
	bool checking, check_again; /* its group's check runs (checks.c); done again meanwhile */
	struct agent_git git;
	struct agent_box box;
	struct agent_remote remote;
	struct agent_pr pr;
};

/* A working agent whose pane printed nothing this long is shown interrupted. */
#define WRX_SILENCE_MS 10000

struct session;
struct runner;

struct wpane {
	int id;                  /* unique for the session's life; WORKREX_PANE */
	struct pane *term;       /* owned */
	struct agent *agent;     /* borrowed */
	struct session *session; /* borrowed */
	char *label;             /* owned; the command, for the border */
	bool bell;               /* rang while not focused */
	uint64_t last_output;    /* now_ms() of the last output */
	uint64_t changes;        /* how often its screen changed (damage events) */
	uint64_t last_key;       /* now_ms() of the user's last key or paste into it */
	uint64_t clip_refused;   /* now_ms() when the user last refused its clipboard write */
	bool sandboxed;          /* runs in the agent's sandbox (the pane_argv hook decides how) */
	struct runner
		*runner; /* owned: where and how its program runs (core/runner.c), never NULL */
	void *view;      /* owned by the UI (scroll state), freed through ui hook */
	/*
	 * Shown: laid out on the screen (drawn), or its screen wanted exact
	 * meanwhile (a delivery, a capture). A pane neither is costs the
	 * dashboard nothing: its keeper holds its rows back (session_pane_view).
	 */
	bool drawn;
	int wanted;
};

struct session_hooks {
	void (*changed)(void *ui);                     /* something to redraw */
	void (*pane_gone)(void *ui, struct wpane *wp); /* before a pane is freed */
	void (*bell)(void *ui, struct wpane *wp);
	/* wp's program wrote text to the clipboard (OSC 52); whether it is set is the hook's call. */
	void (*clipboard)(void *ui, struct wpane *wp, const char *text, size_t len);
	/* An unfocused agent needs the user (waiting, done, notify): notify per config. */
	void (*attention)(void *ui, struct agent *a, const char *what);
	/* Its agent's program ended badly (failed, a->failure says how). */
	void (*agent_failed)(void *ui, struct agent *a);
	/* a's status changed (a->status is the new one). */
	void (*status)(void *ui, struct agent *a);
	/* Extra "K=V" strings for a new pane's environment (NULL-terminated, owned by session). */
	char **(*pane_env)(void *ui, struct wpane *wp);
	/*
	 * The argv the pty runs for wp, given its command and environment
	 * (NULL-terminated, owned by the caller of the hook), or *out NULL to
	 * run argv as it is. 0, or -errno with *cause: the pane does not open.
	 */
	int (*pane_argv)(void *ui, struct wpane *wp, char *const *argv, char *const *env,
			 char ***out, char **cause);
	/*
	 * Where the pane's bytes come from and go: attach a pane_io to wp->term
	 * (pane_set_io) and feed it output (pane_feed). NULL: a pty running the
	 * program (pty_start). The seam the session's tests, and the keepers'
	 * sockets later, use. 0, or -errno with *cause.
	 */
	int (*pane_start)(void *ui, struct wpane *wp, const struct pty_spawn *sp, char **cause);
	/* The user closes wp (not the session ending): its program is to end too. */
	void (*pane_closing)(void *ui, struct wpane *wp);
	/* Lay the panes out now: new panes, not started yet, learn their size. */
	void (*place)(void *ui);
};

struct session *session_new(uv_loop_t *loop, const struct session_hooks *hooks, void *ui);
/* The ui given to session_new. */
void *session_owner(const struct session *s);
void session_free(struct session *s);

void session_set_scrollback(struct session *s, size_t lines);
/* Pane ids from id on (a keeper of an earlier dashboard may hold lower ones). */
void session_set_next_pane_id(struct session *s, int id);
/* New panes are mirrors (pane_mirror_new) of panes another process emulates. */
void session_set_mirrors(struct session *s, bool on);
/*
 * A pane that already runs (a keeper's mirror, taken over): it joins agent
 * a with its own id, in id order among a's panes. The session owns term.
 */
struct wpane *session_adopt_pane(struct session *s, struct agent *a, struct pane *term, int id,
				 const char *label, bool sandboxed);

struct agent *session_add_agent(struct session *s, const char *handle, const char *path);
/* Give a its recorded number, if no other agent has it. */
void session_set_agent_num(struct session *s, struct agent *a, int num);
/* The index of the agent numbered num, or -1. */
int session_agent_by_num(const struct session *s, int num);
/* The agent was renamed on disk (workrex rename): its handle, path, branch (NULL: same). */
void session_rename_agent(struct session *s, struct agent *a, const char *handle, const char *path,
			  const char *branch);
/*
 * The lookups of a child's or a connection's late callback: a session the
 * core closed already (NULL) has no agent and no pane.
 */
struct agent *session_find_agent(const struct session *s, const char *handle);
/* The agent the user made that a's line (parent, its parent, ...) goes back to; a itself. */
struct agent *session_family_root(const struct session *s, struct agent *a);
/* Close the agent's panes and drop it from the dashboard. */
void session_remove_agent(struct session *s, struct agent *a);
int session_agent_panes(const struct session *s, const struct agent *a);
/* The agent's first pane (its agent pane), or NULL. */
struct wpane *session_agent_pane(const struct session *s, const struct agent *a);

struct pane_open {
	char *const *argv; /* borrowed; NULL: the user's shell */
	const char *label; /* borrowed; NULL: argv[0]'s name */
	bool sandboxed;    /* runs in the agent's sandbox */
	bool focus;        /* focused (the last such of the n) */
};
/*
 * Open n panes in agent a together: all are laid out (the place hook)
 * before the first program starts, so that none is resized as it starts.
 * out[i] gets each (may be NULL). 0, or -errno with *cause: the panes
 * before the one that failed stay open, it and those after it do not.
 */
int session_open_panes(struct session *s, struct agent *a, const struct pane_open *o, int n,
		       int rows, int cols, struct wpane **out, char **cause);
/*
 * One pane running argv (NULL: the user's shell) in agent a, sized rows x
 * cols until the layout says otherwise, focused if `focus`: the pane, or
 * NULL with *cause. (session_open_panes with one.)
 */
struct wpane *session_open_pane(struct session *s, struct agent *a, char *const *argv, int rows,
				int cols, bool focus, char **cause);
void session_close_pane(struct session *s, struct wpane *wp);

int session_pane_count(const struct session *s);
struct wpane *session_pane(const struct session *s, int i);
int session_pane_index(const struct session *s, const struct wpane *wp);
int session_agent_count(const struct session *s);
struct agent *session_agent(const struct session *s, int i);

struct wpane *session_focus(const struct session *s);
void session_set_focus(struct session *s, struct wpane *wp);
/* Focus agent i (0-based): its last focused pane; again, its next pane. */
void session_focus_agent(struct session *s, int i);

enum wrx_layout session_layout(const struct session *s);
void session_set_layout(struct session *s, enum wrx_layout kind);
void session_next_layout(struct session *s);
bool session_zoomed(const struct session *s);
void session_toggle_zoom(struct session *s);

/*
 * The agent's status, as its hooks report it. waiting, done and failed on
 * an agent that is not focused raise its attention (and the attention
 * hook); focusing the agent later clears the attention, not the status,
 * which stays until the agent reports another.
 */
void session_set_status(struct session *s, struct agent *a, enum wrx_status st);
/* The same, as it was since a wall_ms() time: a status kept, given back. */
void session_set_status_at(struct session *s, struct agent *a, enum wrx_status st, uint64_t since);
/* How long a has had its status (ms). */
uint64_t agent_status_age(const struct agent *a);
void session_set_title(struct session *s, struct agent *a, const char *title);
/* How many review comments wait for it (git/comments.h). */
void session_set_comments(struct session *s, struct agent *a, int n);
/* Another of its facts changed (its PR's state): shown again. */
void session_agent_changed(struct session *s, struct agent *a);
/* Its note under its row, said quietly: no bell, no attention (the merge queue's place). */
void session_note(struct session *s, struct agent *a, const char *text);
/* A notification from the agent: attention unless focused. */
void session_notify(struct session *s, struct agent *a, const char *text);
/* Working, but its agent pane has been silent for WRX_SILENCE_MS at now (now_ms). */
bool session_interrupted(const struct session *s, const struct agent *a, uint64_t now);
struct wpane *session_find_pane(const struct session *s, int id);
/* Tell wp's keeper whether it is shown (wp->drawn, wp->wanted) when that changed. */
void session_pane_view(struct wpane *wp);
/* Want wp's screen exact (on) until the same call with off. */
void session_pane_want(struct wpane *wp, bool on);

/* Panes whose program still runs. */
int session_running(const struct session *s);

#endif
