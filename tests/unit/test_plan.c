/*
 * Tests for src/cmd/add_plan.c: add's options parsed into a plan, and each
 * rule two options break together, headless (no repository, no tmux).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd/cmd.h"

#include <stdlib.h>
#include <string.h>

/* The command line of the last parse: the plan's strings point into it. */
static struct cmd_ctx ctx;
static char *words[32];

/* Parse "add ARGS..." (a NULL-ended list) into *p, as cmd_exec and cmd_add do; the answer. */
static int parse(struct add_plan *p, const char *first, ...)
{
	cmd_args_end(&ctx);
	int argc = 0;
	words[argc++] = "add";
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
		words[argc++] = (char *)a;
	va_end(ap);
	words[argc] = NULL;
	*p = (struct add_plan){.o = {.cwd = "/", .sandbox = -1}, .g = {.count = 1}};
	int rc = cmd_args_begin(&ctx, cmd_find("add"), argc, words);
	return rc ? rc : add_plan_fill(&ctx, p);
}

/* The rule p breaks first (NULL: none) and what it says (NULL: usage, or none). */
static const char *broken(const struct add_plan *p, char **why)
{
	int rc = add_plan_check(p, why);
	if (rc == 0)
		return NULL;
	for (const struct add_rule *r = add_rules; r->name; r++)
		if (r->breaks(p))
			return r->name;
	fail_msg("add_plan_check said %d, and no rule breaks", rc);
	return NULL;
}

static void test_parse(void **state)
{
	(void)state;
	struct add_plan p;
	assert_int_equal(parse(&p, "-a", "claude", "-a", "codex", "--base", "dev", "-b",
			       "--fork=s1", "--layout", "wide", "--sandbox", "feature", NULL),
			 0);
	assert_int_equal(p.g.agents.n, 2);
	assert_string_equal(p.o.agent, "codex"); /* the last -a is the one agent's */
	assert_string_equal(p.o.base, "dev");
	assert_string_equal(p.o.layout, "wide");
	assert_string_equal(p.fork_session, "s1");
	assert_string_equal(p.branch, "feature");
	assert_int_equal(p.positionals, 1);
	assert_true(p.background && p.forking);
	assert_int_equal(p.o.sandbox, 1);
	assert_true(add_plan_group(&p)); /* two -a: a group */
	add_plan_free(&p);

	assert_int_equal(parse(&p, "--no-sandbox", "-p", "do it", "--parent", "a b", "x", NULL), 0);
	assert_int_equal(p.o.sandbox, 0);
	assert_string_equal(p.prompt, "do it");
	assert_null(p.o.parent); /* not a handle: no parent, not a crafted one */
	assert_false(add_plan_group(&p));
	add_plan_free(&p);

	assert_int_equal(parse(&p, "--fork", "x", NULL), 0); /* no session: the agent's own */
	assert_true(p.forking);
	assert_null(p.fork_session);
	assert_string_equal(p.branch, "x");
	add_plan_free(&p);

	assert_int_equal(parse(&p, "-n", "0", "x", NULL), 1);
	add_plan_free(&p);
	assert_int_equal(parse(&p, "--max-concurrent", "2x", "x", NULL), 1);
	add_plan_free(&p);
	assert_int_equal(parse(&p, "--bogus", "x", NULL), 2);
	add_plan_free(&p);
	assert_int_equal(parse(&p, "--foreach", "lang", "x", NULL), 1);
	add_plan_free(&p);
	assert_int_equal(parse(&p, "-P", "/nonexistent/prompt", "x", NULL), 1);
	add_plan_free(&p);
	cmd_args_end(&ctx);
}

/* Each rule, broken alone: its name, its words; and the plan without it passes. */
static void test_rules(void **state)
{
	(void)state;
	static const struct {
		const char *argv[6];
		const char *rule, *says; /* says NULL: a usage error */
	} cases[] = {
		{{NULL}, "positionals", NULL},
		{{"a", "b"}, "positionals", NULL},
		{{"--pr", "3", "x"}, "positionals", NULL},
		{{"--pr", "3", "--remote", "h"}, "pr-remote", NULL},
		{{"-A", "--pr", "3"}, "auto-name-named", NULL},
		{{"--issue", "7", "--pr", "3"}, "issue-pr", NULL},
		{{"--repos", "web", "--remote", "h", "x"},
		 "repos-here",
		 "--remote and --repos: an agent of several repositories runs here"},
		{{"-n", "2", "--repos", "web", "x"},
		 "one-not-group",
		 "--repos makes one agent, not a group"},
		{{"--issue", "7", "a", "b"}, "positionals", NULL},
		{{"-n", "2", "--issue", "7"},
		 "one-not-group",
		 "--issue makes one agent, not a group"},
		{{"-u", "x"},
		 "carry-without-source",
		 "-u and --patch choose what -w (or --fork) carries"},
		{{"--patch", "x"},
		 "carry-without-source",
		 "-u and --patch choose what -w (or --fork) carries"},
		{{"--patch", "-w", "-u", "x"},
		 "patch-untracked",
		 "--patch asks about the hunks of -w, untracked files not (git stash's own rule): "
		 "without -u, without --fork"},
		{{"--patch", "--fork", "x"},
		 "patch-untracked",
		 "--patch asks about the hunks of -w, untracked files not (git stash's own rule): "
		 "without -u, without --fork"},
		{{"--fork", "--remote", "h", "x"},
		 "here-not-there",
		 "--fork: an agent here, from a branch of its own"},
		{{"-w", "--pr", "3"},
		 "here-not-there",
		 "-w: an agent here, from a branch of its own"},
		{{"-n", "2", "--name", "h", "x"},
		 "one-not-group",
		 "--name makes one agent, not a group"},
		{{"-n", "2", "-w", "x"}, "one-not-group", "-w makes one agent, not a group"},
		{{"-n", "2", "--new-only", "x"},
		 "one-not-group",
		 "an agent's spawn makes one agent, not a group"},
		{{"--prompts-from", "/dev/null", "x"},
		 "no-lines",
		 "--prompts-from: no line, no agent"},
		{{"--from-sandbox", "--remote", "h", "x"},
		 "sandbox-on-server",
		 "a sandbox spawns in a sandbox, not on a server"},
	};
	bool seen[32] = {false};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *const *a = cases[i].argv;
		struct add_plan p;
		assert_int_equal(parse(&p, a[0], a[1], a[2], a[3], a[4], a[5], NULL), 0);
		char *why = NULL;
		const char *rule = broken(&p, &why);
		if (rule == NULL || strcmp(rule, cases[i].rule))
			fail_msg("case %zu (%s ...): broke %s, not %s", i, a[0] ? a[0] : "",
				 rule ? rule : "nothing", cases[i].rule);
		if (cases[i].says)
			assert_string_equal(why, cases[i].says);
		else
			assert_null(why);
		for (size_t r = 0; add_rules[r].name; r++)
			seen[r] |= !strcmp(add_rules[r].name, rule);
		free(why);
		add_plan_free(&p);
	}
	for (size_t r = 0; add_rules[r].name; r++)
		if (!seen[r])
			fail_msg("rule %s has no case here", add_rules[r].name);
	cmd_args_end(&ctx);
}

/* What the rules allow: one agent, a group, each carry, and the doors that make one. */
static void test_allowed(void **state)
{
	(void)state;
	static const char *const ok[][6] = {
		{"x"},
		{"-A", "-p", "name me"},
		{"--pr", "12"},
		{"-w", "-u", "x"},
		{"-w", "--patch", "x"},
		{"--fork", "x"},
		{"-n", "3", "-p", "go", "x"},
		{"--remote", "h", "-p", "go", "x"},
		{"--from-sandbox", "--new-only", "--parent", "a1", "x"},
		{"-n", "2", "--remote", "h", "x"},
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		struct add_plan p;
		assert_int_equal(parse(&p, ok[i][0], ok[i][1], ok[i][2], ok[i][3], ok[i][4], NULL),
				 0);
		char *why = NULL;
		const char *rule = broken(&p, &why);
		if (rule)
			fail_msg("case %zu (%s ...): broke %s", i, ok[i][0], rule);
		add_plan_free(&p);
	}
	cmd_args_end(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
