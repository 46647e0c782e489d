/*
 * agentcmd.h - the command line that starts an agent CLI in its pane.
 *
 * The agent kinds (config/kinds.h) take their first prompt, their resume
 * and fork flags each in their own way; their row says how (after "--",
 * or as a flag's '=' value, so a prompt that starts with '-' is never read
 * as flags; or typed in once the CLI is up). Agents come from the global
 * `agents` map (a profile: its type, command, args, env) or are a plain
 * command; {prompt} ("$(cat F)") and
 * {prompt_file} in their command or arguments place the prompt where they
 * want it, and every agent gets WORKREX_PROMPT_FILE. The result is a
 * /bin/sh -c line, with every word quoted, that reads the prompt from
 * .workrex/PROMPT-<handle>.md.
 */
#ifndef WRX_AGENTCMD_H
#define WRX_AGENTCMD_H

#include "../config/config.h"

#include <stdbool.h>

/* The agent name to use: configured, else claude if installed, else NULL (the shell). */
const char *agentcmd_default(const struct config *c);

struct agentcmd_opts {
	const char *prompt_file; /* the first prompt, or NULL */
	const char *resume;      /* NULL: a new session; "": its latest; else that session */
	const char *fork;        /* a session to continue in a new one (a new session), or NULL */
	const char *session;     /* the id of a new session, where the kind takes one, or NULL */
	bool sandboxed;          /* its approval flag (never outside a sandbox) */
};

/*
 * The /bin/sh -c line for agent name (NULL: the user's shell), as o says
 * (NULL: a new session, no prompt). Caller frees.
 */
char *agentcmd_line(const struct config *c, const char *name, const struct agentcmd_opts *o);

/* Can the agent continue its latest session (a kind with a resume flag)? */
bool agentcmd_resumes(const struct config *c, const char *name);
/* Can it fork a session (a kind with a fork flag)? */
bool agentcmd_forks(const struct config *c, const char *name);
/* Does it start a session with an id we give (agentcmd_opts.session)? */
bool agentcmd_names_sessions(const struct config *c, const char *name);
/* Is its first prompt typed into it (a kind with no prompt flag, no {prompt})? */
bool agentcmd_types_prompt(const struct config *c, const char *name);

/*
 * Does the agent take the prompt (a known agent, or {prompt}/{prompt_file}
 * in its command or arguments)? Others only get WORKREX_PROMPT_FILE.
 */
bool agentcmd_takes_prompt(const struct config *c, const char *name);

#endif
