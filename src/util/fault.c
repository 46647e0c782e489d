/*
 * fault.c - see fault.h. Only in a build with -DWRX_FAULTS.
 */
#include "fault.h"

#ifdef WRX_FAULTS

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The action WORKREX_FAULT names for the point reached, if this is its turn. */
static const char *due(const char *name)
{
	const char *want = getenv("WORKREX_FAULT");
	size_t n = strlen(name);
	if (want == NULL || strncmp(want, name, n) != 0 || (want[n] != '\0' && want[n] != ':'))
		return NULL;
	static long passed;
	const char *skip = getenv("WORKREX_FAULT_SKIP");
	if (skip && passed++ < atol(skip))
		return NULL;
	const char *action = want[n] == ':' ? want + n + 1 : "kill";
	fprintf(stderr, "workrex: fault %s: %s\n", name, action);
	return action;
}

static void act(const char *action)
{
	if (strcmp(action, "exit") == 0)
		_exit(3);
	if (strcmp(action, "slow") == 0 || strcmp(action, "stall") == 0) {
		sleep(strcmp(action, "slow") == 0 ? 2 : 15);
		return;
	}
	if (strcmp(action, "enospc") == 0)
		return; /* not a point that writes: nothing to fail */
	kill(getpid(), SIGKILL);
	pause();
}

void fault_at(const char *name)
{
	const char *action = due(name);
	if (action)
		act(action);
}

int fault_write(const char *name)
{
	const char *action = due(name);
	if (action && strcmp(action, "enospc") == 0) {
		errno = ENOSPC;
		return -ENOSPC;
	}
	if (action)
		act(action);
	return 0;
}

#endif
