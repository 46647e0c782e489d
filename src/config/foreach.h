/*
 * foreach.h - the variables a group of agents is made over (SPEC §11):
 * `add --foreach "lang:c,go;size:s,m"`, or a prompt file whose YAML front
 * matter has `foreach:` (a mapping of names to lists). Their product is
 * the group; each agent's prompt and branch are rendered with one
 * combination (util/template.h).
 */
#ifndef WRX_FOREACH_H
#define WRX_FOREACH_H

#include "config.h"

#include <stddef.h>

struct foreach {
	size_t n;
	char **names;           /* owned */
	struct strlist *values; /* owned: one list for each name */
};

/* spec's variables added to f: 0, or -1 with *cause. */
int foreach_parse(const char *spec, struct foreach *f, char **cause);
/*
 * A prompt file's front matter (a first line "---", YAML, a line "---"):
 * its foreach added to f, *body where the prompt starts after it. No
 * front matter: 0, *body = text. 0, or -1 with *cause.
 */
int foreach_front_matter(const char *text, struct foreach *f, const char **body, char **cause);
/* How many combinations: 1 for no variable. */
size_t foreach_count(const struct foreach *f);
/* The k-th combination, the last name varying fastest: values[i] for names[i]. */
void foreach_pick(const struct foreach *f, size_t k, const char **values);
void foreach_free(struct foreach *f);

#endif
