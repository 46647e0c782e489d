/*
 * children.h - the workrex children of the dashboard and the core (a
 * verb's, a view's query, a step off the loop, a server's link): their
 * command lines, from one table (children.c).
 */
#ifndef WRX_CHILDREN_H
#define WRX_CHILDREN_H

struct wrx;

/*
 * A workrex child of the dashboard or the core, by its name in
 * children.c's table: the program, the row's words, then
 * more's (NULL-terminated; NULL: none). NULL for a name the table lacks;
 * free with child_argv_free.
 */
char **child_argv(const struct wrx *w, const char *name, char *const *more);
/* The same for a process with no core (the web view): self_exe is the program. */
char **child_argv_of(const char *self_exe, const char *name, char *const *more);
/* The same, its output piped to the shell command pipe_to (review.pager): a /bin/sh argv. */
char **child_argv_piped(const struct wrx *w, const char *name, char *const *more,
			const char *pipe_to);
void child_argv_free(char **argv);

#endif
