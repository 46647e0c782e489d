/*
 * template.h - the templates of add's prompts and branch names (SPEC §11):
 * text with `{{ name }}` and `{{ name | slugify }}`, nothing else.
 *
 * An unknown name, an unknown filter or an unclosed `{{` is an error that
 * names it and its position (line and column, from 1), so that a group of
 * agents is refused before any of it is made.
 */
#ifndef WRX_TEMPLATE_H
#define WRX_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

/* The values a template may use, by name. */
struct tpl_vars {
	const char **names, **values;
	size_t n;
};

/*
 * text rendered with vars: a string to free, or NULL with *cause ("unknown
 * variable 'x' at 1:7"). collapse: a part that renders empty takes one
 * '-' or '/' beside it along (a branch name's "task--1" is "task-1").
 */
char *tpl_render(const char *text, const struct tpl_vars *vars, bool collapse, char **cause);

/* s in lower case, every run of anything but a-z and 0-9 one '-', none at the ends. */
char *tpl_slugify(const char *s);

#endif
