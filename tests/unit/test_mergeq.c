/*
 * Tests for src/git/mergeq.c: the merge queue's file, kept in a real
 * repository's git directory: entries put, moved, dropped and read back;
 * a damaged file refused, not taken for an empty queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/mergeq.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char top[] = "/tmp/wrx-mergeq-XXXXXX";
static struct repo *r;

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(top) == NULL)
		return -1;
	char *mk = xasprintf("git init -q -b main '%s' && git -C '%s' -c user.name=t "
			     "-c user.email=t@t commit -q --allow-empty -m init",
			     top, top);
	int rc = system(mk);
	free(mk);
	char *cause = NULL;
	if (rc != 0 || repo_open(top, &r, &cause) < 0) {
		free(cause);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	repo_free(r);
	char *rm = xasprintf("rm -rf '%s'", top);
	int rc = system(rm);
	free(rm);
	return rc == 0 ? 0 : -1;
}

static const char *order(struct mergeq *q)
{
	static char buf[256];
	buf[0] = '\0';
	for (size_t i = 0; i < q->n; i++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s:%s", i ? " " : "",
			 q->e[i].handle, q->e[i].state);
	return buf;
}

/* None yet: empty. Put, moved, dropped, saved and read back, paused kept. */
static void test_queue_round_trip(void **state)
{
	(void)state;
	struct mergeq q;
	assert_false(mq_exists(r));
	assert_int_equal(mq_load(r, &q), 0);
	assert_int_equal(q.n, 0);
	mq_put(&q, "a", MQ_QUEUED, NULL);
	mq_put(&q, "b", MQ_QUEUED, NULL);
	mq_put(&q, "c", MQ_QUEUED, NULL);
	mq_put(&q, "a", MQ_RETURNED, "it conflicts with main in a.txt");
	assert_string_equal(order(&q), "a:returned b:queued c:queued");
	assert_true(mq_move(&q, "c", 1));
	assert_string_equal(order(&q), "c:queued a:returned b:queued");
	assert_true(mq_move(&q, "c", 99)); /* past the end: last */
	assert_string_equal(order(&q), "a:returned b:queued c:queued");
	assert_true(mq_move(&q, "a", 2));
	assert_string_equal(order(&q), "b:queued a:returned c:queued");
	assert_false(mq_move(&q, "a", 0));
	assert_false(mq_move(&q, "nobody", 1));
	assert_true(mq_drop(&q, "b"));
	assert_false(mq_drop(&q, "b"));
	q.paused = true;
	assert_int_equal(mq_save(r, &q), 0);
	mq_free(&q);
	assert_true(mq_exists(r));
	assert_int_equal(mq_load(r, &q), 0);
	assert_true(q.paused);
	assert_string_equal(order(&q), "a:returned c:queued");
	assert_string_equal(q.e[0].reason, "it conflicts with main in a.txt");
	assert_null(q.e[1].reason);
	mq_free(&q);
	/* mq_set: under the lock, one change, the rest kept. */
	assert_int_equal(mq_set(r, "c", MQ_LANDED, NULL), 0);
	assert_int_equal(mq_set(r, "d", MQ_QUEUED, NULL), 0);
	assert_int_equal(mq_load(r, &q), 0);
	assert_string_equal(order(&q), "a:returned c:landed d:queued");
	mq_free(&q);
}

/* The landed are history: the last 20 kept, the waiting ones all. */
static void test_landed_kept_twenty(void **state)
{
	(void)state;
	struct mergeq q = {0};
	for (int i = 0; i < 30; i++) {
		char h[16];
		snprintf(h, sizeof h, "l%d", i);
		mq_put(&q, h, MQ_LANDED, NULL);
		if (i == 3)
			mq_put(&q, "waits", MQ_QUEUED, NULL);
	}
	assert_int_equal(mq_save(r, &q), 0);
	mq_free(&q);
	assert_int_equal(mq_load(r, &q), 0);
	assert_int_equal(q.n, 21);
	assert_string_equal(q.e[0].handle, "waits");
	assert_string_equal(q.e[1].handle, "l10");
	assert_string_equal(q.e[20].handle, "l29");
	mq_free(&q);
	char *path = xasprintf("%s/.git/workrex-queue.json", top);
	unlink(path);
	free(path);
}

/* A damaged file is an error, never an empty queue (that would drop everyone). */
static void test_damaged_file_refused(void **state)
{
	(void)state;
	char *path = xasprintf("%s/.git/workrex-queue.json", top);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"entries\": [{\"handle\": \"a\"", f);
	fclose(f);
	struct mergeq q;
	assert_true(mq_load(r, &q) < 0);
	assert_true(mq_set(r, "x", MQ_QUEUED, NULL) < 0);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_round_trip),
		cmocka_unit_test(test_landed_kept_twenty),
		cmocka_unit_test(test_damaged_file_refused),
	};
	return cmocka_run_group_tests_name("mergeq", tests, setup, teardown);
}
