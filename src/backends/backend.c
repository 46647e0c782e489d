/*
 * backend.c - the table of backends, and "host": the pane's command as it
 * is, in the pane's own environment.
 */
#include "backend.h"

#include <string.h>

static int host_check(const struct backend_pane *p, char **cause)
{
	(void)p;
	(void)cause;
	return 0;
}

static int host_argv(const struct backend_pane *p, struct strlist *out, char **cause)
{
	(void)cause;
	for (char *const *a = p->argv; *a; a++)
		strlist_add(out, *a);
	return 0;
}

static void host_stop_argv(const struct backend_pane *p, struct strlist *out)
{
	(void)p;
	(void)out; /* closing the pty ends it */
}

const struct backend backend_host = {
	.name = "host",
	.check = host_check,
	.argv = host_argv,
	.stop_argv = host_stop_argv,
};

static const struct backend *const table[] = {&backend_host, &backend_container};

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}
