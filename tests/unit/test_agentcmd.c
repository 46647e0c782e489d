/* Tests for src/core/agentcmd.c: how each agent CLI gets its prompt and resume flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/agentcmd.h"

#include <stdlib.h>
#include <string.h>

static void check(const struct config *c, const char *name, const char *prompt, bool cont,
		  const char *want)
{
	char *got = agentcmd_build(c, name, prompt, cont);
	if (strcmp(got, want) != 0)
		fail_msg("%s: got [%s] want [%s]", name ? name : "(shell)", got, want);
	free(got);
}

static void test_known_agents(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	check(&c, "claude", "/w/.workrex/P.md", false, "exec 'claude' \"$(cat '/w/.workrex/P.md')\"");
	check(&c, "claude", NULL, true, "exec 'claude' --continue");
	check(&c, "codex", "/p", false, "exec 'codex' \"$(cat '/p')\"");
	check(&c, "codex", "/p", true, "exec 'codex' resume --last");
	check(&c, "gemini", "/p", false, "exec 'gemini' -i \"$(cat '/p')\"");
	check(&c, "opencode", "/p", false, "exec 'opencode' --prompt \"$(cat '/p')\"");
	/* Unknown agents get neither. */
	check(&c, "aider", "/p", true, "exec 'aider'");
	config_free(&c);
}

static void test_configured_agents_and_quoting(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	c.agents = calloc(1, sizeof *c.agents);
	c.nagents = 1;
	c.agents[0].name = strdup("fast");
	c.agents[0].command = strdup("claude");
	strlist_add(&c.agents[0].args, "--model");
	strlist_add(&c.agents[0].args, "it's-fast");
	strlist_add(&c.agents[0].env, "FOO=a b");
	check(&c, "fast", "/p q", false,
	      "export 'FOO=a b'; exec claude '--model' 'it'\\''s-fast' \"$(cat '/p q')\"");
	setenv("SHELL", "/bin/zsh", 1);
	check(&c, NULL, NULL, false, "exec '/bin/zsh'");
	char *q = sh_quote("a'b");
	assert_string_equal(q, "'a'\\''b'");
	free(q);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_agents),
		cmocka_unit_test(test_configured_agents_and_quoting),
	};
	return cmocka_run_group_tests_name("agentcmd", tests, NULL, NULL);
}
