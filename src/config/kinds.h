/*
 * kinds.h - the agent CLIs workrex knows: one row per kind (SPEC §12).
 *
 * Everything that depends on which CLI an agent is reads this table: the
 * command line that starts it (agentcmd.c), what `setup` installs for its
 * status, what a sandbox mounts of its config and what a VM installs, the
 * cheap command behind `add -A`, `workrex agents` and workrex(1)'s AGENT
 * KINDS. Nothing else names a CLI. An agent that is no kind (a plain
 * command) runs as given: no flags are added, its prompt is in
 * $WORKREX_PROMPT_FILE.
 */
#ifndef WRX_KINDS_H
#define WRX_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;
struct buf;

/* How a kind takes the first prompt on its command line. */
enum kind_prompt {
	KIND_PROMPT_ARG,   /* after "--", the last word: never read as a flag */
	KIND_PROMPT_FLAG,  /* as a flag's '=' value (prompt_flag) */
	KIND_PROMPT_TYPED, /* none: typed into its input once it is up */
};

/* What `setup` installs so that the kind reports its status. */
enum kind_hooks {
	KIND_HOOKS_NONE,
	KIND_HOOKS_CLAUDE,   /* Claude Code's JSON shape (below): Claude's, Qwen Code's, Grok's */
	KIND_HOOKS_CODEX,    /* hooks.json, and [features] hooks on in config.toml */
	KIND_HOOKS_GEMINI,   /* settings.json "hooks", named, timeouts in ms */
	KIND_HOOKS_OPENCODE, /* a plugin file, loaded by OpenCode v1 and v2 */
	KIND_HOOKS_LIST,     /* a JSON file of handler lists (struct kind_list) */
};

/*
 * A hook file whose events each list their handlers, with no groups:
 * {"hooks": {EVENT: [{COMMAND: "...", "matcher": "...", TIMEOUT: N}]}}
 * (GitHub Copilot CLI's, Cursor's, Kiro CLI's agent files). Claude Code's
 * shape, which the others took, has groups: {"hooks": {EVENT: [{"matcher":
 * "...", "hooks": [{"type": "command", "command": "...", "timeout": N}]}]}}.
 */
struct kind_list {
	const char *command; /* the handler's key for its command: "command", Copilot "bash" */
	const char *timeout; /* its key for the timeout (the events' unit): "timeout" */
	bool typed;          /* each handler says "type": "command" */
	const char *head;    /* a JSON object: keys the file gets where it lacks them */
};

/*
 * One hook event of a kind and the status it reports: what `setup`
 * installs (`workrex set-status STATUS` on EVENT, where MATCHER matches),
 * and what workrex(1) lists. A kind's events end with a NULL event.
 */
struct kind_event {
	const char *event;   /* "Stop" */
	const char *matcher; /* or NULL */
	const char *status;  /* what set-status reports: working, waiting, done, failed, clear */
	int timeout;         /* the agent's unit: Claude and Codex seconds, Gemini ms */
	const char *name;    /* the hook's name (Gemini shows it), or NULL */
};

struct agent_kind {
	const char *name;       /* the command: claude */
	const char *title;      /* Claude Code */
	const char *doc;        /* where its flags below were checked */
	const char *install;    /* how it is installed: "npm:PKG", "pip:PKG", or a URL */
	const char *subcommand; /* words after the command that start its chat, or NULL */
	enum kind_prompt prompt;
	const char *prompt_flag;  /* KIND_PROMPT_FLAG: "--prompt-interactive=" */
	const char *resume;       /* words that continue its latest session */
	const char *resume_id;    /* words before a session id that resume that one */
	const char *fork;         /* words that fork session {id} into a new one */
	const char *session_flag; /* a flag that starts a new session with an id we chose */
	const char *approve;      /* its no-questions flag: only ever inside a sandbox */
	const char *auto_name;    /* a cheap one-shot command: a request on stdin, text out */
	enum kind_hooks hooks;
	const struct kind_event *events; /* its hook events mapped to statuses, or NULL */
	const struct kind_list *list;    /* KIND_HOOKS_LIST: how its file lists them */
	const char *hooks_file;          /* inside config_dir */
	const char *hooks_args;          /* words its command line takes once the file is there */
	const char *usage;               /* what it writes of what a session used, or NULL */
	/*
	 * Its registry of running sessions, inside config_dir, read with no
	 * hooks (core/registry.c): a directory of PID.json files, each
	 * {sessionId, cwd, status: busy|idle|waiting, waitingFor,
	 * statusUpdatedAt} (Claude Code's sessions/, which `claude agents
	 * --json` lists), or NULL.
	 */
	const char *registry;
	/* Its background jobs, inside config_dir: ID/state.json, {state: working|blocked|done|...}. */
	const char *jobs;
	/* Words after its name that list its sessions as JSON, for `adopt`; or NULL. */
	const char *sessions_list;
	/* Words after its name, before a background session's id, that show it in a terminal. */
	const char *attach;
	const char *config_dir; /* under HOME ($XDG_CONFIG_HOME for .config/...) */
	const char *config_env; /* the variable that moves config_dir, or NULL */
	/*
	 * What a sandbox gets of config_dir (backends/agenthome.h): settings
	 * bound read-only from the host, credentials copied fresh at each
	 * start, and everything else the sandbox's own (its state: sessions,
	 * transcripts, histories, snapshots, caches), never the host's. No
	 * settings listed: the whole dir read-only, nothing of it private.
	 */
	const char *settings[16];
	const char *rekeyed; /* one of settings that names config_dir by its path (agenthome.h) */
	const char *credentials[6];
	const char *home_file; /* beside config_dir in HOME: a private copy per sandbox */
	/* Its object in home_file that maps a folder to its trust (agenthome.h), or NULL. */
	const char *home_trust;
	/*
	 * Its file of trusted folders inside config_dir (Gemini CLI's
	 * trustedFolders.json: path -> TRUST_FOLDER | TRUST_PARENT |
	 * DO_NOT_TRUST; cmd/folder_trust.c), or NULL.
	 */
	const char *trusted_folders;
};

extern const struct agent_kind agent_kinds[];
extern const size_t agent_nkinds;

/* The kind named name (a command's last path component), or NULL. */
const struct agent_kind *kind_find(const char *name);
/*
 * The kind of the agent called name in c: a profile's type, else its
 * command's first word, else the name itself. NULL: no kind.
 */
const struct agent_kind *kind_of(const struct config *c, const char *name);
/* Is the kind's command on PATH? */
bool kind_installed(const struct agent_kind *k);
/* The kind's config dir for home: its variable, else under home; NULL: none. Caller frees. */
char *kind_config_dir(const struct agent_kind *k, const char *home);
/* Where `setup` writes the kind's hooks; NULL: none. Caller frees. */
char *kind_hooks_path(const struct agent_kind *k, const char *home);
/* Has `setup` written the kind's hooks file under home (its hooks_args then apply)? */
bool kind_hooks_written(const struct agent_kind *k, const char *home);
/*
 * When a hook of k last reached a dashboard (wall ms; 0: never): the
 * dashboard notes it (kind_heard_note, at most once a minute per kind and
 * process), `agents` and `setup` say it.
 */
uint64_t kind_heard(const struct agent_kind *k);
void kind_heard_note(const struct agent_kind *k, uint64_t at);
/*
 * The state of k's background job id, as its state.json says (working,
 * blocked, done, failed, stopped, crashed...), into state[len]: 0, or
 * -errno (no such job, or no state in it).
 */
int kind_job_state(const struct agent_kind *k, const char *home, const char *id, char *state,
		   size_t len);
/* workrex(1)'s AGENT KINDS section, between its BEGIN and END lines. */
void kind_reference_man(struct buf *b);
/* workrex.yaml(5)'s table of how each kind reports status and cost (KIND STATUS). */
void kind_reference_status_man(struct buf *b);

#endif
