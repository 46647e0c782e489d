/*
 * add_plan.c - what `workrex add` was asked, parsed and checked before
 * anything is looked up or made.
 *
 * The parse fills a struct add_plan; add_plan_check() holds the rules
 * that two options break together, as one table, so that each rule is
 * tested on its own (tests/unit/test_plan.c) and a new option is one
 * row. Nothing here reads the repository, the config or a dashboard.
 */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* add's options, its row's in cmd.c's table; add_code is the letter add_option knows each by. */
const struct cmd_opt add_opts[] = {
	{"base", 0, OPT_VALUE},
	{"prompt", 'p', OPT_VALUE},
	{"prompt-file", 'P', OPT_VALUE},
	{"agent", 'a', OPT_VALUE},
	{"name", 0, OPT_VALUE},
	{"count", 'n', OPT_VALUE},
	{"foreach", 0, OPT_VALUE},
	{"prompts-from", 0, OPT_VALUE},
	{"branch-template", 0, OPT_VALUE},
	{"max-concurrent", 0, OPT_VALUE},
	{"background", 'b', OPT_FLAG},
	{"sandbox", 'S', OPT_FLAG},
	{"no-sandbox", 0, OPT_FLAG},
	{"remote", 0, OPT_VALUE},
	{"pr", 0, OPT_VALUE},
	{"layout", 'l', OPT_VALUE},
	{"fork", 0, OPT_MAYBE},
	{"with-changes", 'w', OPT_FLAG},
	{"include-untracked", 'u', OPT_FLAG},
	{"patch", 0, OPT_FLAG},
	{"auto-name", 'A', OPT_FLAG},
	/* What a sandboxed agent's spawn_agent runs (bridge.c); not for users. */
	{"from-sandbox", 0, OPT_FLAG},
	/* What any agent's spawn_agent runs: never a prompt into another agent. */
	{"new-only", 0, OPT_FLAG},
	/* ...and whose it is: the agent that asked (its family's budget, actions.c). */
	{"parent", 0, OPT_VALUE},
	{"issue", 0, OPT_VALUE},
	{"repos", 0, OPT_VALUE},
	{NULL, 0, OPT_FLAG},
};
static const char add_code[] = "BpPaHnELTMbSNRrlKwuCAFOQIG";
_Static_assert(sizeof add_code == sizeof add_opts / sizeof *add_opts,
	       "each of add's options has its letter in add_code");

/* -n N, --max-concurrent K: a number of agents, 1 or more, into *out. 0, or 1 (said). */
static int agents_arg(const char *flag, const char *arg, int *out)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (*arg == '\0' || *end || n < 1)
		return cmd_fail("add", "%s %s: a number of agents, 1 or more", flag, arg);
	*out = (int)WRX_MIN(n, 1000);
	return 0;
}

/* add --prompts-from: one agent for each line that is not blank. */
static void read_inputs(FILE *in, struct strlist *out)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, in)) > 0) {
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (strspn(line, " \t") < (size_t)n)
			strlist_add(out, line);
	}
	free(line);
}

/* -p TEXT|-, -P FILE|-, --prompts-from FILE|-: the prompt, or the prompts. 0 or 1 (said). */
static int prompt_arg(struct add_plan *p, int c, const char *arg)
{
	char *cause = NULL;
	int rc = 0;
	if (c == 'L') {
		FILE *in = strcmp(arg, "-") ? fopen(arg, "re") : stdin;
		p->from_stdin = true;
		if (in == NULL)
			return cmd_fail("add", "--prompts-from %s: %s", arg, strerror(errno));
		read_inputs(in, &p->g.inputs);
		if (in != stdin)
			fclose(in);
		return 0;
	}
	free(p->prompt);
	p->prompt = NULL;
	if (c == 'p' && strcmp(arg, "-")) {
		p->prompt = xstrdup(arg);
		return 0;
	}
	/* -p - is one prompt, read whole, as -P - (--prompts-from: one a line). */
	const char *body = NULL;
	if (file_read(arg, SIZE_MAX, &p->prompt, &cause) < 0)
		rc = c == 'p' ? cmd_fail("add", "-p -: %s", cause)
			      : cmd_fail("add", "%s: %s", arg, cause);
	else if (c == 'p' && strspn(p->prompt, " \t\r\n") == strlen(p->prompt))
		rc = cmd_fail("add", "-p -: nothing on stdin, no prompt");
	else if (c == 'P' && foreach_front_matter(p->prompt, &p->g.each, &body, &cause) < 0)
		rc = cmd_fail("add", "%s: %s", arg, cause);
	else if (c == 'P')
		memmove(p->prompt, body, strlen(body) + 1);
	free(cause);
	return rc;
}

/* The options that set one field of p: true, or false for one add does not know. */
static bool add_flag(struct add_plan *p, int c, const char *arg)
{
	struct {
		int c;
		bool *on;
		const char **value;
	} const fields[] = {
		{'w', &p->with_changes, NULL},
		{'u', &p->carry.untracked, NULL},
		{'C', &p->carry.patch, NULL},
		{'A', &p->auto_name, NULL},
		{'F', &p->o.setup_inside, NULL},
		{'O', &p->new_only, NULL},
		{'b', &p->background, NULL},
		{'l', NULL, &p->o.layout},
		{'T', NULL, &p->g.branch_template},
		{'r', NULL, &p->pr},
		{'I', NULL, &p->issue},
		{'G', NULL, &p->repos},
		{'R', NULL, &p->remote},
		{'B', NULL, &p->o.base},
		{'H', NULL, &p->o.handle},
	};
	for (size_t i = 0; i < WRX_ARRAY_LEN(fields); i++) {
		if (fields[i].c != c)
			continue;
		if (fields[i].on)
			*fields[i].on = true;
		else
			*fields[i].value = arg;
		return true;
	}
	return false;
}

/* One option into p: 0, or 1 (said). */
static int add_option(struct add_plan *p, int c, const char *arg)
{
	char *cause = NULL;
	int rc = 0;
	switch (c) {
	case 'K':
		p->forking = true;
		p->fork_session = arg;
		break;
	case 'a':
		strlist_add(&p->g.agents, arg);
		p->o.agent = arg;
		break;
	case 'p':
	case 'P':
	case 'L':
		rc = prompt_arg(p, c, arg);
		break;
	case 'E':
		if (foreach_parse(arg, &p->g.each, &cause) < 0)
			rc = cmd_fail("add", "%s", cause);
		free(cause);
		break;
	case 'M':
		rc = agents_arg("--max-concurrent", arg, &p->g.max_concurrent);
		break;
	case 'n':
		rc = agents_arg("-n", arg, &p->g.count);
		break;
	case 'S':
	case 'N':
		p->o.sandbox = c == 'S';
		break;
	case 'Q':
		p->o.parent = handle_valid(arg) ? arg : NULL;
		break;
	default:
		return add_flag(p, c, arg) ? 0 : 2;
	}
	return rc;
}

static int add_each(int index, const char *value, void *arg)
{
	return add_option(arg, add_code[index], value);
}

int add_plan_fill(const struct cmd_ctx *ctx, struct add_plan *p)
{
	p->positionals = cmd_nargs(ctx);
	p->branch = cmd_arg(ctx, 0);
	return cmd_each_opt(ctx, add_each, p);
}

bool add_plan_group(const struct add_plan *p)
{
	return cmd_add_is_group(&p->g) || p->from_stdin;
}

/*
 * The rules: each names the option that breaks it (NULL: none does),
 * and says why after that name; a rule with no words is a usage error.
 * The first broken one is the answer.
 */
static const char *positionals_wrong(const struct add_plan *p)
{
	/* --issue names the branch, unless one is given. */
	if (p->issue)
		return p->positionals > 1 ? "" : NULL;
	return p->positionals != (p->pr || p->auto_name ? 0 : 1) ? "" : NULL;
}

static const char *issue_and_pr(const struct add_plan *p)
{
	return p->issue && (p->pr || p->auto_name) ? "" : NULL;
}

/* An agent of several repositories: here, on a branch of its own in each. */
static const char *repos_here(const struct add_plan *p)
{
	return !p->repos ? NULL : p->remote ? "--remote" : p->pr ? "--pr" : NULL;
}

static const char *pr_remote(const struct add_plan *p)
{
	return p->pr && p->remote ? "" : NULL;
}

static const char *auto_named_twice(const struct add_plan *p)
{
	return p->auto_name && (p->pr || p->positionals) ? "" : NULL;
}

static const char *carry_without_source(const struct add_plan *p)
{
	return (p->carry.patch || p->carry.untracked) && !p->with_changes && !p->forking
		       ? "-u and --patch"
		       : NULL;
}

static const char *patch_with_untracked(const struct add_plan *p)
{
	return p->carry.patch && (p->carry.untracked || p->forking) ? "--patch" : NULL;
}

static const char *here_elsewhere(const struct add_plan *p)
{
	if (!p->remote && !p->pr)
		return NULL;
	return p->forking ? "--fork" : p->with_changes ? "-w" : p->auto_name ? "-A" : NULL;
}

static const char *one_in_group(const struct add_plan *p)
{
	if (!add_plan_group(p))
		return NULL;
	return p->pr                              ? "--pr"
	       : p->issue                         ? "--issue"
	       : p->repos                         ? "--repos"
	       : p->o.handle                      ? "--name"
	       : p->forking                       ? "--fork"
	       : p->with_changes                  ? "-w"
	       : p->auto_name                     ? "-A"
	       : p->new_only || p->o.setup_inside ? "an agent's spawn"
						  : NULL;
}

static const char *no_lines(const struct add_plan *p)
{
	return add_plan_group(p) && p->from_stdin && p->g.inputs.n == 0 ? "--prompts-from" : NULL;
}

static const char *sandbox_on_server(const struct add_plan *p)
{
	return p->remote && p->o.setup_inside ? "a sandbox" : NULL;
}

const struct add_rule add_rules[] = {
	{"positionals", positionals_wrong, NULL},
	{"pr-remote", pr_remote, NULL},
	{"issue-pr", issue_and_pr, NULL},
	{"repos-here", repos_here, " and --repos: an agent of several repositories runs here"},
	{"auto-name-named", auto_named_twice, NULL},
	{"carry-without-source", carry_without_source, " choose what -w (or --fork) carries"},
	{"patch-untracked", patch_with_untracked,
	 " asks about the hunks of -w, untracked files not (git stash's own rule): without -u, "
	 "without --fork"},
	{"here-not-there", here_elsewhere, ": an agent here, from a branch of its own"},
	{"one-not-group", one_in_group, " makes one agent, not a group"},
	{"no-lines", no_lines, ": no line, no agent"},
	{"sandbox-on-server", sandbox_on_server, " spawns in a sandbox, not on a server"},
	{NULL, NULL, NULL},
};

int add_plan_check(const struct add_plan *p, char **why)
{
	*why = NULL;
	for (const struct add_rule *r = add_rules; r->name; r++) {
		const char *which = r->breaks(p);
		if (which == NULL)
			continue;
		if (r->says == NULL)
			return 2;
		*why = xasprintf("%s%s", which, r->says);
		return 1;
	}
	return 0;
}

void add_plan_free(struct add_plan *p)
{
	free(p->prompt);
	free(p->session);
	free(p->named);
	free(p->pr_branch);
	free(p->issue_prompt);
	free(p->home);
	free(p->repos_rec);
	free(p->main_branch);
	agent_rec_free(&p->src);
	strlist_free(&p->g.agents);
	strlist_free(&p->g.inputs);
	foreach_free(&p->g.each);
}
