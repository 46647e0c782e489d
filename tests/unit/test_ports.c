/*
 * Tests for src/util/ports.c: agents' ports, each held by one, the same
 * ones again for the same worktree, one in use on loopback skipped, and
 * the ports of a worktree that is gone free again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/ports.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_ports_each_its_own(void **state)
{
	(void)state;
	char top[] = "/tmp/wrx-ports-XXXXXX";
	assert_non_null(mkdtemp(top));
	char *st = xasprintf("%s/state", top), *a = xasprintf("%s/a", top),
	     *b = xasprintf("%s/b", top), *c = xasprintf("%s/c", top);
	setenv("XDG_STATE_HOME", st, 1);
	mkdir(a, 0700);
	mkdir(b, 0700);
	mkdir(c, 0700);
	/* Something of the machine's own listens where b's second would be. */
	int busy = -1;
	int pa[2], pb[2], pc[1];
	assert_int_equal(ports_take(a, 2, pa), 0);
	assert_true(pa[0] >= PORTS_FIRST && pa[1] > pa[0] && pa[1] <= PORTS_LAST);
	busy = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(pa[1] + 2))};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(busy, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	bool bound = bind(busy, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(busy, 1) == 0;
	assert_int_equal(ports_take(b, 2, pb), 0);
	assert_true(pb[0] > pa[1]);
	if (bound)
		assert_int_not_equal(pb[1], pa[1] + 2); /* in use: skipped */
	/* a again: the same two, in order. */
	int again[2];
	assert_int_equal(ports_take(a, 2, again), 0);
	assert_int_equal(again[0], pa[0]);
	assert_int_equal(again[1], pa[1]);
	char *j = ports_join(again, 2), *want = xasprintf("%d,%d", pa[0], pa[1]);
	assert_string_equal(j, want);
	free(j);
	free(want);
	/* a's worktree gone: c takes the first of what it held. */
	rmdir(a);
	assert_int_equal(ports_take(c, 1, pc), 0);
	assert_int_equal(pc[0], pa[0]);
	/* More than the range holds: refused, nothing taken. */
	int *many = xcalloc(PORTS_LAST - PORTS_FIRST + 2, sizeof *many);
	assert_int_equal(ports_take(a, PORTS_LAST - PORTS_FIRST + 2, many), -EADDRNOTAVAIL);
	free(many);
	close(busy);
	char *rm = xasprintf("rm -rf '%s'", top);
	assert_int_equal(system(rm), 0);
	free(rm);
	free(st);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ports_each_its_own),
	};
	return cmocka_run_group_tests_name("ports", tests, NULL, NULL);
}
