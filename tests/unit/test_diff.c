/*
 * Tests for src/git/diff.c's reader, which the review view and diff --stat
 * count with, and diff_visible, which keeps a diffed file's bytes text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/diff.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static enum diff_line *read_all(struct diff_reader *d, const char *text, int *n)
{
	enum diff_line *k = NULL;
	*n = 0;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		k = xrealloc(k, (size_t)(*n + 1) * sizeof *k);
		k[*n] = diff_read_line(d, p, len, *n);
		(*n)++;
		p += len + (p[len] == '\n');
	}
	return k;
}

/* Lines that look like headers inside a hunk are its lines: the counts say so. */
static void test_hunk_lines_that_look_like_headers(void **state)
{
	(void)state;
	const char *text = "diff --git a/x.md b/x.md\n"
			   "index 1111111..2222222 100644\n"
			   "--- a/x.md\n"
			   "+++ b/x.md\n"
			   "@@ -1,3 +1,3 @@\n"
			   "--- a rule\n"
			   "+++ another\n"
			   " diff --git a/not b/a-file\n"
			   "-@@ -9 +9 @@\n"
			   "+diff --git a/y b/y\n"
			   "\\ No newline at end of file\n"
			   "diff --git a/b.bin b/b.bin\n"
			   "new file mode 100644\n"
			   "Binary files /dev/null and b/b.bin differ\n";
	struct diff_reader d = {0};
	int n;
	enum diff_line *k = read_all(&d, text, &n);
	enum diff_line want[] = {DL_FILE,    DL_META, DL_META, DL_META, DL_HUNK, DL_DEL,  DL_ADD,
				 DL_CONTEXT, DL_DEL,  DL_ADD,  DL_META, DL_FILE, DL_META, DL_META};
	assert_int_equal(n, (int)(sizeof want / sizeof *want));
	for (int i = 0; i < n; i++)
		assert_int_equal(k[i], want[i]);
	assert_int_equal(d.nfiles, 2);
	assert_string_equal(d.files[0].path, "x.md");
	assert_int_equal(d.files[0].added, 2);
	assert_int_equal(d.files[0].deleted, 2);
	assert_int_equal(d.files[0].hunks, 1);
	assert_int_equal(d.files[0].line, 0);
	assert_string_equal(d.files[1].path, "b.bin");
	assert_true(d.files[1].binary);
	assert_int_equal(d.files[1].line, 11);
	assert_int_equal(d.added, 2);
	assert_int_equal(d.deleted, 2);
	free(k);
	diff_reader_free(&d);
}

/* A rename's new name; a commit's header between files. */
static void test_rename_and_commits(void **state)
{
	(void)state;
	const char *text = "commit 0123456789012345678901234567890123456789\n"
			   "Author: T <t@example.com>\n"
			   "\n"
			   "    the message\n"
			   "diff --git a/old name.c b/new name.c\n"
			   "similarity index 90%\n"
			   "rename from old name.c\n"
			   "rename to new name.c\n"
			   "@@ -1 +1 @@\n"
			   "-a\n"
			   "+b\n";
	struct diff_reader d = {0};
	int n;
	enum diff_line *k = read_all(&d, text, &n);
	assert_int_equal(k[0], DL_COMMIT);
	assert_int_equal(k[3], DL_TEXT);
	assert_int_equal(k[4], DL_FILE);
	assert_int_equal(k[6], DL_META);
	assert_int_equal(d.nfiles, 1);
	assert_string_equal(d.files[0].path, "new name.c");
	assert_int_equal(d.files[0].line, 4);
	free(k);
	diff_reader_free(&d);
}

/* One parser of hunk headers: counts left out are 1; anything else is not one. */
static void test_hunk_range(void **state)
{
	(void)state;
	struct diff_range r;
	assert_int_equal(diff_hunk_range("@@ -12,7 +12,8 @@ def f():", 26, &r), 0);
	assert_int_equal(r.old_start, 12);
	assert_int_equal(r.old_count, 7);
	assert_int_equal(r.new_start, 12);
	assert_int_equal(r.new_count, 8);
	assert_int_equal(diff_hunk_range("@@ -1 +1,2 @@", 13, &r), 0);
	assert_int_equal(r.old_count, 1);
	assert_int_equal(r.new_count, 2);
	assert_int_equal(diff_hunk_range("@@ -0,0 +1 @@", 13, &r), 0);
	assert_int_equal(r.old_count, 0);
	assert_int_equal(r.new_start, 1);
	assert_int_equal(diff_hunk_range("@@ -3,2 +4,0 @@", 15, &r), 0);
	assert_int_equal(r.new_count, 0);
	assert_int_equal(diff_hunk_range("@@ -a +1 @@", 11, &r), -1);
	assert_int_equal(diff_hunk_range("@@ -1 1 @@", 10, &r), -1);
	assert_int_equal(diff_hunk_range("@@ -1 +1", 8, &r), -1);
	assert_int_equal(diff_hunk_range("--- a/x", 7, &r), -1);
}

static void visible(const char *in, size_t n, const char *want)
{
	struct buf b = {0};
	diff_visible(in, n, &b);
	buf_addch(&b, '\0');
	assert_string_equal(b.data, want);
	buf_free(&b);
}

/* No byte of a file reaches a terminal as a control: C0, DEL, C1, bad UTF-8. */
static void test_visible(void **state)
{
	(void)state;
	visible("a\033]52;c;eA==\007b", 14, "a^[]52;c;eA==^Gb");
	visible("x\177y", 3, "x^?y");
	visible("\xc2\x9b"
		"2J",
		4, "<U+009B>2J");
	visible("\xc2\x85", 2, "<U+0085>");
	visible("caf\xc3\xa9 \xe2\x94\x82", 9, "caf\xc3\xa9 \xe2\x94\x82");
	visible("\xff\xc3(", 3, "<FF><C3>(");
	visible("\xed\xa0\x80", 3, "<ED><A0><80>"); /* a surrogate is not UTF-8 */
	visible("a\tb", 3, "a       b");
	visible("\0z", 2, "^@z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hunk_lines_that_look_like_headers),
		cmocka_unit_test(test_rename_and_commits),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_hunk_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
