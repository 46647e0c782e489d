/*
 * Tests for src/git/comments.c: review comments kept for an agent until
 * sent, a cut-off line passed over, those added while sending kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/comments.h"
#include "git/private.h"
#include "util/util.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char state[] = "/tmp/wrx-comments-XXXXXX";
static const char *root = "/tmp/wrx-comments-project";

static int setup(void **st)
{
	(void)st;
	assert_non_null(mkdtemp(state));
	setenv("XDG_STATE_HOME", state, 1);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char *cmd = xasprintf("rm -rf %s", state);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static void add(const char *file, int line, const char *hunk, const char *text)
{
	struct review_comment c = {
		.file = (char *)file, .line = line, .hunk = (char *)hunk, .text = (char *)text};
	assert_int_equal(comments_add(root, "feat", &c), 0);
}

static void test_kept_and_dropped(void **st)
{
	(void)st;
	assert_int_equal(comments_count(root, "feat"), 0);
	add("a.c", 3, "@@ -1,3 +1,3 @@\n a\n-b\n+c\n", "why c?");
	add("b.c", 0, NULL, "the whole \"file\"\nsecond line");
	/* A kill -9 in the middle of a write: the cut line is passed over. */
	char *dir = private_agent_dir(root, "feat", false), *f = xasprintf("%s/comments", dir);
	FILE *fp = fopen(f, "a");
	fputs("{\"file\":\"cut.c\",\"te", fp);
	fclose(fp);
	add("c.c", 7, NULL, "after the cut");
	struct review_comment *c;
	assert_int_equal(comments_load(root, "feat", &c), 3);
	assert_string_equal(c[2].text, "after the cut");
	comments_free(c, 3);
	assert_int_equal(comments_load(root, "feat", &c), 3);
	assert_string_equal(c[0].file, "a.c");
	assert_int_equal(c[0].line, 3);
	assert_string_equal(c[1].text, "the whole \"file\"\nsecond line");
	assert_null(c[1].hunk);
	char *m = comments_message(c, 2);
	assert_non_null(strstr(m, "2 comments"));
	assert_non_null(
		strstr(m, "\n1. a.c:3\n```diff\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n```\nwhy c?\n"));
	assert_non_null(strstr(m, "\n2. b.c\nthe whole"));
	free(m);
	comments_free(c, 3);
	/* Sent: the first two go; one added meanwhile stays. */
	fp = fopen(f, "w");
	fclose(fp);
	add("a.c", 3, NULL, "one");
	add("a.c", 4, NULL, "two");
	add("a.c", 5, NULL, "added while they were sent");
	assert_int_equal(comments_drop(root, "feat", 2), 1);
	assert_int_equal(comments_load(root, "feat", &c), 1);
	assert_string_equal(c[0].text, "added while they were sent");
	comments_free(c, 1);
	assert_int_equal(comments_drop(root, "feat", 1), 0);
	assert_int_equal(access(f, F_OK), -1);
	assert_int_equal(comments_count(root, "feat"), 0);
	free(f);
	free(dir);
}

/* One changed, one deleted, numbered as listed (a cut line is none); no such one refused. */
static void test_changed_and_deleted(void **st)
{
	(void)st;
	add("a.c", 1, NULL, "first");
	char *dir = private_agent_dir(root, "feat", false), *f = xasprintf("%s/comments", dir);
	FILE *fp = fopen(f, "a");
	fputs("{\"file\":\"cut.c\",\"te\n", fp);
	fclose(fp);
	add("b.c", 2, "@@ -1 +1 @@\n-x\n+y\n", "second");
	add("c.c", 0, NULL, "third");
	assert_int_equal(comments_change(root, "feat", 2, "second, said again"), 3);
	assert_int_equal(comments_change(root, "feat", 1, NULL), 2);
	assert_int_equal(comments_change(root, "feat", 3, NULL), -ENOENT);
	struct review_comment *c;
	assert_int_equal(comments_load(root, "feat", &c), 2);
	assert_string_equal(c[0].text, "second, said again");
	assert_string_equal(c[0].file, "b.c");
	assert_string_equal(c[0].hunk, "@@ -1 +1 @@\n-x\n+y\n");
	assert_string_equal(c[1].text, "third");
	comments_free(c, 2);
	assert_int_equal(comments_change(root, "feat", 1, NULL), 1);
	assert_int_equal(comments_change(root, "feat", 1, NULL), 0);
	assert_int_equal(access(f, F_OK), -1);
	assert_int_equal(comments_change(root, "feat", 1, "x"), -ENOENT);
	free(f);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_and_dropped),
		cmocka_unit_test(test_changed_and_deleted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
