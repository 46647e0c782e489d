/*
 * ports.c - the machine's table of the ports agents hold (ports.h).
 * Changes are made under an flock of the table's own lock file, and the
 * table is replaced whole (a new file renamed over it).
 */
#include "ports.h"

#include "beneath.h"
#include "log.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE "ports"

struct held {
	int port;
	char *owner;
};

/* The table, its stale lines (owner gone) left out. */
static size_t load(const char *dir, struct held **out)
{
	char *text = NULL;
	*out = NULL;
	if (beneath_read(dir, TABLE, 1u << 20, &text) < 0)
		return 0;
	size_t n = 0, cap = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(l, '\t');
		int port = atoi(l);
		struct stat st;
		if (tab == NULL || port < PORTS_FIRST || port > PORTS_LAST || tab[1] != '/' ||
		    stat(tab + 1, &st) < 0)
			continue;
		if (n == cap)
			*out = xrealloc(*out, (cap = cap ? cap * 2 : 16) * sizeof **out);
		(*out)[n++] = (struct held){port, xstrdup(tab + 1)};
	}
	free(text);
	return n;
}

static int save(const char *dir, const struct held *h, size_t n)
{
	struct buf b = {0};
	for (size_t i = 0; i < n; i++)
		if (h[i].owner)
			buf_addf(&b, "%d\t%s\n", h[i].port, h[i].owner);
	int rc = beneath_write(dir, TABLE, b.data ? b.data : "", b.len, 0600);
	buf_free(&b);
	return rc;
}

static void held_free(struct held *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(h[i].owner);
	free(h);
}

/* The table's lock held: its fd, or -errno. */
static int lock(const char *dir)
{
	char *path = xasprintf("%s/ports.owner", dir);
	int fd = lock_file(path, true);
	free(path);
	return fd;
}

/* Can a server listen on port, on loopback, now? */
static bool bindable(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

int ports_take(const char *owner, int n, int *out)
{
	char *dir = state_dir();
	if (dir == NULL)
		return -ENOENT;
	int fd = lock(dir);
	if (fd < 0) {
		free(dir);
		return fd;
	}
	struct held *h;
	size_t nh = load(dir, &h);
	int got = 0;
	for (size_t i = 0; i < nh && got < n; i++)
		if (strcmp(h[i].owner, owner) == 0)
			out[got++] = h[i].port;
	/* Bounded: the range, once. */
	for (int p = PORTS_FIRST; p <= PORTS_LAST && got < n; p++) {
		bool taken = false;
		for (size_t i = 0; i < nh && !taken; i++)
			taken = h[i].port == p;
		for (int k = 0; k < got && !taken; k++)
			taken = out[k] == p;
		if (taken || !bindable(p))
			continue;
		out[got++] = p;
		h = xrealloc(h, (nh + 1) * sizeof *h);
		h[nh++] = (struct held){p, xstrdup(owner)};
	}
	int rc = got < n ? -EADDRNOTAVAIL : save(dir, h, nh);
	held_free(h, nh);
	close(fd);
	free(dir);
	for (int i = 1; rc == 0 && i < n; i++) /* ascending: the first is WORKREX_PORT */
		for (int k = i; k > 0 && out[k - 1] > out[k]; k--) {
			int t = out[k];
			out[k] = out[k - 1];
			out[k - 1] = t;
		}
	return rc;
}

char *ports_join(const int *ports, int n)
{
	struct buf b = {0};
	for (int i = 0; i < n; i++)
		buf_addf(&b, "%s%d", i ? "," : "", ports[i]);
	return b.data ? b.data : xstrdup("");
}
