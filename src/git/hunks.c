/*
 * hunks.c - patch mode's hunks (hunks.h).
 */
#include "hunks.h"

#include "diff.h"

#include "../util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_line(struct hunk *h, const char *s, size_t n)
{
	h->lines = xrealloc(h->lines, (size_t)(h->nlines + 1) * sizeof *h->lines);
	h->lines[h->nlines++] = xstrndup(s, n);
}

/* Its name from "+++ b/X" (or "--- a/X" for a deletion, which is never offered). */
static char *path_of(const char *header)
{
	const char *p = strstr(header, "\n+++ b/");
	if (p == NULL)
		return xstrdup("?");
	p += strlen("\n+++ b/");
	return xstrndup(p, strcspn(p, "\n"));
}

/* A file patch mode leaves to git add: new, deleted, binary, or no hunk (a mode change). */
static bool offered(const char *header)
{
	return strstr(header, "\nnew file mode") == NULL &&
	       strstr(header, "\ndeleted file mode") == NULL &&
	       strstr(header, "\nBinary files") == NULL && strstr(header, "\n+++ ") != NULL;
}

int hunks_parse(const char *diff, size_t len, struct hunk_set *s)
{
	memset(s, 0, sizeof *s);
	enum { NONE, HEADER, HUNKS, SKIP } st = NONE;
	struct buf header = {0};
	struct hunk *h = NULL;
	int rc = 0;
	for (size_t i = 0; i < len && rc == 0;) {
		const char *line = diff + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		i += n + (nl != NULL);
		if (n >= 11 && strncmp(line, "diff --git ", 11) == 0) {
			if (st == HEADER)
				s->skipped++; /* the last file had no hunk: a mode change */
			st = HEADER;
			h = NULL;
			header.len = 0;
			buf_add(&header, line, n);
			buf_addch(&header, '\n');
			continue;
		}
		bool head = n >= 4 && strncmp(line, "@@ -", 4) == 0;
		if (st == NONE) {
			rc = -1;
		} else if (st == HEADER && !head) {
			buf_add(&header, line, n);
			buf_addch(&header, '\n');
		} else if (st == HEADER && !offered(header.data)) {
			s->skipped++;
			st = SKIP;
		} else if (head) {
			if (st == HEADER) {
				s->files = xrealloc(s->files,
						    (size_t)(s->nfiles + 1) * sizeof *s->files);
				s->files[s->nfiles++] =
					(struct hunk_file){.path = path_of(header.data),
							   .header = xstrdup(header.data)};
				st = HUNKS;
			}
			struct hunk one = {.file = s->nfiles - 1};
			struct diff_range rg;
			rc = diff_hunk_range(line, n, &rg);
			if (rc == 0) {
				one.old_start = rg.old_start;
				one.old_count = rg.old_count;
				one.new_start = rg.new_start;
				one.new_count = rg.new_count;
				s->hunks = xrealloc(s->hunks,
						    (size_t)(s->nhunks + 1) * sizeof *s->hunks);
				s->hunks[s->nhunks] = one;
				h = &s->hunks[s->nhunks++];
			}
		} else if (st == HUNKS && h && (n == 0 || strchr(" -+\\", line[0]))) {
			/* An empty line is an empty context line some configs write bare. */
			add_line(h, n ? line : " ", n ? n : 1);
		} else if (st == HUNKS) {
			rc = -1;
		}
	}
	if (st == HEADER)
		s->skipped++;
	buf_free(&header);
	if (rc < 0)
		hunks_free(s);
	return rc;
}

bool hunks_split(struct hunk_set *s, int i)
{
	struct hunk *h = &s->hunks[i];
	int n = h->nlines;
	/* Each line's place on either side, before it. */
	int *oldp = xcalloc((size_t)n + 1, sizeof *oldp),
	    *newp = xcalloc((size_t)n + 1, sizeof *newp);
	int o = h->old_start, w = h->new_start;
	for (int k = 0; k < n; k++) {
		oldp[k] = o;
		newp[k] = w;
		char c = h->lines[k][0];
		o += c == ' ' || c == '-';
		w += c == ' ' || c == '+';
	}
	/* Where each run of changes starts and ends (a "\" line goes with the change before). */
	int *bs = xcalloc((size_t)n, sizeof *bs), *be = xcalloc((size_t)n, sizeof *be), nb = 0;
	for (int k = 0; k < n; k++) {
		char c = h->lines[k][0];
		bool change =
			c == '-' || c == '+' || (c == '\\' && k > 0 && h->lines[k - 1][0] != ' ');
		if (!change)
			continue;
		if (nb && be[nb - 1] == k - 1)
			be[nb - 1] = k;
		else {
			bs[nb] = be[nb] = k;
			nb++;
		}
	}
	if (nb < 2) {
		free(oldp);
		free(newp);
		free(bs);
		free(be);
		return false;
	}
	struct hunk *parts = xcalloc((size_t)nb, sizeof *parts);
	for (int b = 0; b < nb; b++) {
		/* The context before it since the last change, and after it until the next. */
		int from = b == 0 ? 0 : be[b - 1] + 1, to = b == nb - 1 ? n - 1 : bs[b + 1] - 1;
		struct hunk *p = &parts[b];
		p->file = h->file;
		p->old_start = oldp[from];
		p->new_start = newp[from];
		for (int k = from; k <= to; k++) {
			char c = h->lines[k][0];
			p->old_count += c == ' ' || c == '-';
			p->new_count += c == ' ' || c == '+';
			add_line(p, h->lines[k], strlen(h->lines[k]));
		}
	}
	for (int k = 0; k < n; k++)
		free(h->lines[k]);
	free(h->lines);
	s->hunks = xrealloc(s->hunks, (size_t)(s->nhunks + nb - 1) * sizeof *s->hunks);
	memmove(s->hunks + i + nb, s->hunks + i + 1,
		(size_t)(s->nhunks - i - 1) * sizeof *s->hunks);
	memcpy(s->hunks + i, parts, (size_t)nb * sizeof *parts);
	s->nhunks += nb - 1;
	free(parts);
	free(oldp);
	free(newp);
	free(bs);
	free(be);
	return true;
}

/* One staged hunk in the patch, or several that overlap merged into one. */
struct piece {
	int old_start, old_count, new_count;
	struct buf body;
};

static void piece_put(struct buf *out, struct piece *p, int *delta)
{
	/* Where it lands once the hunks staged before it in the file are in. */
	int start = p->old_start + *delta + (p->old_count == 0) - (p->new_count == 0);
	buf_addf(out, "@@ -%d,%d +%d,%d @@\n", p->old_start, p->old_count, start, p->new_count);
	buf_add(out, p->body.data, p->body.len);
	*delta += p->new_count - p->old_count;
	buf_free(&p->body);
	p->old_count = -1;
}

char *hunks_patch(const struct hunk_set *s)
{
	struct buf out = {0};
	for (int f = 0; f < s->nfiles; f++) {
		int delta = 0;
		bool any = false;
		struct piece p = {.old_count = -1};
		for (int i = 0; i < s->nhunks; i++) {
			const struct hunk *h = &s->hunks[i];
			if (h->file != f || h->answer != 'y')
				continue;
			if (!any)
				buf_addstr(&out, s->files[f].header);
			any = true;
			/*
			 * Parts of a split hunk share the context between them: two
			 * staged ones are one hunk again, as git add -p merges them
			 * (git apply would refuse hunks that overlap).
			 */
			int overlap =
				p.old_count >= 0 ? p.old_start + p.old_count - h->old_start : -1;
			int k = 0;
			if (overlap > 0) {
				for (int seen = 0; k < h->nlines && seen < overlap; k++)
					seen += h->lines[k][0] == ' ' || h->lines[k][0] == '-';
				p.old_count = h->old_start + h->old_count - p.old_start;
				p.new_count += h->new_count - overlap;
			} else {
				if (p.old_count >= 0)
					piece_put(&out, &p, &delta);
				p = (struct piece){.old_start = h->old_start,
						   .old_count = h->old_count,
						   .new_count = h->new_count};
			}
			for (; k < h->nlines; k++) {
				buf_addstr(&p.body, h->lines[k]);
				buf_addch(&p.body, '\n');
			}
		}
		if (p.old_count >= 0)
			piece_put(&out, &p, &delta);
	}
	return out.data; /* NULL when none was staged; buf keeps it NUL-terminated */
}

void hunks_free(struct hunk_set *s)
{
	for (int i = 0; i < s->nhunks; i++) {
		for (int k = 0; k < s->hunks[i].nlines; k++)
			free(s->hunks[i].lines[k]);
		free(s->hunks[i].lines);
	}
	free(s->hunks);
	for (int f = 0; f < s->nfiles; f++) {
		free(s->files[f].path);
		free(s->files[f].header);
	}
	free(s->files);
	memset(s, 0, sizeof *s);
}
