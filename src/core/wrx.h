/*
 * wrx.h - the application: one project's agents and their panes, its
 * config, the RPC bridge and the sandbox identity, on one libuv loop.
 *
 * The dashboard (src/ui/) is one face of it. The core draws nothing and
 * includes no curses: it runs as well with no terminal at all (the
 * headless unit test; a command's own core, cmd_core.c). It tells its face what
 * changed through wrx_hooks, as the session tells the core; every hook may
 * be NULL. What the core does for a caller is a verb of actions.h.
 */
#ifndef WRX_WRX_H
#define WRX_WRX_H

#include "../config/config.h"
#include "../util/util.h"
#include "session.h"

#include <stdbool.h>
#include <json-c/json.h>
#include <uv.h>

struct act_call;
struct parked_reply;

struct wrx;
struct strlist;

/* The user's answer to a yes/no question: yes false also when cancelled. */
typedef void wrx_answer_fn(struct wrx *w, bool yes, void *arg);
/* What the outer terminal's clipboard held: data, or NULL with why. */
typedef void wrx_clip_fn(struct wrx *w, const char *data, size_t len, const char *why, void *arg);

struct wrx_hooks {
	void (*changed)(void *ui);  /* something to redraw */
	void (*relayout)(void *ui); /* panes or agents came, went or changed order */
	void (*message)(void *ui, bool error, const char *text);     /* one line for the user */
	void (*show)(void *ui, const char *title, const char *text); /* an output shown whole */
	void (*ring)(void *ui);                                      /* the outer terminal's bell */
	void (*pane_gone)(void *ui, struct wpane *wp);               /* before the pane is freed */
	void (*started)(void *ui); /* a keeper's start answered (w->starting is one less) */
	/*
	 * Ask yes or no; done is called once, later. A question of the user's
	 * own (agent NULL: a key they just pressed) opens at once, -EBUSY
	 * while another is open. An agent's (its handle) waits, never taking a
	 * key, until the user opens it on purpose; -EBUSY when too many of that
	 * agent's wait already.
	 */
	int (*ask)(void *ui, const char *question, const char *agent, wrx_answer_fn *done,
		   void *arg);
	/* Set the user's clipboard to text (the outer terminal's, and the system's). */
	void (*set_clipboard)(void *ui, const char *text, size_t len);
	/*
	 * Read the image on the outer terminal's clipboard (kitty's protocol,
	 * OSC 5522): done is called once, later. -ENOTSUP when the terminal
	 * does not offer it, -EBUSY while a read is under way.
	 */
	int (*terminal_clipboard)(void *ui, wrx_clip_fn *done, void *arg);
	/* The size a new pane starts at, until it is placed. */
	void (*pane_size)(void *ui, int *rows, int *cols);
	/* Lay the panes out now: new ones get their size before their program starts. */
	void (*place)(void *ui);
	void (*config_changed)(void *ui); /* reloaded: keys, prefix, icons */
	void (*trust)(void *ui);          /* the project's config may now ask to be trusted */
	/* Answer a waiting question by its id (the answer verb): 0, or -1 when none such waits. */
	int (*answer)(void *ui, unsigned id, bool yes);
};

struct repo;

struct wrx {
	uv_loop_t *loop;
	struct session *s;
	struct config cfg;
	char *cwd;         /* owned */
	char *root;        /* owned: the repository's main worktree, or cwd outside git */
	char *config_file; /* owned: --config, or NULL */
	bool in_repo;
	struct repo *repo; /* borrowed: the command's repository (wrx_opts), or NULL */
	char *self_exe;    /* owned: this binary, for the verbs that run as a child */
	struct rpc_server *rpc;
	char *sock_path; /* owned: the control socket, also agents' RPC socket */
	/* For sandboxes, read once at start (sandbox.c): */
	char *gitdir;                /* owned: the repository's common .git directory */
	struct act_call *hx_waiting; /* host commands waiting for their agent's (actions.c) */
	uint64_t start_window;       /* now_ms() when the current minute of agents' spawns began */
	int starts;                  /* agents agents made in it */
	char *git_name;              /* owned: user.name, or NULL */
	char *git_email;             /* owned: user.email, or NULL */
	char *guest_bin;             /* owned: the static guest client */
	char *session_id;            /* owned: labels what this process starts */
	int rpc_port;                /* the TCP listener's port, once a runtime needed one */
	char *keeper_dir;         /* owned: where the project's keepers listen (runner.c's only) */
	int starting;             /* keepers here starting (runner.c) */
	unsigned keepers_started; /* keepers here ever started: a command's are seen */
	struct parked_reply *parked; /* control replies waiting for their panes (actions.c) */
	bool helper;                 /* takes keepers over as a helper, not as their writer */
	/* A helper for one agent\'s request: only that agent\'s keepers taken over (borrowed). */
	const char *attach_only;
	struct strlist kept_containers; /* containers keepers run: not a dead dashboard's */
	struct rhost *hosts;            /* owned: the servers of its remote agents (remote.c) */
	uv_timer_t pr_timer;            /* the next agent's PR question is due (prs.c) */
	bool pr_timer_on, pr_asking;
	char *remote_sock; /* owned: the bridge's socket for agents there, or NULL */
	/* How long the loop worked without waiting (wrx.c): each turn, and the longest. */
	uv_prepare_t stall;
	uint64_t stall_at, stall_idle, stall_cpu, stall_limit, stall_max, stall_cpu_max; /* ns */
	long stall_waits, stall_preempted; /* the thread's context switches so far */
	bool stall_on;
	/* Colours the dashboard's terminal shows: 8, 16, 256, 1 << 24; 0 before it says. */
	int display_colours;
	bool quitting;
	/* The merge queue's landing, a child (lander.c): running; agents done meanwhile. */
	bool landing;
	struct strlist land_done;
	const char *answer; /* while a question's answer is handled: its word ("y", "q"...) */
	struct registry *registry; /* owned: the watched registries (registry.c), or NULL */
	const struct wrx_hooks *hooks;
	void *ui;
};

struct wrx_opts {
	const char *cwd;         /* NULL: the current directory */
	const char *config_file; /* --config, replaces the project file; NULL: search */
	const char *self_exe;    /* NULL: this process's binary */
	bool keepers;            /* panes run in keepers (runner.c), self_exe being workrex */
	bool helper;             /* with keepers: a command's core, not the dashboard (runner.c) */
	const char *only;  /* a helper for this agent's request: its record and keepers only */
	struct repo *repo; /* the command's, open already (borrowed), or NULL: opened here */
};

/*
 * The project at o->cwd: its repository (read once, here) and its config.
 * Nothing listens and nothing runs yet. 0, or -errno with *cause (w then
 * holds nothing to free).
 */
int wrx_open(struct wrx *w, uv_loop_t *loop, const struct wrx_opts *o,
	     const struct wrx_hooks *hooks, void *ui, char **cause);
/*
 * Listen on the control socket, list the project's agents (the main
 * directory first: session agent 0) and clean up containers a dead
 * process of this project left. 0, or -errno with *cause.
 */
int wrx_start(struct wrx *w, char **cause);
/* Close every pane and listener and free all; the loop's handles close on its next run. */
void wrx_close(struct wrx *w);

/* A line for the user (the status line of the dashboard; the log headless). */
void wrx_message(struct wrx *w, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void wrx_relayout(struct wrx *w);
/*
 * fn(w, a) on the loop's next turn, for the agent named handle then; not
 * called if it went meanwhile or the core quits. For what must not be
 * done inside the event that asks for it: its callers still hold a.
 */
typedef void wrx_agent_fn(struct wrx *w, struct agent *a);
void wrx_agent_later(struct wrx *w, const char *handle, wrx_agent_fn *fn);
/* Read the config files (global, then the project's or --config) into c, as at start. */
int wrx_config_read(const struct wrx *w, struct config *c, char **cause);
/* A workrex child's last line without its "workrex: " prefix: the outcome shown. */
const char *wrx_outcome(const char *last);
/* Read the config files again; on an error the old config stays. */
int wrx_config_reload(struct wrx *w, struct strlist *warnings, char **cause);
/* Agent a needs the user: the bell and the desktop, as `notify` says. */
void wrx_attention(struct wrx *w, struct agent *a, const char *what);
/* Whether the config's notify: has how ("bell", "desktop"), or "both". */
bool wrx_notify_has(const struct wrx *w, const char *how);
/*
 * Run w's loop until done(w) holds (NULL: never) or timeout_ms passed,
 * asleep between its events: a command's core, which waits for its panes.
 */
void wrx_run_until(struct wrx *w, bool (*done)(struct wrx *w), int timeout_ms);
/* A new pane's size, from the face (24x80 with none). */
void wrx_pane_size(struct wrx *w, int *rows, int *cols);

/* actions.c: the agents whose session is id: the one, or NULL with *n how many (0, or 2). */
struct agent *agent_by_session(struct wrx *w, const char *id, int *n);
/*
 * a's CLI reported st (fired at `at`, wall ms; 0: not said; why: its reason,
 * for waiting or failed), from a hook or its registry (from says which, for
 * the log): applied unless older than the status it holds (status_late).
 * Whether it was. The caller keeps the meta.
 */
bool agent_status_heard(struct wrx *w, struct agent *a, enum wrx_status st, uint64_t at,
			const char *why, const char *from);

/* registry.c: status with no hooks, from an agent CLI's registry of its sessions. */
void registry_start(struct wrx *w);
/* Every session's entry read again: for an agent that came (adopt) after they were written. */
void registry_rescan(struct wrx *w);
void registry_stop(struct wrx *w);

/* agents.c: the project's agents and opening their panes. */
void agents_load(struct wrx *w);
struct adopted_rec;
/* A row for a session adopted from outside workrex; NULL: its handle is taken. */
struct agent *agents_adopt(struct wrx *w, const struct adopted_rec *ad);
/* Open a's panes (focus: focus one; cont: continue the agent's last session). */
int agents_open(struct wrx *w, struct agent *a, bool focus, bool cont, char **cause);

/*
 * runner.c: where each pane's program runs (a pty here, a keeper here, a
 * keeper there), chosen once per pane; starting, adopting and ending panes.
 */
int runner_open(struct wrx *w, char **cause); /* the project's keepers' directory */
void runner_close(struct wrx *w);
int runner_pane_start(struct wrx *w, struct wpane *wp, const struct pty_spawn *sp, char **cause);
void runner_pane_closing(struct wrx *w, struct wpane *wp);
void runner_pane_gone(struct wrx *w, struct wpane *wp);
/* A pane there: what its border says while it is not attached, or NULL. */
const char *runner_pane_link(const struct wpane *wp);
/* prs.c: the agents' pull requests followed for the sidebar, asked of gh by a child. */
void prs_start(struct wrx *w);
void prs_track(struct wrx *w, struct agent *a, int number);
void prs_stop(struct wrx *w);
/*
 * An agent as a child's callback finds it when the child ends: by its
 * handle, never a pointer that may have gone (base.c).
 */
struct agent_ref {
	struct wrx *w;
	char *handle; /* owned */
};
struct agent_ref *agent_ref_new(struct wrx *w, const struct agent *a);
/* The agent, or NULL: it went, or the dashboard is ending. */
struct agent *agent_ref_get(const struct agent_ref *r);
void agent_ref_free(struct agent_ref *r);
/* checks.c: a group's candidate that reaches done gets its check (SPEC §11). */
void checks_status(struct wrx *w, struct agent *a);
/* Every done candidate's, the check being new (trusted just now, or changed). */
void checks_all(struct wrx *w);
/*
 * queue.c: add --max-concurrent's waiting agents, each opened when its
 * group has a slot (fewer than its limit at work); group NULL: every group.
 */
void queue_run(struct wrx *w, const char *group);
/*
 * lander.c: the merge queue's landing (`queue run`, a child, one at a
 * time): started when asked (queue-kick) and when an agent says done
 * while the project has a queue (it may have been given back).
 */
void lander_kick(struct wrx *w, const char *done);
void lander_status(struct wrx *w, struct agent *a);
/* At the dashboard's start: what is queued lands (a killed landing is taken again). */
void lander_start(struct wrx *w);
/* Take over the project's running keepers as panes of their agents; how many. */
int runner_attach(struct wrx *w);
/* The lowest pane id no keeper of the project has. */
int runner_next_id(struct wrx *w);
/* No pane's keeper is starting or yet to answer, here or there (a command's core waits). */
bool runner_settled(struct wrx *w);
/* Until what the panes wrote reached their keepers (at most timeout_ms). */
void runner_flush(struct wrx *w, int timeout_ms);
/*
 * kept.c: an agent's mark, which outlives a reboot (keeper/mark.h's
 * format): its session and what it was, for resume.c.
 */
/* The mark's path (its directory made when create); NULL when there is none. */
char *kept_path(struct wrx *w, const struct agent *a, bool create);
/* a's agent CLI reported its session id (well formed): kept to resume it after a reboot. */
void kept_session(struct wrx *w, struct agent *a, const char *id);
/* The agent's "its keeper runs" mark (for remote.c too). */
void kept_mark(struct wrx *w, struct agent *a, bool on);
/* meta (keep.c) into a's mark, where it has one, when it says something new. */
void kept_meta(struct wrx *w, struct agent *a, const char *meta);
bool kept_marked(struct wrx *w, const struct agent *a);
/* What the agent was (keep_meta's JSON), from its keeper's hello or its mark. */
void kept_meta_apply(struct wrx *w, struct agent *a, const char *meta);
/* a's mark applied: its session, its status; false when it had failed (left so). */
bool kept_apply(struct wrx *w, struct agent *a);

/*
 * resume.c: agents whose keepers went with a reboot, opened again with
 * their resume flag. The dashboard calls it once its terminal is sized,
 * so that the programs start at their panes' size.
 */
void resume_kept(struct wrx *w);
/* A resumed agent failed: started anew when it was at once (nothing to resume). */
void resume_failed(struct wrx *w, struct agent *a);
/* For remote.c: connect wp to its keeper's socket; its hello is adopted as every pane's. */
struct keeper_conn;
typedef void keeper_gone_fn(struct keeper_conn *c, const char *why, void *data);
int runner_connect(struct wrx *w, struct wpane *wp, const char *socket, keeper_gone_fn *gone,
		   char **cause);

/* keep.c: what the core tells its panes' keepers, and hears from them. */
/* Tell a's keepers what it reported (status, title, note), for the next dashboard. */
void keep_meta(struct wrx *w, struct agent *a);
/*
 * The questions of agent handle's that wait for the user ([{id, question}],
 * taken; NULL or empty: none), told to its keepers with its meta, for a web
 * view that is not this dashboard's (meta "asks": {"by": our pid, "list"}).
 */
void keep_asks(struct wrx *w, const char *handle, json_object *list);
/* A connection through one of a's proxies ended (proxy_event_json's object): logged, counted. */
void wrx_egress(struct wrx *w, struct agent *a, json_object *o);
/* allowed_domains as the config has it now, to every running proxy of this dashboard's. */
void keep_proxy_policy(struct wrx *w);
/* The same to wp's keeper only (NULL: every one). */
void keep_policy_to(struct wrx *w, struct wpane *wp);
/* a's proxy (policy: deny), for its agent pane's keeper to run (net/spec.h). */
json_object *keep_proxy_spec(struct wrx *w, struct agent *a);

/* remote.c: agents on servers, their keepers there reached through a link a host. */
int remote_pane_start(struct wrx *w, struct wpane *wp, const char *spec, char **cause);
void remote_pane_closing(struct wrx *w, struct wpane *wp);
/* Its keeper answered (runner_hello): as the pane asked, or another pane's. */
void remote_pane_attached(struct wrx *w, struct wpane *wp);
void remote_pane_wrong(struct wrx *w, struct wpane *wp);
/* Every host of the session's remote agents brought up, its keepers attached. */
void remote_attach(struct wrx *w);
/* That host, if it is not up. */
void remote_attach_host(struct wrx *w, const char *name);
/* No child of remote.c runs (a command's core waits for it before it ends). */
bool remote_settled(struct wrx *w);
/* The lowest pane id above those of the project's panes on servers. */
int remote_next_id(struct wrx *w);
void remote_stop(struct wrx *w);

/* bridge.c: the RPC server, its tokens, and agents' requests into actions. */
int bridge_start(struct wrx *w, char **cause);
void bridge_stop(struct wrx *w);
char **bridge_pane_env(struct wrx *w, struct wpane *wp);
void bridge_pane_gone(struct wrx *w, struct wpane *wp);

/* sandbox.c: panes that run in a backend. */
void sandbox_start(struct wrx *w);
void sandbox_stop(struct wrx *w);
bool sandbox_wanted(struct wrx *w, const struct agent *a);
bool sandbox_pane_wanted(struct wrx *w, const struct agent *a, bool agent_pane);
/* a runs on a server, sandboxed there (add -S, or sandbox.enabled): its container is the server's. */
bool sandbox_there(struct wrx *w, const struct agent *a);
/*
 * What a pane of a there gets in its start request (remote/boxed.h): the
 * settings resolved here, its agent and branch, the proxy token under
 * deny; NULL when the pane runs unsandboxed there.
 */
json_object *sandbox_there_spec(struct wrx *w, struct agent *a, bool agent_pane);
int sandbox_pane_argv(struct wrx *w, struct wpane *wp, char *const *argv, char *const *env,
		      char ***out, char **cause);
void sandbox_pane_gone(struct wrx *w, struct wpane *wp);
/*
 * Its ports (config ports) as its agent pane's keeper listens on them
 * (net/portfwd.h): its ports directory, made, and the container's exec.
 */
json_object *sandbox_ports_spec(struct wrx *w, struct agent *a, const char *container);
/* The agent's own RPC socket (its containers mount its directory), listened on. */
int sandbox_agent_socket(struct wrx *w, struct agent *a, char **cause);
/* sandbox.network.policy is deny. */
bool sandbox_network_denied(const struct wrx *w);

#endif
