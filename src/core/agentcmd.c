/*
 * agentcmd.c - see agentcmd.h.
 */
#include "agentcmd.h"

#include "../config/kinds.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *agentcmd_default(const struct config *c)
{
	if (c->agent && *c->agent)
		return c->agent;
	/* The table's first kind is the default one (SPEC §3: claude). */
	return kind_installed(&agent_kinds[0]) ? agent_kinds[0].name : NULL;
}

bool agentcmd_resumes(const struct config *c, const char *name)
{
	const struct agent_kind *k = kind_of(c, name);
	return k && k->resume;
}

bool agentcmd_forks(const struct config *c, const char *name)
{
	const struct agent_kind *k = kind_of(c, name);
	return k && k->fork;
}

bool agentcmd_names_sessions(const struct config *c, const char *name)
{
	const struct agent_kind *k = kind_of(c, name);
	return k && k->session_flag;
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
	const struct agent_kind *k = kind_of(c, name);
	return has_placeholder(cmd, def) || (k && k->prompt != KIND_PROMPT_TYPED);
}

bool agentcmd_types_prompt(const struct config *c, const char *name)
{
	const struct agent_kind *k = kind_of(c, name);
	return k && k->prompt == KIND_PROMPT_TYPED && !agentcmd_takes_prompt(c, name);
}

/* Does the command already start the kind's chat (goose session, kiro-cli chat)? */
static bool has_subcommand(const char *cmd, const struct agent_def *def, const char *sub)
{
	const char *sp = strchr(cmd, ' ');
	if (sp)
		return strncmp(sp + 1, sub, strlen(sub)) == 0;
	return def && def->args.n && strcmp(def->args.v[0], sub) == 0;
}

/* The words k's chat takes before any session's: its subcommand, its hooks', its approval's. */
static void add_kind_words(struct buf *b, const struct agent_kind *k, const char *cmd,
			   const struct agent_def *def, bool sandboxed)
{
	if (k->subcommand && !has_subcommand(cmd, def, k->subcommand))
		buf_addf(b, " %s", k->subcommand);
	/* Its hooks run only so (Kiro CLI: those of the agent it starts as). */
	if (k->hooks_args && kind_hooks_written(k, getenv("HOME")))
		buf_addf(b, " %s", k->hooks_args);
	if (sandboxed && k->approve)
		buf_addf(b, " %s", k->approve);
}

/* words with {id} as id: well formed (rpc_session_wellformed), one word, no quoting. */
static void add_with_id(struct buf *b, const char *words, const char *id)
{
	const char *at = strstr(words, "{id}");
	if (at == NULL) {
		buf_addf(b, " %s %s", words, id);
		return;
	}
	buf_addf(b, " %.*s%s%s", (int)(at - words), words, id, at + 4);
}

char *agentcmd_line(const struct config *c, const char *name, const struct agentcmd_opts *o)
{
	static const struct agentcmd_opts none;
	o = o ? o : &none;
	const char *prompt_file = o->prompt_file, *resume = o->resume;
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
	const struct agent_kind *k = kind_of(c, name);
	if (k)
		add_kind_words(&b, k, cmd, def, o->sandboxed);
	bool fresh = resume == NULL;
	if (k && resume && *resume && k->resume_id) {
		add_with_id(&b, k->resume_id, resume);
	} else if (k && resume && k->resume) {
		buf_addf(&b, " %s", k->resume);
	} else if (k && o->fork && k->fork) {
		add_with_id(&b, k->fork, o->fork);
	}
	/* A new session (a fork's too) with the id we chose, where the kind takes one. */
	if (k && fresh && o->session && k->session_flag)
		buf_addf(&b, " %s %s", k->session_flag, o->session);
	if (k && fresh && prompt_file && !placeholder && k->prompt != KIND_PROMPT_TYPED) {
		char *q = sh_quote(prompt_file);
		buf_addf(&b, " %s\"$(cat %s)\"",
			 k->prompt == KIND_PROMPT_FLAG ? k->prompt_flag : "-- ", q);
		free(q);
	}
	return b.data;
}
