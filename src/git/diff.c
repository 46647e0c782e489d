/*
 * diff.c - an agent's changes as a unified diff, and reading one back
 * (diff.h).
 */
#include "diff.h"

#include "../util/beneath.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An untracked file bigger than this is named, not shown. */
#define UNTRACKED_MAX (8u << 20)

static const char *const mode_names[] = {"wip", "branch", "commits", "staged", "unstaged"};

const char *diff_mode_name(enum diff_mode m)
{
	return m <= DIFF_UNSTAGED ? mode_names[m] : "?";
}

/*
 * git for a diff: no hooks, no fsmonitor (a program the config names), no
 * index refresh written into the agent's git dir (optional locks), no
 * pager, no prompt.
 */
/* git ARGS in dir, its output to fd; with prefix, each path is shown under prefix ("web/"). */
static int git_to(const char *dir, const char *const *args, const char *prefix, int fd,
		  char **cause)
{
	size_t n = 0;
	while (args[n])
		n++;
	const char **av = xcalloc(n + 10, sizeof *av);
	size_t k = 0;
	const char *pre[] = {
		"git",       "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
		"--no-pager"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(pre); i++)
		av[k++] = pre[i];
	char *src = prefix ? xasprintf("--src-prefix=a/%s", prefix) : NULL;
	char *dst = prefix ? xasprintf("--dst-prefix=b/%s", prefix) : NULL;
	av[k++] = args[0]; /* diff, log: what takes the prefixes */
	if (prefix) {
		av[k++] = src;
		av[k++] = dst;
	}
	memcpy(av + k, args + 1, (n - 1) * sizeof *av);
	char *env[] = {"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.dir = dir;
	o.env = env;
	o.in = PROC_NULL;
	o.out = fd;
	int status = proc_run((char *const *)av, &o);
	free(av);
	free(src);
	free(dst);
	if (status != 0) {
		*cause = status < 0 ? xasprintf("git %s: %s", args[0], strerror(-status))
				    : xasprintf("git %s exited %d", args[0], status);
		return -EIO;
	}
	return 0;
}

static int put(int fd, const struct buf *b)
{
	return b->len ? fd_write_all(fd, b->data, b->len) : 0;
}

/*
 * One untracked file as git shows a new one (its path under prefix, if
 * given); a symlink is its target's name.
 */
static void untracked(const char *root, const char *rel, const char *prefix, struct buf *out)
{
	const char *shown_prefix = prefix ? prefix : "";
	const char *base;
	int dfd = beneath_parent(root, rel, false, &base);
	struct stat st;
	if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (dfd >= 0)
			close(dfd);
		return; /* gone meanwhile, or under a link: not ours to show */
	}
	char *text = NULL;
	size_t len = 0;
	int rc = 0;
	const char *mode;
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(dfd, base, target, sizeof target);
		text = xstrndup(target, n > 0 ? (size_t)n : 0);
		len = strlen(text);
		mode = "120000";
	} else if (S_ISREG(st.st_mode)) {
		mode = st.st_mode & 0111 ? "100755" : "100644";
		rc = beneath_read_n(root, rel, UNTRACKED_MAX, &text, &len);
	} else {
		close(dfd);
		return; /* a FIFO, a socket: nothing to read */
	}
	close(dfd);
	buf_addf(out, "diff --git a/%s%s b/%s%s\nnew file mode %s\n", shown_prefix, rel,
		 shown_prefix, rel, mode);
	if (rc == -EFBIG) {
		buf_addf(out,
			 "--- /dev/null\n+++ b/%s%s\n@@ -0,0 +1 @@\n+(%lld bytes: too big to "
			 "show)\n",
			 shown_prefix, rel, (long long)st.st_size);
	} else if (text && memchr(text, '\0', WRX_MIN(len, (size_t)8000))) {
		buf_addf(out, "Binary files /dev/null and b/%s%s differ\n", shown_prefix,
			 rel); /* as git decides */
	} else if (text && len) {
		int lines = 0;
		for (size_t i = 0; i < len; i++)
			lines += text[i] == '\n';
		bool partial = text[len - 1] != '\n';
		buf_addf(out, "--- /dev/null\n+++ b/%s%s\n@@ -0,0 +1", shown_prefix, rel);
		if (lines + partial != 1)
			buf_addf(out, ",%d", lines + partial);
		buf_addstr(out, " @@\n");
		for (size_t i = 0; i < len;) {
			const char *nl = memchr(text + i, '\n', len - i);
			size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
			buf_addch(out, '+');
			buf_add(out, text + i, n);
			buf_addch(out, '\n');
			i += n + 1;
		}
		if (partial)
			buf_addstr(out, "\\ No newline at end of file\n");
	}
	free(text);
}

static int wip(const struct diff_target *t, enum diff_mode m, int fd, char **cause)
{
	if (t->worktree == NULL) {
		*cause = xstrdup("its worktree is not here");
		return -ENOENT;
	}
	const char *head[] = {"diff",          "HEAD", "--no-color", "--no-ext-diff",
			      "--no-textconv", "-M",   "--",         NULL};
	/* What git add -p reads: the worktree against the index, no untracked file. */
	const char *index[] = {"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--", NULL};
	/* What git commit would take: the index against HEAD. */
	const char *staged[] = {"diff",          "--cached", "--no-color", "--no-ext-diff",
				"--no-textconv", "-M",       "--",         NULL};
	int rc = git_to(t->worktree,
			m == DIFF_UNSTAGED ? index
			: m == DIFF_STAGED ? staged
					   : head,
			t->prefix, fd, cause);
	if (rc < 0 || m != DIFF_WIP)
		return rc;
	const char *ls[] = {"ls-files", "--others", "--exclude-standard", "-z", NULL};
	struct buf names = {0};
	if (git_run(t->worktree, ls, &names, NULL, true) != 0) {
		buf_free(&names);
		*cause = xstrdup("git ls-files failed");
		return -EIO;
	}
	for (size_t off = 0; names.data && off < names.len && rc == 0;) {
		const char *rel = names.data + off;
		off += strlen(rel) + 1;
		struct buf one = {0};
		untracked(t->worktree, rel, t->prefix, &one);
		rc = put(fd, &one);
		buf_free(&one);
	}
	buf_free(&names);
	if (rc < 0)
		*cause = xasprintf("writing the diff: %s", strerror(-rc));
	return rc;
}

int diff_write(const struct repo *r, const struct diff_target *t, enum diff_mode m, int fd,
	       char **cause)
{
	if (m == DIFF_WIP || m == DIFF_UNSTAGED || m == DIFF_STAGED)
		return wip(t, m, fd, cause);
	if (t->branch == NULL || t->base == NULL) {
		*cause = xstrdup("it has no branch to compare");
		return -EINVAL;
	}
	char *range = xasprintf(m == DIFF_BRANCH ? "%s...%s" : "%s..%s", t->base, t->branch);
	const char *branch[] = {"diff",          range, "--no-color", "--no-ext-diff",
				"--no-textconv", "-M",  "--",         NULL};
	const char *commits[] = {
		"log",
		"--reverse",
		"-p",
		"--no-color",
		"--no-ext-diff",
		"--no-textconv",
		"-M",
		"--format=commit %H%nAuthor: %an <%ae>%nDate:   %ad%n%n%w(0,4,4)%B",
		range,
		"--",
		NULL};
	int rc = git_to(repo_root(r), m == DIFF_BRANCH ? branch : commits, t->prefix, fd, cause);
	free(range);
	return rc;
}

/* ---- reading one back ---- */

static bool starts(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	return n >= k && memcmp(s, p, k) == 0;
}

int diff_hunk_range(const char *s, size_t n, struct diff_range *r)
{
	char tmp[128];
	size_t k = WRX_MIN(n, sizeof tmp - 1);
	memcpy(tmp, s, k);
	tmp[k] = '\0';
	if (strncmp(tmp, "@@ -", 4) != 0)
		return -1;
	char *p = tmp + 4, *end;
	*r = (struct diff_range){.old_count = 1, .new_count = 1};
	r->old_start = (int)strtol(p, &end, 10);
	if (end == p)
		return -1;
	if (*end == ',')
		r->old_count = (int)strtol(end + 1, &end, 10);
	if (end[0] != ' ' || end[1] != '+')
		return -1;
	p = end + 2;
	r->new_start = (int)strtol(p, &end, 10);
	if (end == p)
		return -1;
	if (*end == ',')
		r->new_count = (int)strtol(end + 1, &end, 10);
	if (strncmp(end, " @@", 3) != 0 || r->old_count < 0 || r->new_count < 0)
		return -1;
	return 0;
}

/* The path of "diff --git a/X b/Y": Y (a name with " b/" in it is taken at its middle). */
static char *file_path(const char *s, size_t n)
{
	const char *p = s + strlen("diff --git ");
	size_t rest = n - (size_t)(p - s);
	if (rest >= 2 && p[0] == '"')
		return xstrndup(p, rest); /* quoted by git: shown as git quotes it */
	/* a/X b/X: the two halves are the same length when the name did not change. */
	if (rest > 4 && (rest - 1) % 2 == 0) {
		size_t half = (rest - 1) / 2;
		if (p[half] == ' ' && memcmp(p + 2, p + half + 3, half - 2) == 0)
			return xstrndup(p + half + 3, half - 2);
	}
	const char *b = NULL;
	for (size_t i = 0; i + 3 <= rest; i++)
		if (memcmp(p + i, " b/", 3) == 0)
			b = p + i + 3;
	return b ? xstrndup(b, rest - (size_t)(b - p)) : xstrndup(p, rest);
}

enum diff_line diff_read_line(struct diff_reader *d, const char *s, size_t n, int lineno)
{
	if (n && s[n - 1] == '\n')
		n--;
	struct diff_file *f = d->nfiles ? &d->files[d->nfiles - 1] : NULL;
	if (d->in_hunk && (d->old_left > 0 || d->new_left > 0)) {
		char c = n ? s[0] : ' ';
		if (c == '+' && d->new_left > 0) {
			d->new_left--;
			f->added++;
			d->added++;
			return DL_ADD;
		}
		if (c == '-' && d->old_left > 0) {
			d->old_left--;
			f->deleted++;
			d->deleted++;
			return DL_DEL;
		}
		if (c == ' ' || n == 0) {
			d->old_left--;
			d->new_left--;
			return DL_CONTEXT;
		}
		if (c == '\\')
			return DL_META;
	}
	if (d->in_hunk && n && s[0] == '\\')
		return DL_META; /* "\ No newline at end of file" after the last line */
	d->in_hunk = false;
	if (starts(s, n, "diff --git ")) {
		d->files = xrealloc(d->files, (size_t)(d->nfiles + 1) * sizeof *d->files);
		d->files[d->nfiles++] = (struct diff_file){.path = file_path(s, n), .line = lineno};
		return DL_FILE;
	}
	if (starts(s, n, "commit ") && n == 7 + 40)
		return DL_COMMIT;
	struct diff_range rg;
	if (f && diff_hunk_range(s, n, &rg) == 0) {
		d->in_hunk = true;
		d->old_left = rg.old_count;
		d->new_left = rg.new_count;
		f->hunks++;
		return DL_HUNK;
	}
	if (f && (starts(s, n, "index ") || starts(s, n, "--- ") || starts(s, n, "+++ ") ||
		  starts(s, n, "new file mode") || starts(s, n, "deleted file mode") ||
		  starts(s, n, "old mode") || starts(s, n, "new mode") ||
		  starts(s, n, "similarity index") || starts(s, n, "rename from") ||
		  starts(s, n, "rename to") || starts(s, n, "copy from") ||
		  starts(s, n, "copy to") || starts(s, n, "dissimilarity index"))) {
		return DL_META;
	}
	if (f && starts(s, n, "Binary files ")) {
		f->binary = true;
		return DL_META;
	}
	return DL_TEXT;
}

void diff_reader_free(struct diff_reader *d)
{
	for (int i = 0; i < d->nfiles; i++)
		free(d->files[i].path);
	free(d->files);
	memset(d, 0, sizeof *d);
}

/* ---- a file's bytes as text ---- */

/* The length of a valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (k == 0 || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	uint32_t cp = k == 2   ? (c & 0x1f) << 6 | (s[1] & 0x3f)
		      : k == 3 ? (c & 0x0f) << 12 | (s[1] & 0x3f) << 6 | (s[2] & 0x3f)
			       : (c & 0x07) << 18 | (s[1] & 0x3f) << 12 | (s[2] & 0x3f) << 6 |
					 (s[3] & 0x3f);
	if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return k;
}

void diff_visible(const char *s, size_t n, struct buf *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t col = 0;
	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		if (c == '\t') {
			do
				buf_addch(out, ' ');
			while (++col % 8);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			buf_addch(out, '^');
			buf_addch(out, c == 0x7f ? '?' : (char)(c + 0x40));
			col += 2;
			i++;
		} else if (c < 0x80) {
			buf_addch(out, (char)c);
			col++;
			i++;
		} else {
			size_t k = utf8_len(u + i, n - i);
			if (k == 2 && c == 0xc2 && u[i + 1] < 0xa0) {
				buf_addf(out, "<U+%04X>",
					 u[i + 1]); /* C1: CSI, OSC, DCS as one byte */
				col += 8;
			} else if (k) {
				buf_add(out, u + i, k);
				col++;
			} else {
				buf_addf(out, "<%02X>", c);
				col += 4;
				k = 1;
			}
			i += k;
		}
	}
}
