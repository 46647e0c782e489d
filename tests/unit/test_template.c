/*
 * Tests for src/util/template.c: add's prompt and branch templates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/template.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static const char *names[] = {"base_name", "agent", "num", "lang", "input"};

static char *render(const char *text, const char *agent, const char *num, bool collapse,
		    char **cause)
{
	const char *values[] = {"task", agent, num, "Go Lang", "fix #12: the Login"};
	struct tpl_vars v = {.names = names, .values = values, .n = 5};
	*cause = NULL;
	return tpl_render(text, &v, collapse, cause);
}

static void expect(const char *text, const char *agent, const char *num, const char *want)
{
	char *cause;
	char *got = render(text, agent, num, true, &cause);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void expect_error(const char *text, const char *want)
{
	char *cause;
	assert_null(render(text, "a", "1", true, &cause));
	assert_non_null(cause);
	assert_string_equal(cause, want);
	free(cause);
}

static void test_branch_names(void **state)
{
	(void)state;
	const char *def = "{{ base_name }}-{{ agent | slugify }}-{{ num }}";
	expect(def, "Claude Code", "2", "task-claude-code-2");
	expect(def, "", "1", "task-1");         /* add task -n 3 */
	expect(def, "codex", "", "task-codex"); /* -a claude -a codex */
	expect(def, "", "", "task");
	expect("{{agent}}-{{base_name}}", "", "", "task");
	expect("feat/{{ agent }}/{{num}}", "", "3", "feat/3");
	expect("{{lang|slugify}}: {{ input }}", "", "", "go-lang: fix #12: the Login");
	char *cause;
	char *kept = render("a-{{ agent }}-b", "", "", false, &cause);
	assert_string_equal(kept, "a--b"); /* a prompt keeps its text */
	free(kept);
}

static void test_errors_name_the_place(void **state)
{
	(void)state;
	expect_error("Fix it in {{ language }}.", "at 1:11: unknown variable 'language'");
	expect_error("one\ntwo {{ lang | upper }}",
		     "at 2:5: unknown filter 'upper' (slugify is the one)");
	expect_error("x {{ lang", "at 1:3: a {{ with no name }} after it (write {{ name }} or "
				  "{{ name | slugify }})");
	expect_error("{{}}", "at 1:1: a {{ with no name }} after it (write {{ name }} or "
			     "{{ name | slugify }})");
}

static void test_slugify(void **state)
{
	(void)state;
	char *s = tpl_slugify("  Héllo, World!! 42 ");
	assert_string_equal(s, "h-llo-world-42");
	free(s);
	s = tpl_slugify("---");
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branch_names),
		cmocka_unit_test(test_errors_name_the_place),
		cmocka_unit_test(test_slugify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
