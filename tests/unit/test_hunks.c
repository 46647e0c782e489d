/*
 * Tests for src/git/hunks.c: patch mode stages what `git add -p` stages for
 * the same answers. Each case answers both on the same worktree changes in
 * a real repository and compares the two indexes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/hunks.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/wrx-hunks-XXXXXX";

static char *run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *run(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = xvasprintf(fmt, ap);
	va_end(ap);
	char *full =
		xasprintf("cd %s && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 && %s",
			  dir, cmd);
	FILE *p = popen(full, "r");
	assert_non_null(p);
	struct buf out = {0};
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, p)) > 0)
		buf_add(&out, tmp, n);
	assert_int_equal(pclose(p), 0);
	free(full);
	free(cmd);
	return out.data ? out.data : xstrdup("");
}

static void write_file(const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

/* Lines "n\n" for 1..count, with the ones in change[] written as "n changed". */
static char *lines(int count, const int *change, int nchange, const char *extra)
{
	struct buf b = {0};
	for (int i = 1; i <= count; i++) {
		bool c = false;
		for (int k = 0; k < nchange; k++)
			c = c || change[k] == i;
		buf_addf(&b, c ? "%d changed\n" : "%d\n", i);
		if (extra && i == 15)
			buf_addstr(&b, extra);
	}
	return b.data;
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	char *out = run("git init -q -b main . && git config user.email t@example.com && "
			"git config user.name T && git config core.hooksPath /dev/null");
	free(out);
	char *a = lines(40, NULL, 0, NULL), *b = lines(12, NULL, 0, NULL);
	write_file("a.txt", a);
	write_file("b.txt", b);
	free(a);
	free(b);
	out = run("git add . && git commit -qm init");
	free(out);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *out = run("rm -rf %s", dir);
	free(out);
	return 0;
}

/* The index after `git add -p` with keys, then after patch mode with the same keys. */
static void same_as_add_p(const char *keys)
{
	char *out = run("git reset -q");
	free(out);
	char *add_p = run(
		"printf '%s' | tr ' ' '\\n' | git add -p >/dev/null 2>&1; git diff --cached", keys);
	out = run("git reset -q");
	free(out);
	char *diff = run("git diff --no-color --no-ext-diff");
	struct hunk_set s;
	assert_int_equal(hunks_parse(diff, strlen(diff), &s), 0);
	int at = 0;
	for (const char *k = keys; *k && at < s.nhunks; k++) {
		if (*k == 's')
			hunks_split(&s, at);
		else if (*k == 'y' || *k == 'n')
			s.hunks[at++].answer = *k;
	}
	char *patch = hunks_patch(&s);
	if (patch) {
		char *path = xasprintf("%s/.patch", dir);
		FILE *f = fopen(path, "w");
		fputs(patch, f);
		fclose(f);
		out = run("git apply --cached .patch && rm .patch");
		free(out);
		free(path);
	}
	char *ours = run("git diff --cached");
	assert_string_equal(ours, add_p);
	/* Not two empty indexes: git add -p took the answers. */
	assert_true(strchr(keys, 'y') == NULL || strlen(add_p) > 0);
	free(ours);
	free(patch);
	free(add_p);
	free(diff);
	hunks_free(&s);
}

static void test_like_add_p(void **state)
{
	(void)state;
	/* a.txt: 3 and 9 make one hunk (split into two), 20 one, 33 and 36 one; b.txt one. */
	int ca[] = {3, 9, 20, 33, 36}, cb[] = {6};
	char *a = lines(40, ca, 5, "15 and a line more\n"), *b = lines(12, cb, 1, NULL);
	write_file("a.txt", a);
	write_file("b.txt", b);
	free(a);
	free(b);
	char *diff = run("git diff");
	struct hunk_set s;
	assert_int_equal(hunks_parse(diff, strlen(diff), &s), 0);
	assert_int_equal(s.nfiles, 2);
	free(diff);
	int before = s.nhunks;
	assert_true(hunks_split(&s, 0));
	assert_true(s.nhunks > before);
	hunks_free(&s);
	static const char *const answers[] = {
		"y y y y y y y", "n n n n n n n", "y n y n y n y",   "s y n y n y n",
		"s n y n y y",   "s y y y y y y", "s y y n s y n y", "n y",
	};
	for (size_t i = 0; i < sizeof answers / sizeof *answers; i++)
		same_as_add_p(answers[i]);
}

/* New and deleted files are not offered; their count is said. */
static void test_not_offered(void **state)
{
	(void)state;
	const char *diff = "diff --git a/gone b/gone\n"
			   "deleted file mode 100644\n"
			   "index 1111111..0000000\n"
			   "--- a/gone\n"
			   "+++ /dev/null\n"
			   "@@ -1 +0,0 @@\n"
			   "-x\n"
			   "diff --git a/run.sh b/run.sh\n"
			   "old mode 100644\n"
			   "new mode 100755\n"
			   "diff --git a/k b/k\n"
			   "index 1111111..2222222 100644\n"
			   "--- a/k\n"
			   "+++ b/k\n"
			   "@@ -1,2 +1,2 @@\n"
			   " a\n"
			   "-b\n"
			   "+c\n";
	struct hunk_set s;
	assert_int_equal(hunks_parse(diff, strlen(diff), &s), 0);
	assert_int_equal(s.skipped, 2);
	assert_int_equal(s.nfiles, 1);
	assert_string_equal(s.files[0].path, "k");
	assert_int_equal(s.nhunks, 1);
	assert_int_equal(s.hunks[0].nlines, 3);
	assert_false(hunks_split(&s, 0));
	assert_null(hunks_patch(&s));
	hunks_free(&s);
	assert_int_equal(hunks_parse("garbage\n", 8, &s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_like_add_p),
		cmocka_unit_test(test_not_offered),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
