/*
 * ports.h - the ports each agent holds (config `ports: N`; SPEC §14): N
 * of PORTS_FIRST..PORTS_LAST each, held by no other agent of any project
 * on this machine and free on loopback when taken, kept across reboots in
 * $XDG_STATE_HOME/workrex/ports (a line a port: the port, then its owner,
 * the agent's worktree path). A port whose owner's worktree is gone is
 * free again: an agent removed, or an add killed before its record; an
 * agent made again at the same path takes the ports held there.
 */
#ifndef WRX_PORTS_H
#define WRX_PORTS_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PORTS_FIRST 30100
#define PORTS_LAST 39999
#define PORTS_MAX 16 /* a config's ports: at most */

/*
 * n ports for owner into out (ascending), the ones it holds already first:
 * 0, or -errno (-EADDRNOTAVAIL: the range has no n free ones).
 */
int ports_take(const char *owner, int n, int *out);
/* "30100,30101" for ports (n of them), into a new string. */
char *ports_join(const int *ports, int n);

/*
 * ports_join's string back into out, at most max of them (those that are
 * no port skipped): how many. Inline: the sandbox's client reads it too.
 */
static inline size_t ports_split(const char *s, int *out, size_t max)
{
	size_t n = 0;
	for (const char *p = s; p && *p && n < max;
	     p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		long v = strtol(p, NULL, 10);
		if (v > 0 && v <= 65535)
			out[n++] = (int)v;
	}
	return n;
}

#endif
