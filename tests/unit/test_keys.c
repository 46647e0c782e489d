/* Tests for src/ui/keys.c: key names both ways, actions, the binding table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/keys.h"
#include "util/util.h"

#include <string.h>

static void test_parse_names(void **state)
{
	(void)state;
	assert_int_equal(keys_parse("C-b"), 2);
	assert_int_equal(keys_parse("C-a"), 1);
	assert_int_equal(keys_parse("C-@"), 0);
	assert_int_equal(keys_parse("C-?"), 127);
	assert_int_equal(keys_parse("Space"), ' ');
	assert_int_equal(keys_parse("x"), 'x');
	assert_int_equal(keys_parse("X"), 'X');
	assert_int_equal(keys_parse("Up"), WRX_K_UP);
	assert_int_equal(keys_parse("F5"), WRX_K_F1 + 4);
	assert_int_equal(keys_parse("F12"), WRX_K_F12);
	assert_int_equal(keys_parse("M-x"), WRX_K_META | 'x');
	assert_int_equal(keys_parse("é"), 0xe9);
	assert_int_equal(keys_parse(""), -1);
	assert_int_equal(keys_parse("F13"), -1);
	assert_int_equal(keys_parse("xy"), -1);
	assert_int_equal(keys_parse("C-"), -1);
	assert_int_equal(keys_parse("\xff"), -1);
}

static void test_names_round_trip(void **state)
{
	(void)state;
	const char *names[] = {"C-b", "C-a", "Space", "Up", "PageUp", "F1", "M-x", "q", "[", "?"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char out[32];
		int k = keys_parse(names[i]);
		assert_true(k >= 0);
		assert_int_equal(keys_parse(keys_name(k, out, sizeof out)), k);
	}
	char out[32];
	assert_string_equal(keys_name(2, out, sizeof out), "C-b");
}

static void test_actions(void **state)
{
	(void)state;
	enum wrx_action a;
	int arg;
	assert_int_equal(action_parse("zoom", &a, &arg), 0);
	assert_int_equal(a, ACT_ZOOM);
	assert_int_equal(action_parse("focus-agent-3", &a, &arg), 0);
	assert_int_equal(a, ACT_FOCUS_AGENT);
	assert_int_equal(arg, 3);
	assert_int_equal(action_parse("focus-agent", &a, &arg), -1);
	assert_int_equal(action_parse("focus-agent-0", &a, &arg), -1);
	assert_int_equal(action_parse("explode", &a, &arg), -1);
	for (int i = 0; i < ACT_COUNT; i++)
		assert_true(strlen(action_help(i)) > 0);
}

static void test_default_bindings_follow_spec(void **state)
{
	(void)state;
	bindings_reset();
	struct {
		int key;
		enum wrx_action act;
	} spec[] = {{'n', ACT_NEW_AGENT},
		    {'c', ACT_NEW_PANE},
		    {'m', ACT_MERGE},
		    {'x', ACT_CLOSE_PANE},
		    {'X', ACT_REMOVE_AGENT},
		    {'o', ACT_NEXT_PANE},
		    {'z', ACT_ZOOM},
		    {' ', ACT_NEXT_LAYOUT},
		    {'w', ACT_OVERVIEW},
		    {'[', ACT_SCROLL},
		    {'p', ACT_PASTE_IMAGE},
		    {'s', ACT_SIDEBAR},
		    {':', ACT_COMMAND},
		    {'?', ACT_HELP},
		    {'q', ACT_QUIT},
		    {2, ACT_SEND_PREFIX},
		    {WRX_K_LEFT, ACT_PANE_LEFT}};
	for (size_t i = 0; i < sizeof spec / sizeof *spec; i++) {
		const struct binding *b = bindings_lookup(spec[i].key);
		assert_non_null(b);
		assert_int_equal(b->action, spec[i].act);
	}
	const struct binding *b = bindings_lookup('7');
	assert_non_null(b);
	assert_int_equal(b->action, ACT_FOCUS_AGENT);
	assert_int_equal(b->arg, 7);
	assert_null(bindings_lookup('Q'));
}

static void test_rebinding(void **state)
{
	(void)state;
	bindings_reset();
	assert_int_equal(bindings_set('Q', ACT_QUIT, 0), 0);
	assert_int_equal(bindings_lookup('Q')->action, ACT_QUIT);
	assert_int_equal(bindings_set('z', ACT_HELP, 0), 0);
	assert_int_equal(bindings_lookup('z')->action, ACT_HELP);
	bindings_unset('z');
	assert_null(bindings_lookup('z'));
	bindings_set('q', ACT_NONE, 0);
	assert_null(bindings_lookup('q'));
	bindings_reset();
	assert_int_equal(bindings_lookup('z')->action, ACT_ZOOM);
}

/* Every view: q closes it (the help: any key not its own), its keys mean one thing each, and its help lists them. */
static void test_view_keys(void **state)
{
	(void)state;
	for (int v = 0; v < VIEW_COUNT; v++) {
		assert_int_equal(view_key(v, 'q'), v == VIEW_HELP ? V_NONE : V_CLOSE);
		assert_int_equal(view_key(v, 'Z'), V_NONE);
		struct buf b = {0};
		view_help(v, &b);
		assert_non_null(b.data);
		assert_true(strlen(view_name(v)) > 0);
		buf_free(&b);
	}
	assert_int_equal(view_key(VIEW_REVIEW, '\t'), V_NEXT_MODE);
	assert_int_equal(view_key(VIEW_REVIEW, 4), V_HALF_DOWN);
	assert_int_equal(view_key(VIEW_REVIEW, WRX_K_RIGHT), V_RIGHT);
	assert_int_equal(view_key(VIEW_PATCH, 'y'), V_STAGE);
	assert_int_equal(view_key(VIEW_AGENTS, '\n'), V_OPEN);
	struct buf b = {0};
	view_help(VIEW_REVIEW, &b);
	/* One line for each thing: its keys together, then what it does. */
	assert_non_null(strstr(b.data, "Tab            next mode: wip, branch, commits, staged"));
	assert_non_null(strstr(b.data, "j Down         down a line\n"));
	assert_non_null(strstr(b.data, "Space PageDown a page down\n"));
	assert_non_null(strstr(b.data, "q Escape       close\n"));
	/* A long one under its keys, no line past 78 columns. */
	assert_non_null(
		strstr(b.data, "(its hunk goes with it); a line\n               a waiting"));
	for (const char *p = b.data; *p;) {
		size_t n = strcspn(p, "\n");
		assert_true(n <= 78);
		p += n + (p[n] == '\n');
	}
	buf_free(&b);
	view_help(VIEW_AGENTS, &b);
	assert_non_null(strstr(b.data, "Enter          focus it")); /* not C-j, Enter's twin */
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_names),
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_actions),
		cmocka_unit_test(test_default_bindings_follow_spec),
		cmocka_unit_test(test_rebinding),
		cmocka_unit_test(test_view_keys),
	};
	return cmocka_run_group_tests_name("keys", tests, NULL, NULL);
}
