/*
 * agentcmd.c - see agentcmd.h.
 */
#include "agentcmd.h"

#include "../util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct known_agent {
	const char *name;
	/*
	 * How the prompt goes in: a flag that takes it with '=' (so a prompt
	 * that starts with '-' stays a value), or NULL: after "--", as the
	 * last argument (never read as flags).
	 */
	const char *prompt_flag;
	const char *resume;    /* words added to continue the latest session; NULL: none */
	const char *resume_id; /* words before a session id to resume that one; NULL: none */
	const char *approve;   /* its no-questions flag, only ever added in a sandbox */
};

static const struct known_agent known[] = {
	{"claude", NULL, "--continue", "--resume", "--dangerously-skip-permissions"},
	{"codex", NULL, "resume --last", "resume", "--yolo"},
	{"gemini", "--prompt-interactive=", "--resume", "--resume", "--yolo"},
	{"opencode", "--prompt=", "--continue", "--session", NULL},
};

static const struct known_agent *find_known(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	base = base ? base + 1 : cmd;
	for (size_t i = 0; i < WRX_ARRAY_LEN(known); i++)
		if (strcmp(known[i].name, base) == 0)
			return &known[i];
	return NULL;
}

const char *agentcmd_default(const struct config *c)
{
	if (c->agent && *c->agent)
		return c->agent;
	return path_has("claude") ? "claude" : NULL;
}

/* The known agent behind name: a profile's name or command, or the command itself. */
static const struct known_agent *known_for(const struct config *c, const char *name)
{
	const struct agent_def *def = name ? config_agent(c, name) : NULL;
	const char *cmd = def ? def->command : name;
	if (cmd == NULL)
		return NULL;
	const struct known_agent *k = find_known(def ? def->name : cmd);
	return k == NULL && def ? find_known(def->command) : k;
}

bool agentcmd_resumes(const struct config *c, const char *name)
{
	const struct known_agent *k = known_for(c, name);
	return k && k->resume;
}

char *agentcmd_build(const struct config *c, const char *name, const char *prompt_file, bool cont)
{
	return agentcmd_build_sandboxed(c, name, prompt_file, cont ? "" : NULL, false);
}

/* Does the agent's command or arguments ask for the prompt itself ({prompt}, {prompt_file})? */
static bool has_placeholder(const char *cmd, const struct agent_def *def)
{
	if (cmd && (strstr(cmd, "{prompt}") || strstr(cmd, "{prompt_file}")))
		return true;
	for (size_t i = 0; def && i < def->args.n; i++)
		if (strstr(def->args.v[i], "{prompt}") || strstr(def->args.v[i], "{prompt_file}"))
			return true;
	return false;
}

/* The literal part of a word: quoted for the shell when quote. */
static void add_literal(struct buf *b, struct buf *lit, bool quote)
{
	if (lit->len == 0)
		return;
	char *q = quote ? sh_quote(lit->data) : NULL;
	buf_addstr(b, q ? q : lit->data);
	free(q);
	buf_consume(lit, lit->len);
}

/*
 * Append word to b with {prompt} as "$(cat 'F')" and {prompt_file} as 'F'
 * (both as nothing when there is no prompt), the rest as is, or quoted.
 */
static void add_word(struct buf *b, const char *word, bool quote, const char *prompt_file)
{
	char *file = prompt_file ? sh_quote(prompt_file) : NULL;
	char *cat = file ? xasprintf("\"$(cat %s)\"", file) : NULL;
	struct buf lit = {0};
	for (const char *p = word; *p;) {
		const char *with = NULL;
		if (!strncmp(p, "{prompt}", 8))
			with = cat ? cat : "", p += 8;
		else if (!strncmp(p, "{prompt_file}", 13))
			with = file ? file : "", p += 13;
		if (with) {
			add_literal(b, &lit, quote);
			buf_addstr(b, with);
		} else {
			buf_addch(&lit, *p++);
		}
	}
	add_literal(b, &lit, quote);
	buf_free(&lit);
	free(file);
	free(cat);
}

bool agentcmd_takes_prompt(const struct config *c, const char *name)
{
	const struct agent_def *def = name ? config_agent(c, name) : NULL;
	const char *cmd = def ? def->command : name;
	if (cmd == NULL)
		return false;
	return has_placeholder(cmd, def) || find_known(def ? def->name : cmd) ||
	       (def && find_known(def->command));
}

char *agentcmd_build_sandboxed(const struct config *c, const char *name, const char *prompt_file,
			       const char *resume, bool sandboxed)
{
	struct buf b = {0};
	const struct agent_def *def = name ? config_agent(c, name) : NULL;
	const char *cmd = def ? def->command : name;
	if (cmd == NULL) {
		const char *sh = getenv("SHELL");
		cmd = sh && *sh ? sh : "/bin/sh";
	}
	if (def)
		for (size_t i = 0; i < def->env.n; i++) {
			char *q = sh_quote(def->env.v[i]);
			buf_addf(&b, "export %s; ", q);
			free(q);
		}
	/* Every agent can find the prompt: known or not, placeholder or not. */
	if (prompt_file) {
		char *q = sh_quote(prompt_file);
		buf_addf(&b, "export WORKREX_PROMPT_FILE=%s; ", q);
		free(q);
	}
	bool placeholder = has_placeholder(cmd, def);
	buf_addstr(&b, "exec ");
	/* A configured command is the user's shell words; a bare name is one word. */
	add_word(&b, cmd, !(def || strchr(cmd, ' ')), prompt_file);
	if (def)
		for (size_t i = 0; i < def->args.n; i++) {
			buf_addch(&b, ' ');
			add_word(&b, def->args.v[i], true, prompt_file);
		}
	const struct known_agent *k = known_for(c, name);
	if (k && sandboxed && k->approve)
		buf_addf(&b, " %s", k->approve);
	/* The id is well formed (rpc_session_wellformed): one word, no quoting needed. */
	if (k && resume && *resume && k->resume_id) {
		buf_addf(&b, " %s %s", k->resume_id, resume);
	} else if (k && resume && k->resume) {
		buf_addf(&b, " %s", k->resume);
	} else if (k && prompt_file && !placeholder) {
		char *q = sh_quote(prompt_file);
		buf_addf(&b, " %s\"$(cat %s)\"", k->prompt_flag ? k->prompt_flag : "-- ", q);
		free(q);
	}
	return b.data;
}
