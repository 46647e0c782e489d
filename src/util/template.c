/*
 * template.c - add's templates (template.h).
 */
#include "template.h"

#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

char *tpl_slugify(const char *s)
{
	struct buf b = {0};
	bool dash = false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*s);
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (dash && b.len)
				buf_addch(&b, '-');
			buf_addch(&b, (char)c);
			dash = false;
		} else {
			dash = true;
		}
	}
	return b.data ? b.data : xstrdup("");
}

static const char *lookup(const struct tpl_vars *v, const char *name, size_t n)
{
	for (size_t i = 0; i < v->n; i++)
		if (strlen(v->names[i]) == n && !memcmp(v->names[i], name, n))
			return v->values[i];
	return NULL;
}

/* A name's characters: letters, digits, '_'. */
static size_t word(const char *s)
{
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

static size_t blanks(const char *s)
{
	size_t n = 0;
	while (s[n] == ' ' || s[n] == '\t')
		n++;
	return n;
}

static bool separator(char c)
{
	return c == '-' || c == '/';
}

char *tpl_render(const char *text, const struct tpl_vars *vars, bool collapse, char **cause)
{
	struct buf out = {0};
	int line = 1, col = 1;
	bool skip_sep = false; /* an empty part before: the next separator goes */
	for (const char *p = text; *p;) {
		if (p[0] != '{' || p[1] != '{') {
			if (!(skip_sep && separator(*p)))
				buf_addch(&out, *p);
			skip_sep = false;
			if (*p++ == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
			continue;
		}
		/* {{ name [| filter] }} */
		const char *q = p + 2;
		q += blanks(q);
		size_t n = word(q);
		const char *name = q, *filter = NULL;
		size_t fn = 0;
		q += n;
		q += blanks(q);
		if (*q == '|') {
			q++;
			q += blanks(q);
			filter = q;
			fn = word(q);
			q += fn;
			q += blanks(q);
		}
		if (q[0] != '}' || q[1] != '}' || n == 0 || (filter && fn == 0)) {
			*cause = xasprintf("at %d:%d: a {{ with no name }} after it (write "
					   "{{ name }} or {{ name | slugify }})",
					   line, col);
			buf_free(&out);
			return NULL;
		}
		const char *value = lookup(vars, name, n);
		if (value == NULL) {
			*cause = xasprintf("at %d:%d: unknown variable '%.*s'", line, col, (int)n,
					   name);
			buf_free(&out);
			return NULL;
		}
		if (filter && !(fn == 7 && !memcmp(filter, "slugify", 7))) {
			*cause = xasprintf("at %d:%d: unknown filter '%.*s' (slugify is the one)",
					   line, col, (int)fn, filter);
			buf_free(&out);
			return NULL;
		}
		char *v = filter ? tpl_slugify(value) : xstrdup(value);
		if (*v == '\0' && collapse) {
			if (out.len && separator(out.data[out.len - 1]))
				out.data[--out.len] = '\0';
			else
				skip_sep = true;
		} else {
			buf_addstr(&out, v);
			skip_sep = false;
		}
		free(v);
		col += (int)(q + 2 - p);
		p = q + 2;
	}
	return out.data ? out.data : xstrdup("");
}
