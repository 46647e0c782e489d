/* Tests for src/core/agentcmd.c: how each agent CLI gets its prompt and resume flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/agentcmd.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static void check(const struct config *c, const char *name, const char *prompt, bool cont,
		  const char *want)
{
	struct agentcmd_opts o = {.prompt_file = prompt, .resume = cont ? "" : NULL};
	char *got = agentcmd_line(c, name, &o);
	if (strcmp(got, want) != 0)
		fail_msg("%s: got [%s] want [%s]", name ? name : "(shell)", got, want);
	free(got);
}

static void test_known_agents(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	/* After "--" or as a flag's '=' value: a prompt starting with '-' is no flag. */
	check(&c, "claude", "/w/.workrex/P.md", false,
	      "export WORKREX_PROMPT_FILE='/w/.workrex/P.md'; exec 'claude' -- \"$(cat "
	      "'/w/.workrex/P.md')\"");
	check(&c, "claude", NULL, true, "exec 'claude' --continue");
	/* A session its hooks reported: that one, not the latest. */
	char *got = agentcmd_line(&c, "claude",
				  &(struct agentcmd_opts){.prompt_file = NULL,
							  .resume = "5f0c-3a1e",
							  .sandboxed = false});
	assert_string_equal(got, "exec 'claude' --resume 5f0c-3a1e");
	free(got);
	got = agentcmd_line(&c, "codex",
			    &(struct agentcmd_opts){
				    .prompt_file = NULL, .resume = "5f0c-3a1e", .sandboxed = true});
	assert_string_equal(got, "exec 'codex' --yolo resume 5f0c-3a1e");
	free(got);
	got = agentcmd_line(
		&c, "gemini",
		&(struct agentcmd_opts){.prompt_file = NULL, .resume = "", .sandboxed = false});
	assert_string_equal(got, "exec 'gemini' --resume latest");
	free(got);
	got = agentcmd_line(&c, "opencode",
			    &(struct agentcmd_opts){
				    .prompt_file = NULL, .resume = "ses_9", .sandboxed = false});
	assert_string_equal(got, "exec 'opencode' --session ses_9");
	free(got);
	check(&c, "codex", "/p", false,
	      "export WORKREX_PROMPT_FILE='/p'; exec 'codex' -- \"$(cat '/p')\"");
	check(&c, "codex", "/p", true,
	      "export WORKREX_PROMPT_FILE='/p'; exec 'codex' resume --last");
	check(&c, "gemini", "/p", false,
	      "export WORKREX_PROMPT_FILE='/p'; exec 'gemini' --prompt-interactive=\"$(cat "
	      "'/p')\"");
	check(&c, "opencode", "/p", false,
	      "export WORKREX_PROMPT_FILE='/p'; exec 'opencode' --prompt=\"$(cat '/p')\"");
	/* Unknown agents get neither, but the file's place in the environment. */
	check(&c, "mytool", "/p", true, "export WORKREX_PROMPT_FILE='/p'; exec 'mytool'");
	assert_false(agentcmd_takes_prompt(&c, "mytool"));
	assert_false(agentcmd_types_prompt(&c, "mytool"));
	assert_true(agentcmd_takes_prompt(&c, "claude"));
	/* A kind with no prompt flag: nothing on its line, the prompt typed in. */
	check(&c, "aider", "/p", false, "export WORKREX_PROMPT_FILE='/p'; exec 'aider'");
	assert_true(agentcmd_types_prompt(&c, "aider"));
	/* Its chat's subcommand, once. */
	check(&c, "goose", NULL, true, "exec 'goose' session --resume");
	config_free(&c);
}

/* A new session named by us; a fork of another, with the prompt, in a new one. */
static void test_sessions_and_forks(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct agentcmd_opts o = {.prompt_file = "/p",
				  .session = "1b4e28ba-2fa1-41d2-883f-0016d3cca427"};
	char *got = agentcmd_line(&c, "claude", &o);
	assert_string_equal(got, "export WORKREX_PROMPT_FILE='/p'; exec 'claude' --session-id "
				 "1b4e28ba-2fa1-41d2-883f-0016d3cca427 -- \"$(cat '/p')\"");
	free(got);
	o.fork = "5f0c-3a1e";
	got = agentcmd_line(&c, "claude", &o);
	assert_string_equal(got,
			    "export WORKREX_PROMPT_FILE='/p'; exec 'claude' --resume 5f0c-3a1e "
			    "--fork-session --session-id 1b4e28ba-2fa1-41d2-883f-0016d3cca427 -- "
			    "\"$(cat '/p')\"");
	free(got);
	got = agentcmd_line(&c, "codex", &o);
	assert_string_equal(got, "export WORKREX_PROMPT_FILE='/p'; exec 'codex' fork -C . "
				 "5f0c-3a1e -- \"$(cat '/p')\"");
	free(got);
	/* Resumed, nothing new: neither a fork nor a name nor the prompt again. */
	o.resume = "5f0c-3a1e";
	got = agentcmd_line(&c, "claude", &o);
	assert_string_equal(got,
			    "export WORKREX_PROMPT_FILE='/p'; exec 'claude' --resume 5f0c-3a1e");
	free(got);
	assert_true(agentcmd_forks(&c, "codex"));
	assert_false(agentcmd_forks(&c, "gemini"));
	assert_true(agentcmd_names_sessions(&c, "gemini"));
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
	      "export 'FOO=a b'; export WORKREX_PROMPT_FILE='/p q'; exec claude '--model' "
	      "'it'\\''s-fast' -- \"$(cat '/p q')\"");
	setenv("SHELL", "/bin/zsh", 1);
	check(&c, NULL, NULL, false, "exec '/bin/zsh'");
	char *q = sh_quote("a'b");
	assert_string_equal(q, "'a'\\''b'");
	free(q);
	config_free(&c);
}

/* {prompt} and {prompt_file} put the prompt where an agent wants it. */
static void test_placeholders(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	c.agents = calloc(2, sizeof *c.agents);
	c.nagents = 2;
	c.agents[0].name = strdup("aider");
	c.agents[0].command = strdup("aider");
	strlist_add(&c.agents[0].args, "--message={prompt}");
	c.agents[1].name = strdup("reader");
	c.agents[1].command = strdup("my-agent --task-file {prompt_file}");
	check(&c, "aider", "/p", false,
	      "export WORKREX_PROMPT_FILE='/p'; exec aider '--message='\"$(cat '/p')\"");
	check(&c, "reader", "/p", false,
	      "export WORKREX_PROMPT_FILE='/p'; exec my-agent --task-file '/p'");
	/* No prompt: the placeholders are nothing. */
	check(&c, "aider", NULL, false, "exec aider '--message='");
	check(&c, "reader", NULL, false, "exec my-agent --task-file ");
	assert_true(agentcmd_takes_prompt(&c, "aider"));
	/* A placeholder in a known agent's arguments: the prompt goes only there. */
	c.agents[1].command[0] = '\0';
	free(c.agents[1].command);
	c.agents[1].command = strdup("claude");
	strlist_add(&c.agents[1].args, "--append-system-prompt={prompt}");
	check(&c, "reader", "/p", false,
	      "export WORKREX_PROMPT_FILE='/p'; exec claude '--append-system-prompt='\"$(cat "
	      "'/p')\"");
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_agents),
		cmocka_unit_test(test_sessions_and_forks),
		cmocka_unit_test(test_configured_agents_and_quoting),
		cmocka_unit_test(test_placeholders),
	};
	return cmocka_run_group_tests_name("agentcmd", tests, NULL, NULL);
}
