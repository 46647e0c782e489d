/*
 * Tests for src/config/kinds.c: the one table of agent kinds, whole and in
 * agreement with every place that shows it (workrex(1)'s AGENT KINDS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/kinds.h"
#include "core/agentcmd.h"
#include "man.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* SPEC §12: at least these. */
static const char *const spec_kinds[] = {
	"claude", "codex", "gemini", "opencode", "copilot", "amp",  "cursor-agent",
	"qwen",   "crush", "goose",  "kiro-cli", "pi",      "grok", "aider",
};

static void test_every_row_whole(void **state)
{
	(void)state;
	for (size_t i = 0; i < WRX_ARRAY_LEN(spec_kinds); i++)
		if (kind_find(spec_kinds[i]) == NULL)
			fail_msg("no row for %s", spec_kinds[i]);
	for (size_t i = 0; i < agent_nkinds; i++) {
		const struct agent_kind *k = &agent_kinds[i];
		if (kind_find(k->name) != k)
			fail_msg("%s: two rows", k->name);
		if (!k->title || !k->doc || strncmp(k->doc, "https://", 8) != 0 || !k->install)
			fail_msg("%s: a title, its documentation and how it installs", k->name);
		/* A '=' value keeps a prompt that starts with '-' a value. */
		if ((k->prompt == KIND_PROMPT_FLAG) !=
		    (k->prompt_flag && k->prompt_flag[strlen(k->prompt_flag) - 1] == '='))
			fail_msg("%s: a prompt flag, ending in '=', exactly for KIND_PROMPT_FLAG",
				 k->name);
		if (k->hooks != KIND_HOOKS_NONE && !(k->hooks_file && k->config_dir))
			fail_msg("%s: hooks need their file in a config dir", k->name);
		if ((k->settings[0] || k->credentials[0] || k->home_file || k->config_env) &&
		    !k->config_dir)
			fail_msg("%s: settings, credentials and a variable are in a config dir",
				 k->name);
		/* A sandbox's own config dir: top-level names, and our status hooks kept. */
		bool hooks_kept = k->settings[0] == NULL || k->hooks_file == NULL;
		for (size_t j = 0; j < WRX_ARRAY_LEN(k->settings) && k->settings[j]; j++) {
			if (strchr(k->settings[j], '/') || k->settings[j][0] == '.')
				fail_msg("%s: setting %s is not a plain name", k->name,
					 k->settings[j]);
			hooks_kept |= !strcmp(k->settings[j], k->hooks_file ? k->hooks_file : "");
		}
		if (!hooks_kept)
			fail_msg("%s: its hooks file is not among the settings a sandbox gets",
				 k->name);
		for (size_t j = 0; j < WRX_ARRAY_LEN(k->credentials) && k->credentials[j]; j++)
			if (strchr(k->credentials[j], '/') || !strcmp(k->credentials[j], "..") ||
			    (k->credentials[j][0] && !k->settings[0]))
				fail_msg("%s: credential %s: a plain name, of a kind with settings",
					 k->name, k->credentials[j]);
		/* A session we named is one it can be resumed by. */
		if (k->session_flag && !k->resume_id)
			fail_msg("%s: names sessions it cannot resume", k->name);
		if (k->fork && !strstr(k->fork, "{id}"))
			fail_msg("%s: its fork words place the session: {id}", k->name);
	}
}

/* workrex(1) holds exactly the AGENT KINDS the table writes. */
static void test_man_page_has_the_kinds(void **state)
{
	(void)state;
	struct buf want = {0};
	kind_reference_man(&want);
	assert_man_section("workrex.1", "AGENT KINDS", want.data);
	buf_free(&want);
	want = (struct buf){0};
	kind_reference_status_man(&want);
	assert_man_section("workrex.yaml.5", "KIND STATUS", want.data);
	buf_free(&want);
}

/* A profile is of a kind by its type, its command's name, or its own name. */
static void test_profiles_have_kinds(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	c.agents = calloc(3, sizeof *c.agents);
	c.nagents = 3;
	c.agents[0] = (struct agent_def){.name = strdup("wrapped"),
					 .type = strdup("codex"),
					 .command = strdup("/opt/bin/my-codex --profile x")};
	c.agents[1] = (struct agent_def){.name = strdup("fast"), .command = strdup("claude")};
	c.agents[2] = (struct agent_def){.name = strdup("goose"), .command = strdup("run-it")};
	assert_string_equal(kind_of(&c, "wrapped")->name, "codex");
	assert_string_equal(kind_of(&c, "fast")->name, "claude");
	assert_string_equal(kind_of(&c, "goose")->name, "goose");
	assert_string_equal(kind_of(&c, "/usr/local/bin/gemini")->name, "gemini");
	assert_null(kind_of(&c, "vim"));
	/* The wrapper gets codex's flags: its resume, its approval in a sandbox. */
	struct agentcmd_opts o = {.resume = "", .sandboxed = true};
	char *line = agentcmd_line(&c, "wrapped", &o);
	assert_string_equal(line, "exec /opt/bin/my-codex --profile x --yolo resume --last");
	free(line);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_whole),
		cmocka_unit_test(test_man_page_has_the_kinds),
		cmocka_unit_test(test_profiles_have_kinds),
	};
	return cmocka_run_group_tests_name("kinds", tests, NULL, NULL);
}
