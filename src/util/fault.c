/*
 * fault.c - see fault.h. Only in a build with -DWRX_FAULTS.
 */
#include "fault.h"

#ifdef WRX_FAULTS

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fault_at(const char *name)
{
	const char *want = getenv("WORKREX_FAULT");
	size_t n = strlen(name);
	if (want == NULL || strncmp(want, name, n) != 0 || (want[n] != '\0' && want[n] != ':'))
		return;
	static long passed;
	const char *skip = getenv("WORKREX_FAULT_SKIP");
	if (skip && passed++ < atol(skip))
		return;
	const char *action = want[n] == ':' ? want + n + 1 : "kill";
	fprintf(stderr, "workrex: fault %s: %s\n", name, action);
	if (strcmp(action, "exit") == 0)
		_exit(3);
	if (strcmp(action, "slow") == 0) {
		sleep(2);
		return;
	}
	kill(getpid(), SIGKILL);
	pause();
}

#endif
