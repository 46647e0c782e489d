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
	const char *prompt_flag; /* NULL: the prompt is the last argument */
	const char *resume;      /* words added to continue; NULL: none */
	const char *approve;     /* its no-questions flag, only ever added in a sandbox */
};

static const struct known_agent known[] = {
	{"claude", NULL, "--continue", "--dangerously-skip-permissions"},
	{"codex", NULL, "resume --last", "--yolo"},
	{"gemini", "-i", NULL, "--yolo"},
	{"opencode", "--prompt", "--continue", NULL},
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

char *sh_quote(const char *w)
{
	struct buf b = {0};
	buf_addch(&b, '\'');
	for (; *w; w++) {
		if (*w == '\'')
			buf_addstr(&b, "'\\''");
		else
			buf_addch(&b, *w);
	}
	buf_addch(&b, '\'');
	return b.data;
}

const char *agentcmd_default(const struct config *c)
{
	if (c->agent && *c->agent)
		return c->agent;
	return path_has("claude") ? "claude" : NULL;
}

char *agentcmd_build(const struct config *c, const char *name, const char *prompt_file,
		     bool cont)
{
	return agentcmd_build_sandboxed(c, name, prompt_file, cont, false);
}

char *agentcmd_build_sandboxed(const struct config *c, const char *name, const char *prompt_file,
			       bool cont, bool sandboxed)
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
	buf_addstr(&b, "exec ");
	/* A configured command is the user's shell words; a bare name is one word. */
	if (def || strchr(cmd, ' ')) {
		buf_addstr(&b, cmd);
	} else {
		char *q = sh_quote(cmd);
		buf_addstr(&b, q);
		free(q);
	}
	if (def)
		for (size_t i = 0; i < def->args.n; i++) {
			char *q = sh_quote(def->args.v[i]);
			buf_addf(&b, " %s", q);
			free(q);
		}
	const struct known_agent *k = find_known(def ? def->name : cmd);
	if (k == NULL && def)
		k = find_known(def->command);
	if (k && sandboxed && k->approve)
		buf_addf(&b, " %s", k->approve);
	if (k && cont && k->resume) {
		buf_addf(&b, " %s", k->resume);
	} else if (k && prompt_file) {
		char *q = sh_quote(prompt_file);
		if (k->prompt_flag)
			buf_addf(&b, " %s", k->prompt_flag);
		buf_addf(&b, " \"$(cat %s)\"", q);
		free(q);
	}
	return b.data;
}
