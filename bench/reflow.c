/*
 * reflow.c - make bench (j): rewrapping a pane holding a 100,000-line
 * history, in process (src/term/ with its scrollback), with the check that
 * nothing was lost.
 *
 *   reflow LINES WIDE NARROW
 *
 * Fills a pane WIDE columns wide (history limit LINES) with LINES lines of
 * text and colours a little narrower than WIDE, then times pane_resize to
 * NARROW columns (every line wraps) and back, and compares every line of
 * the history and the screen with what it was before. Prints one line:
 * "narrow MS widen MS lines N history H same 0|1".
 */
#include "term/pane.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Every line's text, trailing spaces off (a blank and a space are one cell to see). */
static char **texts(struct pane *p, int *n)
{
	int h = (int)pane_history(p);
	*n = h + pane_rows(p);
	char **v = xmalloc((size_t)*n * sizeof *v);
	for (int i = 0; i < *n; i++) {
		v[i] = pane_line_text(p, i - h);
		size_t len = strlen(v[i]);
		while (len > 0 && v[i][len - 1] == ' ')
			v[i][--len] = '\0';
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: reflow LINES WIDE NARROW\n");
		return 2;
	}
	int lines = atoi(argv[1]), wide = atoi(argv[2]), narrow = atoi(argv[3]);
	struct pane *p = pane_new(40, wide, (size_t)lines, NULL, NULL);
	struct buf b = {0};
	static const char words[] = "reflow keeps every character of the history, and colours, "
				    "wrapped at the margin, joined again; ";
	for (int i = 0; i < lines; i++) {
		/* A tenth of the lines hold wide characters (4 cells of them). */
		buf_addf(&b, "\033[3%dm%06d\033[0m %s", i % 8, i,
			 i % 10 ? "" : "\xe4\xb8\xad\xe6\x96\x87 ");
		for (int k = 0, room = wide - 10 - (i % 10 ? 0 : 5); k < room; k++)
			buf_addch(&b, words[(i + k) % (sizeof words - 1)]);
		buf_addstr(&b, "\r\n");
		if (b.len > 1 << 20) {
			pane_feed(p, b.data, b.len);
			buf_consume(&b, b.len);
		}
	}
	pane_feed(p, b.data, b.len);
	int n0, n1;
	char **before = texts(p, &n0);
	double t0 = now();
	pane_resize(p, 40, narrow);
	double t1 = now();
	pane_resize(p, 40, wide);
	double t2 = now();
	char **after = texts(p, &n1);
	int same = n0 == n1;
	for (int i = 0; same && i < n0; i++) {
		same = strcmp(before[i], after[i]) == 0;
		if (!same)
			fprintf(stderr, "line %d of %d: '%s' was '%s'\n", i, n0, after[i],
				before[i]);
	}
	if (n0 != n1)
		fprintf(stderr, "%d lines, %d before\n", n1, n0);
	printf("narrow %.1f widen %.1f lines %d history %zu same %d\n", t1 - t0, t2 - t1, n0,
	       pane_history(p), same);
	for (int i = 0; i < n0; i++)
		free(before[i]);
	for (int i = 0; i < n1; i++)
		free(after[i]);
	free(before);
	free(after);
	buf_free(&b);
	pane_free(p);
	return same ? 0 : 1;
}
