/*
 * Tests for src/config/foreach.c: a group's variables, from --foreach and
 * from a prompt file's front matter, and their product.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/foreach.h"

#include <stdlib.h>
#include <string.h>

static void test_spec(void **state)
{
	(void)state;
	struct foreach f = {0};
	char *cause = NULL;
	assert_int_equal(foreach_parse("lang:c, go;size: s,m,l", &f, &cause), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(foreach_count(&f), 6);
	const char *v[2];
	foreach_pick(&f, 0, v);
	assert_string_equal(v[0], "c");
	assert_string_equal(v[1], "s");
	foreach_pick(&f, 4, v);
	assert_string_equal(v[0], "go");
	assert_string_equal(v[1], "m");
	foreach_free(&f);
	static const char *const bad[][2] = {
		{"lang", "--foreach: 'lang' has no ':' (write name:a,b;other:x,y)"},
		{"lang:", "--foreach: 'lang' has no values"},
		{"num:1,2", "foreach: 'num' is one of add's own variables"},
		{"a b:1", "foreach: 'a b' is not a name (letters, digits, _)"},
		{"x:1;x:2", "foreach: 'x' is given twice"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(foreach_parse(bad[i][0], &f, &cause), -1);
		assert_string_equal(cause, bad[i][1]);
		free(cause);
		foreach_free(&f);
	}
	assert_int_equal(foreach_count(&f), 1);
}

static void test_front_matter(void **state)
{
	(void)state;
	struct foreach f = {0};
	char *cause = NULL;
	const char *body;
	const char *text = "---\nforeach:\n  lang: [c, go]\n  style:\n    - terse\n"
			   "title: kept for others\n---\nWrite it in {{ lang }}.\n";
	assert_int_equal(foreach_front_matter(text, &f, &body, &cause), 0);
	assert_string_equal(body, "Write it in {{ lang }}.\n");
	assert_int_equal(f.n, 2);
	assert_string_equal(f.names[1], "style");
	assert_int_equal(foreach_count(&f), 2);
	foreach_free(&f);
	/* None: the text is the prompt. */
	assert_int_equal(foreach_front_matter("just text\n---\n", &f, &body, &cause), 0);
	assert_string_equal(body, "just text\n---\n");
	assert_int_equal(foreach_front_matter("---\nforeach: [a]\n---\nx", &f, &body, &cause), -1);
	assert_string_equal(cause, "front matter, line 2: foreach is a mapping of names to lists");
	free(cause);
	assert_int_equal(foreach_front_matter("---\nforeach:\n  a: [\n", &f, &body, &cause), -1);
	assert_string_equal(cause, "front matter: no closing --- line");
	free(cause);
	assert_int_equal(foreach_front_matter("---\nforeach: {a: [1, 2\n---\nx", &f, &body, &cause),
			 -1);
	assert_non_null(strstr(cause, "front matter, line"));
	free(cause);
	foreach_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_front_matter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
