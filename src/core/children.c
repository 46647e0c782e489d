/*
 * children.c - the workrex command lines the dashboard and the core run
 * as children, one table of them.
 */
#include "children.h"

#include "../config/config.h"
#include "../util/util.h"
#include "wrx.h"

#include <stdlib.h>
#include <string.h>

/*
 * Every workrex command line the dashboard and the core start as a child
 * (a verb's, a view's query, a step done off the loop, a server's link),
 * by name: the words after the program; the caller's follow. Nothing
 * outside this file and src/cmd/ names the program (check-shape.sh). It
 * sits below every core file, so that any may start one: actions.c,
 * which the rest may not call, keeps its verbs.
 */
static const struct child {
	const char *name;
	const char *words[4];
} children[] = {
	{"verb", {NULL}},                          /* a verb's (actions.c: its own words) */
	{"command", {NULL}},                       /* C-b :, the user's own words */
	{"merge-preview", {"merge", "--preview"}}, /* what a merge brings, asked with it */
	{"diff", {"diff"}},                        /* the review view's */
	{"compare", {"compare"}},                  /* the compare view's; a candidate's check */
	{"gone-list", {"remove", "--gone", "-n"}}, /* R in the overview, asked first */
	{"gone-remove", {"remove", "--gone", "-y"}},
	{"pr-status", {"pr", "--status", "--"}}, /* the sidebar's PR column */
	{"open-queued", {"open", "-b"}},         /* add --max-concurrent's next agent */
	{"queue", {"queue"}},                    /* the merge queue's landing (lander.c) */
	{"remote-up", {"__remote-up"}},          /* a server's link (remote.c) */
	{"remote-start", {"__remote-start"}},
	{"remote-paste", {"__remote-paste"}},
	{"remote-idle", {"__remote-idle"}}, /* its last pane closed: stopped (provision.stop) */
	/* The web view's: an answer (text, then Enter), a review, a merge. */
	{"send", {"send"}},
	{"send-keys", {"send-keys", "--"}},
	{"answer", {"answer"}},
	{"review-comment", {"review", "--comment"}},
	{"review-send", {"review", "--send"}},
	{"merge", {"merge"}},
};

static const struct child *child_find(const char *name)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(children); i++)
		if (strcmp(children[i].name, name) == 0)
			return &children[i];
	return NULL;
}

char **child_argv(const struct wrx *w, const char *name, char *const *more)
{
	return child_argv_of(w->self_exe, name, more);
}

char **child_argv_of(const char *self_exe, const char *name, char *const *more)
{
	const struct child *ch = child_find(name);
	if (ch == NULL)
		return NULL;
	struct strlist l = {0};
	strlist_add(&l, self_exe);
	for (size_t i = 0; i < WRX_ARRAY_LEN(ch->words) && ch->words[i]; i++)
		strlist_add(&l, ch->words[i]);
	for (size_t i = 0; more && more[i]; i++)
		strlist_add(&l, more[i]);
	char **argv = strlist_argv(&l); /* the words are argv's now */
	free(l.v);
	return argv;
}

char **child_argv_piped(const struct wrx *w, const char *name, char *const *more,
			const char *pipe_to)
{
	const struct child *ch = child_find(name);
	if (ch == NULL)
		return NULL;
	/* sh -c '"$0" WORDS "$@" | PIPE' workrex MORE...: the caller's words never parsed. */
	struct buf script = {0};
	buf_addstr(&script, "\"$0\"");
	for (size_t i = 0; i < WRX_ARRAY_LEN(ch->words) && ch->words[i]; i++) {
		char *q = sh_quote(ch->words[i]);
		buf_addf(&script, " %s", q);
		free(q);
	}
	buf_addf(&script, " \"$@\" | %s", pipe_to);
	struct strlist l = {0};
	strlist_add(&l, "/bin/sh");
	strlist_add(&l, "-c");
	strlist_add(&l, script.data);
	strlist_add(&l, w->self_exe);
	for (size_t i = 0; more && more[i]; i++)
		strlist_add(&l, more[i]);
	char **argv = strlist_argv(&l);
	free(l.v);
	buf_free(&script);
	return argv;
}

void child_argv_free(char **argv)
{
	for (char **p = argv; p && *p; p++)
		free(*p);
	free(argv);
}
