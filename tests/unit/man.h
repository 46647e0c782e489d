/*
 * man.h - a man page section written from a table (make man) is exactly
 * what the table writes now: between its BEGIN and END lines.
 */
#ifndef WRX_TEST_MAN_H
#define WRX_TEST_MAN_H

#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* man/page (under $WRX_SRCDIR) holds section name as want; else the test fails. */
static inline void assert_man_section(const char *page, const char *name, const char *want)
{
	char *man = NULL, *cause = NULL;
	const char *src = getenv("WRX_SRCDIR");
	char *path = xasprintf("%s/man/%s", src ? src : ".", page);
	if (file_read(path, 1 << 20, &man, &cause) < 0)
		fail_msg("%s", cause);
	char *b = xasprintf(".\\\" BEGIN %s", name), *e = xasprintf(".\\\" END %s\n", name);
	const char *begin = strstr(man, b);
	const char *end = begin ? strstr(begin, e) : NULL;
	if (end == NULL)
		fail_msg("%s has no %s section: run make man", path, name);
	end += strlen(e);
	char *got = xstrndup(begin, (size_t)(end - begin));
	if (strcmp(got, want) != 0)
		fail_msg("%s: the %s section is not the table's: run make man", path, name);
	free(got);
	free(b);
	free(e);
	free(man);
	free(path);
}

#endif
