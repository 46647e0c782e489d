/*
 * worktree.c - creating, finding and removing agents' worktrees.
 *
 * Creation goes through `git worktree add`, so the checkout runs the user's
 * clean/smudge filters (git-lfs and the like) exactly as git would; reads
 * go through libgit2. Every path that comes from a user or a config file is
 * checked: a handle is one safe path component, and the worktree must land
 * directly inside the worktree directory.
 */
#include "worktree.h"

#include "../util/beneath.h"
#include "../util/fault.h"
#include "../util/ports.h"
#include "../util/proc.h"
#include "intent.h"
#include "private.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Latin letters with marks as their ASCII base (U+00C0..U+017F): a handle
 * names a directory, a socket and a container, which take ASCII only, and
 * 'ünïcödé' as 'n-c-d' is no name a person recognises. From U+00C0, in
 * order; '-' where there is no base letter (the multiplication and
 * division signs), two letters for the ligatures and the sharp s.
 */
static const char *const latin[] =
	{
		"A",  "A", "A",  "A",  "A",  "A", "AE", "C", "E", "E", "E",
		"E",  "I", "I",  "I",  "I", /* C0 */
		"D",  "N", "O",  "O",  "O",  "O", "O",  "-", "O", "U", "U",
		"U",  "U", "Y",  "TH", "ss", "a", "a",  "a", "a", "a", "a",
		"ae", "c", "e",  "e",  "e",  "e", "i",  "i", "i", "i", /* E0 */
		"d",  "n", "o",  "o",  "o",  "o", "o",  "-", "o", "u", "u",
		"u",  "u", "y",  "th", "y",  "A", "a",  "A", "a", "A", "a",
		"C",  "c", "C",  "c",  "C",  "c", "C",  "c", "D", "d", /* 100 */
		"D",  "d", "E",  "e",  "E",  "e", "E",  "e", "E", "e", "E",
		"e",  "G", "g",  "G",  "g",  "G", "g",  "G", "g", "H", "h",
		"H",  "h", "I",  "i",  "I",  "i", "I",  "i", "I", "i", /* 120 */
		"I",  "i", "IJ", "ij", "J",  "j", "K",  "k", "k", "L", "l",
		"L",  "l", "L",  "l",  "L",  "l", "L",  "l", "N", "n", "N",
		"n",  "N", "n",  "n",  "N",  "n", "O",  "o", "O", "o", /* 140 */
		"O",  "o", "OE", "oe", "R",  "r", "R",  "r", "R", "r", "S",
		"s",  "S", "s",  "S",  "s",  "S", "s",  "T", "t", "T", "t",
		"T",  "t", "U",  "u",  "U",  "u", "U",  "u", "U", "u", /* 160 */
		"U",  "u", "U",  "u",  "W",  "w", "Y",  "y", "Y", "Z", "z",
		"Z",  "z", "Z",  "z",  "s",
};

char *handle_from_branch(const char *branch)
{
	struct buf b = {0};
	for (const char *p = branch; *p && b.len < 64; p++) {
		unsigned char c = (unsigned char)*p;
		/* A two-byte UTF-8 Latin letter: its base letters, one by one. */
		if (c >= 0xc3 && c <= 0xc5 && ((unsigned char)p[1] & 0xc0) == 0x80) {
			unsigned cp = ((c & 0x1fu) << 6) | ((unsigned char)p[1] & 0x3fu);
			p++;
			if (cp >= 0xc0 && cp < 0xc0 + WRX_ARRAY_LEN(latin)) {
				for (const char *l = latin[cp - 0xc0]; *l && b.len < 64; l++)
					if (*l != '-' || (b.len && b.data[b.len - 1] != '-'))
						buf_addch(&b, *l);
				continue;
			}
			c = '-';
		}
		bool ok = isalnum(c) || c == '.' || c == '_' || c == '-';
		char ch = ok ? (char)c : '-';
		if (ch == '-' && (b.len == 0 || b.data[b.len - 1] == '-'))
			continue;
		if (ch == '.' && b.len == 0)
			continue;
		buf_addch(&b, ch);
	}
	while (b.len > 0 && (b.data[b.len - 1] == '-' || b.data[b.len - 1] == '.'))
		b.data[--b.len] = '\0';
	if (b.len == 0 || !handle_valid(b.data)) {
		buf_free(&b);
		return NULL;
	}
	return b.data;
}

bool handle_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || !isalnum((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!(isalnum(c) || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return strstr(name, "..") == NULL;
}

char *worktree_dir(const struct repo *r, const struct config *c, char **cause)
{
	struct buf b = {0};
	const char *spec = c->worktree_dir;
	char *super = spec == NULL || *spec == '\0' ? repo_superproject(r) : NULL;
	size_t sn = super ? strlen(super) : 0;
	if (super && strncmp(repo_root(r), super, sn) == 0 && repo_root(r)[sn] == '/') {
		/*
		 * A submodule: beside its superproject, not inside its working
		 * tree (where they were untracked files of it). app/libs/core:
		 * app.libs.core__worktrees.
		 */
		char *parent = xstrdup(super);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent)
			*slash = '\0';
		buf_addf(&b, "%s/%s.", parent,
			 strrchr(super, '/') ? strrchr(super, '/') + 1 : super);
		for (const char *p = repo_root(r) + sn + 1; *p; p++)
			buf_addch(&b, *p == '/' ? '.' : *p);
		buf_addstr(&b, "__worktrees");
		free(parent);
	} else if (spec == NULL || *spec == '\0') {
		char *parent = xstrdup(repo_root(r));
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent)
			*slash = '\0';
		buf_addf(&b, "%s/%s__worktrees", parent, repo_name(r));
		free(parent);
	} else {
		const char *p = spec;
		if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
			const char *home = getenv("HOME");
			buf_addstr(&b, home ? home : "");
			p++;
		} else if (p[0] != '/') {
			buf_addf(&b, "%s/", repo_root(r));
		}
		for (; *p; p++) {
			if (strncmp(p, "{project}", 9) == 0) {
				buf_addstr(&b, repo_name(r));
				p += 8;
			} else {
				buf_addch(&b, *p);
			}
		}
	}
	free(super);
	int rc = mkdir_p(b.data, 0755);
	char real[PATH_MAX];
	if (rc < 0 || realpath(b.data, real) == NULL) {
		*cause = xasprintf("worktree directory %s: %s", b.data,
				   strerror(rc < 0 ? -rc : errno));
		buf_free(&b);
		return NULL;
	}
	buf_free(&b);
	return xstrdup(real);
}

static void set_key(const struct repo *r, const char *handle, const char *field, const char *v)
{
	if (v == NULL)
		return;
	char *key = xasprintf("workrex.worktree.%s.%s", handle, field);
	repo_config_set(r, key, v);
	free(key);
}

static char *get_key(const struct repo *r, const char *handle, const char *field)
{
	char *key = xasprintf("workrex.worktree.%s.%s", handle, field);
	char *v = repo_config_get(r, key);
	free(key);
	return v;
}

static void unset_keys(const struct repo *r, const char *handle, const char *branch)
{
	static const char *fields[] = {"branch",  "path",           "agent",  "created",
				       "sandbox", "number",         "remote", "parent",
				       "group",   "max-concurrent", "queued", "layout",
				       "issue",   "ports",          "home",   "repos"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(fields); i++) {
		char *key = xasprintf("workrex.worktree.%s.%s", handle, fields[i]);
		repo_config_unset(r, key);
		free(key);
	}
	if (branch) {
		char *key = xasprintf("branch.%s.workrex-base", branch);
		repo_config_unset(r, key);
		free(key);
	}
}

/*
 * Its number for life: the lowest no other agent holds (1 is the project's
 * own), from the records' number keys alone: one read of the config, not a
 * walk of every worktree, so that an add costs the same at the hundredth.
 */
static void give_number(const struct repo *r, struct agent_rec *a)
{
	struct strlist keys = {0};
	repo_config_names(r, "workrex.worktree.", ".number", &keys);
	char *mine = xasprintf("workrex.worktree.%s.number", a->handle);
	size_t n = 0;
	int *taken = xcalloc(keys.n + 1, sizeof *taken);
	for (size_t i = 0; i < keys.n; i++) {
		char *v = strcmp(keys.v[i], mine) ? repo_config_get(r, keys.v[i]) : NULL;
		if (v && atoi(v) > 0)
			taken[n++] = atoi(v);
		free(v);
	}
	for (a->number = 2;; a->number++) {
		bool used = false;
		for (size_t i = 0; i < n && !used; i++)
			used = taken[i] == a->number;
		if (!used)
			break;
	}
	free(taken);
	free(mine);
	strlist_free(&keys);
	char num[16];
	snprintf(num, sizeof num, "%d", a->number);
	set_key(r, a->handle, "number", num);
}

/* A pattern from files.copy / files.symlink may not leave the repository. */
static bool pattern_safe(const char *pat)
{
	if (pat[0] == '/' || strcmp(pat, "..") == 0 || strncmp(pat, "../", 3) == 0)
		return false;
	return strstr(pat, "/../") == NULL &&
	       !(strlen(pat) >= 3 && !strcmp(pat + strlen(pat) - 3, "/.."));
}

/*
 * cp -a src into the directory dirfd as name, through /proc/self/fd: the
 * destination's parents were opened without following links, and cp makes
 * a name that did not exist with O_EXCL.
 */
static int copy_into(const char *src, int dirfd, const char *name)
{
	char *dst = xasprintf("/proc/self/fd/%d/%s", dirfd, name);
	char *const argv[] = {"cp", "-a", "--", (char *)src, dst, NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.keep = dirfd;
	int rc = proc_run(argv, &o);
	free(dst);
	return rc < 0 ? rc : rc == 0 ? 0 : -EIO;
}

/* Does dirfd/name hold the same bytes as src (both regular files)? */
static bool same_file(const char *src, int dirfd, const char *name)
{
	int a = open(src, O_RDONLY | O_CLOEXEC),
	    b = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sa, sb;
	bool same = a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
		    S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode) && sa.st_size == sb.st_size;
	char x[8192], y[8192];
	ssize_t n;
	while (same && (n = read(a, x, sizeof x)) > 0)
		same = read(b, y, (size_t)n) == n && memcmp(x, y, (size_t)n) == 0;
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return same;
}

/* Is dirfd/base (st) already the link to src, or a copy of it, that sync would make? */
static bool already(const char *src, int dirfd, const char *base, const struct stat *st,
		    bool symlink_it)
{
	if (!symlink_it)
		return same_file(src, dirfd, base);
	char target[PATH_MAX];
	ssize_t n = S_ISLNK(st->st_mode) ? readlinkat(dirfd, base, target, sizeof target - 1) : -1;
	if (n >= 0)
		target[n] = '\0';
	return n >= 0 && strcmp(target, src) == 0;
}

/* Is rel (or anything under it) tracked in the worktree wt? */
static bool tracked(const char *wt, const char *rel)
{
	const char *argv[] = {"ls-files", "--error-unmatch", "--", rel, NULL};
	return git_run(wt, argv, NULL, NULL, true) == 0;
}

/*
 * Put a fresh copy (or link) of src in dirfd as base, over what is there:
 * made under a temporary name, then swapped in by rename(2), which replaces
 * the name itself, never what a link there points to.
 */
static int replace_with(const char *src, int dirfd, const char *base, bool symlink_it)
{
	char *tmp = xasprintf(".%s.workrex-sync", base);
	struct stat st;
	int rc = 0;
	if (fstatat(dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		char *left = xasprintf("/proc/self/fd/%d/%s", dirfd, tmp);
		rc = S_ISDIR(st.st_mode) ? beneath_remove_tree(left) : unlinkat(dirfd, tmp, 0);
		free(left);
	}
	if (rc == 0)
		rc = symlink_it ? (symlinkat(src, dirfd, tmp) < 0 ? -errno : 0)
				: copy_into(src, dirfd, tmp);
	bool dir = rc == 0 && fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		   S_ISDIR(st.st_mode);
	if (rc == 0 && dir) {
		/* A directory: swap the two, then remove the old one. */
		rc = renameat2(dirfd, tmp, dirfd, base, RENAME_EXCHANGE) < 0 ? -errno : 0;
		char *old = xasprintf("/proc/self/fd/%d/%s", dirfd, tmp);
		if (rc == 0 && fstatat(dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			beneath_remove_tree(old);
		else if (rc == 0)
			unlinkat(dirfd, tmp, 0);
		free(old);
	} else if (rc == 0) {
		rc = renameat(dirfd, tmp, dirfd, base) < 0 ? -errno : 0;
	}
	free(tmp);
	return rc;
}

/*
 * Copy or link each match into the worktree. The worktree holds a branch
 * that a sandbox may have written: a directory on the way that is a
 * symlink is refused, never followed (the copy would land where the link
 * points, outside the worktree or past excluded_files). Without sync, a
 * name already there stays (git put it there); with sync, an untracked
 * one that differs from the project's is replaced, counted in *done.
 */
static int place_files(const struct repo *r, const struct strlist *pats, bool symlink_them,
		       const char *wt, bool sync, int *done, char **cause)
{
	for (size_t i = 0; i < pats->n; i++) {
		if (!pattern_safe(pats->v[i])) {
			*cause = xasprintf("files: '%s' points outside the repository", pats->v[i]);
			return -EINVAL;
		}
		char *pat = xasprintf("%s/%s", repo_root(r), pats->v[i]);
		glob_t g;
		int grc = glob(pat, GLOB_NOSORT, NULL, &g);
		free(pat);
		if (grc == GLOB_NOMATCH)
			continue;
		if (grc != 0) {
			*cause = xasprintf("files: cannot expand '%s'", pats->v[i]);
			return -EINVAL;
		}
		for (size_t k = 0; k < g.gl_pathc; k++) {
			const char *src = g.gl_pathv[k];
			const char *rel = src + strlen(repo_root(r)) + 1, *base, *sbase;
			/*
			 * The source too, beneath the project: glob follows a
			 * directory that is a link (a clone's "keys" -> ~/.ssh),
			 * and what it found there would be copied to the agent.
			 */
			int from = beneath_parent(repo_root(r), rel, false, &sbase);
			int rc = 0, dir = from < 0 ? from : beneath_parent(wt, rel, true, &base);
			struct stat st;
			if (from >= 0)
				close(from);
			if (dir < 0)
				rc = dir;
			else if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
				rc = symlink_them ? (symlinkat(src, dir, base) < 0 ? -errno : 0)
						  : copy_into(src, dir, base);
			else if (!sync || tracked(wt, rel) ||
				 already(src, dir, base, &st, symlink_them))
				rc = 1; /* git put it there, or it is what it should be */
			else
				rc = replace_with(src, dir, base, symlink_them);
			if (rc == 0 && done)
				(*done)++;
			rc = WRX_MIN(rc, 0);
			if (dir >= 0)
				close(dir);
			if (rc < 0) {
				*cause = xasprintf(
					"files: cannot %s %s: %s%s",
					symlink_them ? "symlink" : "copy", rel, strerror(-rc),
					from < 0 ? " (a directory on the way in the project is a "
						   "symlink: it would leave the repository)"
					: rc == -ELOOP || rc == -ENOTDIR
						? " (a directory on the way is a symlink)"
						: "");
				globfree(&g);
				return rc;
			}
		}
		globfree(&g);
	}
	return 0;
}

int run_hooks(const struct strlist *hooks, const char *what, const struct repo *r,
	      const struct agent_rec *a, char **cause)
{
	for (size_t i = 0; i < hooks->n; i++) {
		char *env[] = {xasprintf("WORKREX_HANDLE=%s", a->handle),
			       xasprintf("WORKREX_WORKTREE_PATH=%s", a->path),
			       xasprintf("WORKREX_PROJECT_ROOT=%s", repo_root(r)),
			       xasprintf("WORKREX_BRANCH=%s", a->branch), NULL};
		char *const argv[] = {"/bin/sh", "-c", hooks->v[i], NULL};
		struct proc_opts o = PROC_OPTS_DEFAULT;
		o.dir = a->path;
		o.env = env;
		o.out = 2; /* hook output is for the user: keep it off our stdout (JSON, tables) */
		int st = proc_run(argv, &o);
		for (char **e = env; *e; e++)
			free(*e);
		if (st < 0) {
			*cause = xasprintf("%s: %s", what, strerror(-st));
			return st;
		}
		if (st != 0) {
			*cause = xasprintf("%s hook failed (exit %d): %s", what, st, hooks->v[i]);
			return -EIO;
		}
	}
	return 0;
}

/* .workrex/PROMPT-<handle>.md, beside a .gitignore of "*": never through a symlink. */
static int write_prompt(const char *wt, const char *handle, const char *prompt, char **cause)
{
	char *rel = xasprintf(".workrex/PROMPT-%s.md", handle);
	char *text = xasprintf("%s\n", prompt);
	int rc = beneath_write(wt, ".workrex/.gitignore", "*\n", 2, 0644);
	if (rc == 0)
		rc = beneath_write(wt, rel, text, strlen(text), 0644);
	if (rc < 0)
		*cause = xasprintf("cannot save the prompt to %s/%s: %s", wt, rel, strerror(-rc));
	free(rel);
	free(text);
	return rc;
}

/*
 * post_create for an agent spawned from a sandbox: never on the host (the
 * new worktree holds what the sandbox asked for); the commands go to the
 * agent's host-only dir, and its first sandboxed agent pane runs them
 * inside the container before the agent (agents_open, private.h).
 */
static int setup_inside(const struct repo *r, const struct config *c, const struct agent_rec *a,
			char **cause)
{
	if (c->post_create.n == 0)
		return 0;
	struct buf b = {0};
	const char *names[] = {"WORKREX_HANDLE", "WORKREX_WORKTREE_PATH", "WORKREX_PROJECT_ROOT",
			       "WORKREX_BRANCH"};
	const char *vals[] = {a->handle, a->path, repo_root(r), a->branch};
	for (size_t i = 0; i < WRX_ARRAY_LEN(names); i++) {
		char *q = sh_quote(vals[i]);
		buf_addf(&b, "export %s=%s; ", names[i], q);
		free(q);
	}
	for (size_t i = 0; i < c->post_create.n; i++) {
		char *q = sh_quote(c->post_create.v[i]);
		buf_addf(&b, "sh -c %s || echo \"workrex: post_create failed: \"%s >&2; ", q, q);
		free(q);
	}
	char *dir = private_agent_dir(repo_root(r), a->handle, true);
	int rc = dir ? beneath_write(dir, "setup", b.data, b.len, 0600) : -ENOENT;
	if (rc < 0)
		*cause = xasprintf("cannot keep post_create for the sandbox: %s", strerror(-rc));
	free(dir);
	buf_free(&b);
	return rc;
}

static int add_steps(const struct repo *r, const struct config *c, const struct add_opts *o,
		     char *handle, char *path, struct agent_rec *out, char **cause);
static bool branch_owns_nothing(const struct repo *r, const char *branch);
static bool unmake(const struct repo *r, const char *handle, const char *branch, const char *path,
		   bool made);

/* An add whose record could not be written: what it made taken away, out emptied; rc. */
static int unmade(const struct repo *r, struct agent_rec *out, bool made_branch, int rc)
{
	unmake(r, out->handle, out->branch, out->path, made_branch);
	agent_rec_free(out);
	return rc;
}

int worktree_add(const struct repo *r, const struct config *c, const struct add_opts *o,
		 struct agent_rec *out, char **cause)
{
	memset(out, 0, sizeof *out);
	if (!repo_branch_name_valid(o->branch)) {
		*cause = xasprintf("'%s' is not a valid branch name", o->branch ? o->branch : "");
		return -EINVAL;
	}
	char *handle = o->handle ? xstrdup(o->handle) : handle_from_branch(o->branch);
	if (handle == NULL || !handle_valid(handle)) {
		*cause = xasprintf("'%s' cannot be a worktree name: use letters, digits, '.', '_' "
				   "and '-' (--name)",
				   o->handle ? o->handle : o->branch);
		free(handle);
		return -EINVAL;
	}
	char *existing = get_key(r, handle, "path");
	if (existing) {
		*cause = xasprintf("an agent named '%s' exists already (%s)", handle, existing);
		free(existing);
		free(handle);
		return -EEXIST;
	}
	char *dir = worktree_dir(r, c, cause);
	if (dir == NULL) {
		free(handle);
		return -EIO;
	}
	char *path = xasprintf("%s/%s", dir, handle);
	free(dir);
	struct stat st;
	if (lstat(path, &st) == 0) {
		*cause = xasprintf("%s exists already", path);
		free(path);
		free(handle);
		return -EEXIST;
	}
	/* What a kill part way leaves is undone by the next command (worktree_recover). */
	struct intent in;
	char *body = xasprintf("branch=%s\npath=%s\nnew-branch=%d\n", o->branch, path,
			       !repo_branch_exists(r, o->branch));
	int rc = intent_begin(r, "add", handle, body, &in);
	free(body);
	if (rc < 0) {
		*cause = intent_refused(r, "an add", handle, rc);
		free(path);
		free(handle);
		return rc;
	}
	FAULT("add.intent");
	rc = add_steps(r, c, o, handle, path, out, cause);
	FAULT("add.steps");
	intent_end(&in);
	return rc;
}

/* worktree_add's steps, once its intent is down (handle and path: owned, given to out). */
static int add_steps(const struct repo *r, const struct config *c, const struct add_opts *o,
		     char *handle, char *path, struct agent_rec *out, char **cause)
{
	private_forget(r, handle); /* a sandbox's git dir from an agent of the same name before */
	char *base = o->base ? xstrdup(o->base) : repo_branch_at(r, o->cwd ? o->cwd : repo_root(r));
	if (base == NULL)
		base = repo_head_branch(r);
	struct buf err = {0};
	bool made_branch, existed = repo_branch_exists(r, o->branch);
	/* Asked for by a sandbox: no git hook runs on the host for it (post-checkout). */
	bool no_hooks = o->setup_inside;
	int rc = repo_worktree_prepare(r, handle, path, o->branch, base ? base : "HEAD",
				       &made_branch);
	FAULT("add.prepare");
	if (rc == 0) {
		/* The checkout, as `git worktree add` runs it: the new worktree's
		 * git dir and tree named, whatever GIT_DIR the caller has. */
		char *admin = xasprintf("--git-dir=%s/worktrees/%s", repo_gitdir(r), handle);
		char *tree = xasprintf("--work-tree=%s", path);
		const char *argv[] = {admin,     tree, "reset", "--hard", "--no-recurse-submodules",
				      "--quiet", NULL};
		rc = git_run(path, argv, NULL, &err, no_hooks);
		free(admin);
		free(tree);
		if (rc != 0)
			repo_worktree_discard(r, handle, made_branch ? o->branch : NULL);
	} else if (repo_branch_exists(r, o->branch)) {
		const char *argv[] = {"worktree", "add", "--", path, o->branch, NULL};
		rc = git_run(repo_root(r), argv, NULL, &err, no_hooks);
	} else {
		const char *argv[] = {"worktree",           "add", "-b", o->branch, "--", path,
				      base ? base : "HEAD", NULL};
		rc = git_run(repo_root(r), argv, NULL, &err, no_hooks);
	}
	if (rc != 0) {
		*cause = git_error_line(&err, "git worktree add failed");
		/* git worktree add -b keeps the branch it made when the checkout fails (a full disk). */
		if (!existed && repo_branch_exists(r, o->branch) &&
		    branch_owns_nothing(r, o->branch)) {
			const char *bargv[] = {"branch", "-D", "--", o->branch, NULL};
			repo_git_config(r, bargv, NULL);
		}
		buf_free(&err);
		free(path);
		free(handle);
		free(base);
		return -EIO;
	}
	buf_free(&err);
	FAULT("add.worktree");

	out->handle = handle;
	out->branch = xstrdup(o->branch);
	out->path = path;
	out->agent = o->agent ? xstrdup(o->agent) : NULL;
	out->base = base;
	out->created = (long)time(NULL);
	char created[32];
	snprintf(created, sizeof created, "%ld", out->created);
	if (repo_config_begin(r) < 0) {
		*cause = xasprintf("%s/config stayed locked (config.lock): the agent's record is "
				   "not written, and its worktree is taken away again",
				   repo_gitdir(r));
		return unmade(r, out, !existed, -EIO);
	}
	set_key(r, handle, "branch", out->branch);
	set_key(r, handle, "path", out->path);
	set_key(r, handle, "agent", out->agent);
	set_key(r, handle, "created", created);
	out->sandbox = o->sandbox;
	out->parent = o->parent ? xstrdup(o->parent) : NULL;
	set_key(r, handle, "parent", out->parent);
	out->group = o->group ? xstrdup(o->group) : NULL;
	set_key(r, handle, "group", out->group);
	out->layout = o->layout ? xstrdup(o->layout) : NULL;
	set_key(r, handle, "layout", out->layout);
	out->max_concurrent = o->max_concurrent;
	out->queued = o->queued;
	if (o->max_concurrent > 0) {
		char limit[16];
		snprintf(limit, sizeof limit, "%d", o->max_concurrent);
		set_key(r, handle, "max-concurrent", limit);
	}
	if (o->queued)
		set_key(r, handle, "queued", "true");
	/* Its ports (config ports), the ones it held before if its worktree is back. */
	if (c->ports > 0) {
		int ports[PORTS_MAX];
		int n = (int)WRX_MIN(c->ports, PORTS_MAX);
		if (ports_take(out->path, n, ports) == 0) {
			out->ports = ports_join(ports, n);
			set_key(r, handle, "ports", out->ports);
		} else {
			fprintf(stderr,
				"workrex: add: %s: no %d free ports in %d-%d; it has none\n",
				handle, n, PORTS_FIRST, PORTS_LAST);
		}
	}
	out->home = o->home ? xstrdup(o->home) : NULL;
	set_key(r, handle, "home", out->home);
	out->repos = o->repos ? xstrdup(o->repos) : NULL;
	set_key(r, handle, "repos", out->repos);
	out->issue = o->issue;
	if (o->issue > 0) {
		char n[16];
		snprintf(n, sizeof n, "%d", o->issue);
		set_key(r, handle, "issue", n);
	}
	give_number(r, out);
	if (o->sandbox >= 0)
		set_key(r, handle, "sandbox", o->sandbox ? "true" : "false");
	if (base) {
		char *key = xasprintf("branch.%s.workrex-base", out->branch);
		repo_config_set(r, key, base);
		free(key);
	}
	FAULT("add.record");
	if ((rc = repo_config_commit(r)) < 0) {
		char *why = repo_config_why();
		*cause = xasprintf("could not write the agent's record to %s/config (%s); its "
				   "worktree is taken away again",
				   repo_gitdir(r), why);
		free(why);
		return unmade(r, out, !existed, rc);
	}
	FAULT("add.recorded");

	if ((rc = place_files(r, &c->files_copy, false, path, false, NULL, cause)) < 0 ||
	    (rc = place_files(r, &c->files_symlink, true, path, false, NULL, cause)) < 0)
		return rc;
	if (o->prompt && (rc = write_prompt(path, handle, o->prompt, cause)) < 0)
		return rc;
	FAULT("add.files");
	if (o->setup_inside)
		return setup_inside(r, c, out, cause);
	return run_hooks(&c->post_create, "post_create", r, out, cause);
}

static bool same_path(const char *a, const char *b);

/* Whether git has a worktree at path (its entry; the directory there or not). */
bool git_has_worktree(const struct repo *r, const char *path)
{
	struct worktree_info *w;
	size_t n;
	char *cause = NULL;
	if (repo_worktrees(r, &w, &n, &cause) < 0) {
		free(cause);
		return true; /* not known: as if it had, so that git is asked */
	}
	bool has = false;
	for (size_t i = 0; i < n && !has; i++)
		has = !w[i].main && same_path(w[i].path, path);
	worktree_info_free(w, n);
	return has;
}

/* Whether every commit on branch is on some other ref too: deleting it loses none. */
static bool branch_owns_nothing(const struct repo *r, const char *branch)
{
	char *mine = xasprintf("--exclude=refs/heads/%s", branch);
	char *tip = xasprintf("refs/heads/%s", branch);
	const char *argv[] = {"rev-list", "--max-count=1", tip, "--not", mine, "--all", NULL};
	struct buf out = {0}, err = {0};
	bool none = git_run(repo_root(r), argv, &out, &err, true) == 0 && out.len == 0;
	buf_free(&out);
	buf_free(&err);
	free(mine);
	free(tip);
	return none;
}

/*
 * What an add made, taken away: its worktree (git's entry and the directory,
 * which did not exist before the add), its record, and its branch if the add
 * made it (made) and no commit is on it alone. Whether the branch went.
 */
static bool unmake(const struct repo *r, const char *handle, const char *branch, const char *path,
		   bool made)
{
	struct buf err = {0};
	struct stat st;
	const char *rm[] = {"worktree", "remove", "--force", "--force", "--", path, NULL};
	if (git_has_worktree(r, path))
		git_run(repo_root(r), rm, NULL, &err, true);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && !git_has_worktree(r, path))
		beneath_remove_tree(path); /* git never knew it: made a moment before the kill */
	buf_free(&err);
	bool drop_branch =
		branch && made && repo_branch_exists(r, branch) && branch_owns_nothing(r, branch);
	if (drop_branch) {
		const char *bargv[] = {"branch", "-D", "--", branch, NULL};
		struct buf e2 = {0};
		drop_branch = repo_git_config(r, bargv, &e2) == 0;
		buf_free(&e2);
	}
	repo_config_begin(r);
	unset_keys(r, handle, drop_branch ? branch : NULL);
	repo_config_commit(r);
	private_forget(r, handle);
	return drop_branch;
}

/* An add that a kill cut short: undone (unmake), as nothing of an agent ran in it yet. */
static int undo_add(const struct repo *r, const char *handle, const char *body, void *arg)
{
	const struct recover_hooks *h = arg;
	char *branch = intent_get(body, "branch"), *path = intent_get(body, "path");
	char *made = intent_get(body, "new-branch");
	/* Ours names <worktree dir>/<handle>, never the project itself. */
	const char *base = path ? strrchr(path, '/') : NULL;
	if (!handle_valid(handle) || path == NULL || path[0] != '/' || strstr(path, "/../") ||
	    base == NULL || strcmp(base + 1, handle) != 0 || same_path(path, repo_root(r))) {
		free(branch);
		free(path);
		free(made);
		return 0; /* not one of ours: nothing to undo */
	}
	/* A dashboard may have found its record meanwhile and opened its panes. */
	if (h && h->stop) {
		struct agent_rec a = {.handle = (char *)handle, .branch = branch, .path = path};
		h->stop(&a, h->arg);
	}
	repo_worktree_mend(r, handle); /* before git is asked about its worktrees */
	bool dropped = unmake(r, handle, branch, path, made && strcmp(made, "1") == 0);
	if (h && h->gone) {
		struct agent_rec a = {.handle = (char *)handle, .branch = branch, .path = path};
		h->gone(&a, h->arg);
	}
	fprintf(stderr,
		"workrex: an add of '%s' was cut short; undone: its worktree%s and record removed "
		"(add it again)\n",
		handle, dropped ? ", its new branch" : "");
	free(branch);
	free(path);
	free(made);
	return 0;
}

static int remove_steps(const struct repo *r, const struct agent_rec *a, bool here, bool drop,
			bool *past, char **cause);

int worktree_remove_steps(const struct repo *r, const struct agent_rec *a, bool drop, char **cause)
{
	bool past;
	return remove_steps(r, a, true, drop, &past, cause);
}

/*
 * A remove that a kill cut short: finished, as it was decided (its checks
 * had passed). Its agent is stopped (rec->stop), its worktree, the branch
 * it was to delete and its record go; pre_remove does not run again.
 */
static int finish_remove(const struct repo *r, const char *handle, const char *body, void *arg)
{
	const struct recover_hooks *h = arg;
	struct agent_rec a = {.handle = (char *)handle};
	char *drop = intent_get(body, "drop-branch");
	a.branch = intent_get(body, "branch");
	a.path = intent_get(body, "path");
	if (a.branch && !*a.branch) {
		free(a.branch);
		a.branch = NULL;
	}
	if (!handle_valid(handle) || a.path == NULL || a.path[0] != '/' ||
	    same_path(a.path, repo_root(r))) {
		free(drop);
		free(a.branch);
		free(a.path);
		return 0; /* not one of ours: nothing to finish */
	}
	if (h && h->stop)
		h->stop(&a, h->arg);
	char *cause = NULL;
	bool past;
	if (remove_steps(r, &a, true, drop && strcmp(drop, "1") == 0, &past, &cause) < 0) {
		fprintf(stderr,
			"workrex: a remove of '%s' was cut short; finishing it failed: %s\n",
			handle, cause);
		free(cause);
		free(drop);
		free(a.branch);
		free(a.path);
		return 1; /* kept: the next command tries again */
	}
	if (h && h->gone)
		h->gone(&a, h->arg);
	fprintf(stderr, "workrex: a remove of '%s' was cut short; finished\n", handle);
	free(drop);
	free(a.branch);
	free(a.path);
	return 0;
}

static int finish_rename(const struct repo *r, const char *old_handle, const char *body, void *arg);

void worktree_recover(const struct repo *r, const struct recover_hooks *h)
{
	repo_config_mend(r);
	intent_each_left(r, "add", undo_add, (void *)h);
	intent_each_left(r, "remove", finish_remove, (void *)h);
	intent_each_left(r, "rename", finish_rename, NULL);
	merge_recover(r, h);
}

void agent_rec_free(struct agent_rec *a)
{
	if (a == NULL)
		return;
	free(a->handle);
	free(a->branch);
	free(a->path);
	free(a->agent);
	free(a->base);
	free(a->remote);
	free(a->parent);
	free(a->group);
	free(a->layout);
	free(a->ports);
	free(a->home);
	free(a->repos);
	memset(a, 0, sizeof *a);
}

int agent_unqueue(const struct repo *r, const char *handle)
{
	char *key = xasprintf("workrex.worktree.%s.queued", handle);
	int rc = repo_config_unset(r, key);
	free(key);
	return rc;
}

static void rec_keys(const struct repo *r, struct agent_rec *a);

/* Fill a record for a linked worktree (recorded by workrex or not). */
static void rec_from_worktree(const struct repo *r, const struct worktree_info *w,
			      struct agent_rec *a)
{
	const char *slash = strrchr(w->path, '/');
	a->handle = xstrdup(slash ? slash + 1 : w->path);
	a->path = xstrdup(w->path);
	a->branch = w->branch ? xstrdup(w->branch) : NULL;
	a->missing = w->missing;
	rec_keys(r, a);
}

/* What is recorded of a->handle (and of its a->branch): agent, created, sandbox, number, base. */
static void rec_keys(const struct repo *r, struct agent_rec *a)
{
	a->agent = get_key(r, a->handle, "agent");
	char *created = get_key(r, a->handle, "created");
	a->created = created ? atol(created) : 0;
	free(created);
	char *sb = get_key(r, a->handle, "sandbox");
	a->sandbox = sb ? strcmp(sb, "true") == 0 : -1;
	free(sb);
	char *num = get_key(r, a->handle, "number");
	a->number = num ? atoi(num) : 0;
	free(num);
	a->parent = get_key(r, a->handle, "parent");
	a->group = get_key(r, a->handle, "group");
	a->layout = get_key(r, a->handle, "layout");
	char *limit = get_key(r, a->handle, "max-concurrent"),
	     *queued = get_key(r, a->handle, "queued");
	a->max_concurrent = limit ? atoi(limit) : 0;
	a->queued = queued && !strcmp(queued, "true");
	free(limit);
	free(queued);
	a->ports = get_key(r, a->handle, "ports");
	a->home = get_key(r, a->handle, "home");
	a->repos = get_key(r, a->handle, "repos");
	char *issue = get_key(r, a->handle, "issue");
	a->issue = issue ? atoi(issue) : 0;
	free(issue);
	if (a->branch) {
		char *key = xasprintf("branch.%s.workrex-base", a->branch);
		a->base = repo_config_get(r, key);
		free(key);
	}
}

/* The handles of agents on servers (workrex.worktree.<handle>.remote set). */
static void remote_handles(const struct repo *r, struct strlist *out)
{
	struct strlist keys = {0};
	repo_config_names(r, "workrex.worktree.", ".remote", &keys);
	for (size_t i = 0; i < keys.n; i++) {
		const char *h = keys.v[i] + strlen("workrex.worktree.");
		size_t len = strlen(h) - strlen(".remote");
		char *handle = xstrndup(h, len);
		if (handle_valid(handle))
			strlist_add(out, handle);
		free(handle);
	}
	strlist_free(&keys);
}

/* An agent on a server, from its record alone (nothing of it is here). */
static int rec_remote(const struct repo *r, const char *handle, struct agent_rec *a)
{
	memset(a, 0, sizeof *a);
	a->remote = get_key(r, handle, "remote");
	a->path = get_key(r, handle, "path");
	if (a->remote == NULL || a->path == NULL || a->path[0] != '/') {
		agent_rec_free(a);
		return -ENOENT;
	}
	a->handle = xstrdup(handle);
	a->branch = get_key(r, handle, "branch");
	rec_keys(r, a);
	return 0;
}

int agent_list(const struct repo *r, struct agent_rec **out, size_t *n, char **cause)
{
	struct worktree_info *w;
	size_t nw;
	int rc = repo_worktrees(r, &w, &nw, cause);
	if (rc < 0)
		return rc;
	struct strlist remote = {0};
	remote_handles(r, &remote);
	*out = xcalloc(nw + remote.n + 1, sizeof **out);
	*n = 0;
	for (size_t i = 0; i < nw; i++)
		if (!w[i].main)
			rec_from_worktree(r, &w[i], &(*out)[(*n)++]);
	for (size_t i = 0; i < remote.n; i++) {
		bool here = false;
		for (size_t k = 0; k < *n && !here; k++)
			here = strcmp((*out)[k].handle, remote.v[i]) == 0;
		if (!here && rec_remote(r, remote.v[i], &(*out)[*n]) == 0)
			(*n)++;
	}
	strlist_free(&remote);
	worktree_info_free(w, nw);
	return 0;
}

int agent_record_remote(const struct repo *r, struct agent_rec *a)
{
	char created[32];
	snprintf(created, sizeof created, "%ld", a->created);
	repo_config_begin(r);
	set_key(r, a->handle, "branch", a->branch);
	set_key(r, a->handle, "path", a->path);
	set_key(r, a->handle, "agent", a->agent);
	set_key(r, a->handle, "created", created);
	if (a->sandbox >= 0) /* sandboxed there, or not, by add's word; else as the config says */
		set_key(r, a->handle, "sandbox", a->sandbox ? "true" : "false");
	give_number(r, a);
	set_key(r, a->handle, "ports", a->ports);
	if (a->base) {
		char *key = xasprintf("branch.%s.workrex-base", a->branch);
		repo_config_set(r, key, a->base);
		free(key);
	}
	/* Last: the key that makes it an agent, once the rest is there. */
	char *key = xasprintf("workrex.worktree.%s.remote", a->handle);
	int rc = repo_config_set(r, key, a->remote);
	free(key);
	int done = repo_config_commit(r);
	return rc < 0 ? rc : done;
}

static bool same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (realpath(a, ra) == NULL || realpath(b, rb) == NULL)
		return strcmp(a, b) == 0;
	return strcmp(ra, rb) == 0;
}

static bool path_inside(const char *dir, const char *path)
{
	char rd[PATH_MAX], rp[PATH_MAX];
	if (realpath(dir, rd) == NULL || realpath(path, rp) == NULL)
		return false;
	size_t n = strlen(rd);
	return strncmp(rd, rp, n) == 0 && (rp[n] == '/' || rp[n] == '\0');
}

int agent_get(const struct repo *r, const char *handle, struct agent_rec *out, char **cause)
{
	memset(out, 0, sizeof *out);
	if (!handle_valid(handle)) {
		*cause = xasprintf("'%s' is not a handle", handle);
		return -EINVAL;
	}
	if (rec_remote(r, handle, out) == 0)
		return 0;
	struct worktree_info *w;
	if (repo_worktree(r, handle, &w, cause) == 0) {
		const char *slash = strrchr(w->path, '/');
		bool named = strcmp(slash ? slash + 1 : w->path, handle) == 0;
		if (named)
			rec_from_worktree(r, w, out);
		worktree_info_free(w, 1);
		if (named)
			return 0;
		free(*cause);
		*cause = NULL;
	} else {
		free(*cause);
		*cause = NULL;
	}
	/* git named its directory otherwise (a name taken before): the whole list. */
	return agent_find(r, handle, NULL, out, cause);
}

int agent_find(const struct repo *r, const char *name, const char *cwd, struct agent_rec *out,
	       char **cause)
{
	memset(out, 0, sizeof *out);
	struct worktree_info *w;
	size_t nw;
	int rc = repo_worktrees(r, &w, &nw, cause);
	if (rc < 0)
		return rc;
	const struct worktree_info *hit = NULL;
	bool main_hit = false;
	for (size_t i = 0; i < nw && !hit; i++) {
		const char *slash = strrchr(w[i].path, '/');
		const char *base = slash ? slash + 1 : w[i].path;
		bool match = name ? (strcmp(base, name) == 0 ||
				     (w[i].branch && strcmp(w[i].branch, name) == 0) ||
				     same_path(w[i].path, name))
				  : path_inside(w[i].path, cwd);
		if (!match)
			continue;
		if (w[i].main) {
			/* A linked worktree inside the main one matches more precisely. */
			main_hit = true;
			continue;
		}
		hit = &w[i];
	}
	if (hit == NULL && name && !main_hit) {
		/* An agent on a server, by handle or branch. */
		struct strlist remote = {0};
		remote_handles(r, &remote);
		for (size_t i = 0; i < remote.n; i++) {
			struct agent_rec a;
			if (rec_remote(r, remote.v[i], &a) < 0)
				continue;
			if (strcmp(a.handle, name) == 0 ||
			    (a.branch && strcmp(a.branch, name) == 0)) {
				*out = a;
				strlist_free(&remote);
				worktree_info_free(w, nw);
				return 0;
			}
			agent_rec_free(&a);
		}
		strlist_free(&remote);
	}
	if (hit == NULL) {
		if (main_hit)
			*cause = xasprintf(
				"'%s' is the main worktree, which workrex never merges or "
				"removes",
				name ? name : repo_root(r));
		else if (name)
			*cause = xasprintf("no agent '%s' (workrex list shows them)", name);
		else
			*cause = xstrdup("not inside an agent's worktree: name the agent");
		worktree_info_free(w, nw);
		return main_hit ? -EPERM : -ENOENT;
	}
	rec_from_worktree(r, hit, out);
	worktree_info_free(w, nw);
	return 0;
}

int worktree_dirty(const struct config *c, const struct agent_rec *a, bool *dirty, char **cause)
{
	*dirty = false;
	if (a->missing)
		return 0; /* nothing left uncommitted: it went with the directory */
	struct strlist placed = {0};
	for (size_t i = 0; i < c->files_copy.n; i++)
		strlist_add(&placed, c->files_copy.v[i]);
	for (size_t i = 0; i < c->files_symlink.n; i++)
		strlist_add(&placed, c->files_symlink.v[i]);
	int rc = repo_dirty(a->path, &placed, dirty, cause);
	strlist_free(&placed);
	return rc;
}

int worktree_remove(const struct repo *r, const struct config *c, const struct agent_rec *a,
		    const struct remove_opts *o, char **cause)
{
	const struct worktree_place *place = o->place;
	if (place == NULL && same_path(a->path, repo_root(r))) {
		*cause = xasprintf("'%s' is the main worktree, which workrex never removes",
				   a->handle);
		return -EPERM;
	}
	bool dirty = false;
	int rc = place ? place->dirty(place->arg, a, &dirty, cause)
		       : worktree_dirty(c, a, &dirty, cause);
	if (rc < 0 && !o->force)
		return rc;
	if (dirty && !o->force) {
		*cause = xasprintf("'%s' has uncommitted changes; commit them or pass --force",
				   a->handle);
		return -EBUSY;
	}
	bool keep_branch = o->keep_branch;
	if (a->branch && !o->keep_branch && !o->force) {
		char *main = repo_main_branch(r, c->main_branch);
		const char *into = a->base && repo_branch_exists(r, a->base) ? a->base : main;
		long ahead = into ? repo_ahead(r, a->branch, into) : -1;
		if (ahead > 0 && a->missing) {
			/* Its directory is gone already: what is left to clean up goes, its commits stay. */
			keep_branch = true;
			if (o->note)
				*o->note = xasprintf(
					"its branch %s keeps %ld commit%s not merged into "
					"%s (git branch -D %s deletes it)",
					a->branch, ahead, ahead == 1 ? "" : "s", into, a->branch);
		} else if (ahead > 0) {
			*cause = xasprintf(
				"'%s' has %ld commit%s not merged into %s; merge it, pass "
				"--keep-branch, or --force",
				a->branch, ahead, ahead == 1 ? "" : "s", into);
			free(main);
			return -EBUSY;
		}
		free(main);
	}
	/* Decided: what a kill from here on leaves, the next command finishes (finish_remove). */
	struct intent in = {0};
	if (place == NULL) {
		char *body =
			xasprintf("branch=%s\npath=%s\ndrop-branch=%d\n",
				  a->branch ? a->branch : "", a->path, a->branch && !keep_branch);
		rc = intent_begin(r, "remove", a->handle, body, &in);
		free(body);
		if (rc < 0) {
			*cause = intent_refused(r, "a remove", a->handle, rc);
			return rc;
		}
	}
	FAULT("remove.intent");
	if (o->stop)
		o->stop(a, o->stop_arg);
	FAULT("remove.stopped");
	if (place) {
		if ((rc = place->remove(place->arg, a, o->run_hooks, cause)) < 0)
			return rc;
	} else {
		if (o->run_hooks && !a->missing &&
		    (rc = run_hooks(&c->pre_remove, "pre_remove", r, a, cause)) < 0) {
			intent_end(&in);
			return rc;
		}
		FAULT("remove.hooks");
	}
	bool past;
	rc = remove_steps(r, a, place == NULL, !keep_branch, &past, cause);
	if (rc < 0 && past && in.path) {
		/* Its worktree gone: the rest is for the next command, as after a kill. */
		char *more = xasprintf("%s; the next workrex command finishes the remove", *cause);
		free(*cause);
		*cause = more;
		intent_leave(&in);
	}
	intent_end(&in);
	return rc;
}

/*
 * remove's steps once its agent is stopped and its hooks ran: the worktree
 * (if here), the branch (drop), the record. Each is done already or not:
 * the next command finishing a killed remove takes the same steps. *past:
 * whether the worktree is gone (a failure after it is not undone).
 */
static int remove_steps(const struct repo *r, const struct agent_rec *a, bool here, bool drop,
			bool *past, char **cause)
{
	*past = !here;
	struct buf err = {0};
	struct stat st;
	if (here && (lstat(a->path, &st) == 0 || git_has_worktree(r, a->path))) {
		/*
		 * Twice: a locked worktree (a lock file) is removed too; one
		 * deleted by hand loses its entry. Tried again a moment later:
		 * git reads every worktree's git dir, and fails on one another
		 * remove takes away meanwhile.
		 */
		const char *argv[] = {"worktree", "remove", "--force", "--force",
				      "--",       a->path,  NULL};
		for (int tries = 1; git_run(repo_root(r), argv, NULL, &err, true) != 0; tries++) {
			if (lstat(a->path, &st) < 0 && !git_has_worktree(r, a->path))
				break; /* gone, and its entry: what was asked */
			if (tries == 3) {
				*cause = git_error_line(&err, "git worktree remove failed");
				buf_free(&err);
				return -EIO;
			}
			buf_consume(&err, err.len);
			struct timespec ts = {0, 100 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		buf_consume(&err, err.len);
	}
	*past = true;
	FAULT("remove.worktree");
	if (a->branch && drop && repo_branch_exists(r, a->branch)) {
		const char *bargv[] = {"branch", "-D", "--", a->branch, NULL};
		if (repo_git_config(r, bargv, &err) != 0) {
			*cause = git_error_line(&err, "git branch -D failed");
			buf_free(&err);
			return -EIO;
		}
	}
	buf_free(&err);
	FAULT("remove.branch");
	int rc = repo_config_begin(r);
	unset_keys(r, a->handle, drop ? a->branch : NULL);
	FAULT("remove.record");
	if (rc == 0)
		rc = repo_config_commit(r);
	if (rc < 0) {
		char *why = repo_config_why();
		*cause = xasprintf("its worktree is gone, but its record could not be taken out of "
				   "%s/config (%s)",
				   repo_gitdir(r), why);
		free(why);
		return rc;
	}
	FAULT("remove.recorded");
	private_forget(r, a->handle);
	return 0;
}

int worktree_sync_files(const struct repo *r, const struct config *c, const struct agent_rec *a,
			int *done, char **cause)
{
	*done = 0;
	if (a->remote) {
		*cause = xasprintf("'%s' runs on %s: files.copy and files.symlink are for "
				   "worktrees here",
				   a->handle, a->remote);
		return -EINVAL;
	}
	int rc = place_files(r, &c->files_copy, false, a->path, true, done, cause);
	if (rc == 0)
		rc = place_files(r, &c->files_symlink, true, a->path, true, done, cause);
	return rc;
}

/* The admin dir a linked worktree's .git file names (a host file, mounted over inside). */
static char *admin_of(const char *wt)
{
	char *text = NULL;
	if (beneath_read(wt, ".git", 4096, &text) < 0)
		return NULL;
	char *admin = NULL;
	if (!strncmp(text, "gitdir: ", 8) && text[8] == '/') {
		text[strcspn(text, "\n")] = '\0';
		admin = xstrdup(text + 8);
	}
	free(text);
	return admin;
}

/*
 * A rename, from its old names to its new ones. Its steps are taken in
 * this order, each only if not taken yet, so that the next command
 * finishing a killed rename (finish_rename) takes the same ones.
 */
struct rename_plan {
	const char *old_handle, *handle;
	const char *old_path, *path;   /* the worktree */
	const char *old_admin, *admin; /* its git dir, .git/worktrees/NAME */
	const char *old_branch, *branch;
};

/* The branch, the worktree and its git dir renamed; *done says which (to undo). */
static int rename_moves(const struct repo *r, const struct rename_plan *p, int *done, char **cause)
{
	struct stat st;
	*done = 0;
	if (p->branch && repo_branch_exists(r, p->old_branch) &&
	    !repo_branch_exists(r, p->branch)) {
		const char *argv[] = {"branch", "-m", "--", p->old_branch, p->branch, NULL};
		struct buf err = {0};
		int rc = repo_git_config(r, argv, &err);
		if (rc != 0)
			*cause = git_error_line(&err, "git branch -m failed");
		buf_free(&err);
		if (rc != 0)
			return -EIO;
		*done = 1;
	}
	FAULT("rename.branch");
	if (lstat(p->old_path, &st) == 0 && lstat(p->path, &st) < 0) {
		if (rename(p->old_path, p->path) < 0)
			return -errno;
		*done = 2;
	}
	FAULT("rename.dir");
	if (lstat(p->old_admin, &st) == 0 && lstat(p->admin, &st) < 0) {
		if (rename(p->old_admin, p->admin) < 0)
			return -errno;
		*done = 3;
	}
	FAULT("rename.admin");
	/* Each names the other: written again, whatever they say now. */
	char *gitfile = xasprintf("gitdir: %s\n", p->admin);
	char *back = xasprintf("%s/.git\n", p->path);
	int rc = beneath_write(p->path, ".git", gitfile, strlen(gitfile), 0644);
	if (rc == 0)
		rc = beneath_write(p->admin, "gitdir", back, strlen(back), 0644);
	free(gitfile);
	free(back);
	if (rc < 0) {
		char *old = xasprintf("gitdir: %s\n", p->old_admin);
		char *oldback = xasprintf("%s/.git\n", p->old_path);
		beneath_write(p->path, ".git", old, strlen(old), 0644);
		beneath_write(p->admin, "gitdir", oldback, strlen(oldback), 0644);
		free(old);
		free(oldback);
		return rc;
	}
	FAULT("rename.gitfiles");
	return 0;
}

/* The moves rename_moves made (done), undone last first. */
static void rename_unmove(const struct repo *r, const struct rename_plan *p, int done)
{
	if (done >= 3)
		rename(p->admin, p->old_admin);
	if (done >= 2)
		rename(p->path, p->old_path);
	if (done >= 1) {
		const char *argv[] = {"branch", "-m", "--", p->branch, p->old_branch, NULL};
		repo_git_config(r, argv, NULL);
	}
}

/* The record under its new name (if still under the old), and the private dir. 0 or -errno. */
static int rename_record(const struct repo *r, const struct rename_plan *p)
{
	char *old = get_key(r, p->old_handle, "path");
	if (old) {
		/* The branch's own config moved with git branch -m. */
		static const char *fields[] = {"agent",          "created", "sandbox",
					       "number",         "parent",  "group",
					       "max-concurrent", "queued",  "layout"};
		if (repo_config_begin(r) < 0) {
			free(old);
			return -EIO;
		}
		for (size_t i = 0; i < WRX_ARRAY_LEN(fields); i++) {
			char *v = get_key(r, p->old_handle, fields[i]);
			set_key(r, p->handle, fields[i], v);
			free(v);
		}
		unset_keys(r, p->old_handle, NULL);
		set_key(r, p->handle, "path", p->path);
		set_key(r, p->handle, "branch", p->branch ? p->branch : p->old_branch);
		FAULT("rename.record");
		int rc = repo_config_commit(r);
		free(old);
		if (rc < 0)
			return rc;
	}
	FAULT("rename.recorded");
	/* A sandboxed agent's own dir (its git dir is made up to date at its next start). */
	char *priv = private_agent_dir(repo_root(r), p->old_handle, false);
	char *priv_new = private_agent_dir(repo_root(r), p->handle, false);
	struct stat st;
	if (priv && priv_new && lstat(priv, &st) == 0 && lstat(priv_new, &st) != 0)
		rename(priv, priv_new);
	free(priv);
	free(priv_new);
	return 0;
}

int worktree_rename(const struct repo *r, const struct agent_rec *a, const char *handle,
		    const char *branch, struct agent_rec *out, char **cause)
{
	memset(out, 0, sizeof *out);
	if (a->remote) {
		*cause = xasprintf("'%s' runs on %s: a remote agent keeps its name", a->handle,
				   a->remote);
		return -EINVAL;
	}
	if (!handle_valid(handle)) {
		*cause = xasprintf("'%s' cannot be a worktree name: use letters, digits, '.', '_' "
				   "and '-'",
				   handle);
		return -EINVAL;
	}
	if (branch && (!repo_branch_name_valid(branch) || repo_branch_exists(r, branch))) {
		*cause =
			xasprintf(repo_branch_exists(r, branch) ? "a branch '%s' exists already"
								: "'%s' is not a valid branch name",
				  branch);
		return -EINVAL;
	}
	char *dir = path_parent(a->path), *path = xasprintf("%s/%s", dir, handle);
	char *admin = admin_of(a->path), *admins = admin ? path_parent(admin) : NULL;
	char *new_admin = admin ? xasprintf("%s/%s", admins, handle) : NULL;
	char *existing = get_key(r, handle, "path");
	struct stat st;
	struct intent in = {0};
	int rc = 0, done = 0;
	if (admin == NULL) {
		*cause = xasprintf("%s/.git does not name the worktree's git dir", a->path);
		rc = -EINVAL;
	} else if (existing || lstat(path, &st) == 0 || lstat(new_admin, &st) == 0) {
		*cause = xasprintf("'%s' is taken: %s exists already", handle,
				   existing                ? existing
				   : lstat(path, &st) == 0 ? path
							   : new_admin);
		rc = -EEXIST;
	}
	struct rename_plan p = {a->handle, handle,    a->path,   path,
				admin,     new_admin, a->branch, branch};
	if (rc == 0) {
		/* Decided: what a kill from here on leaves, the next command finishes. */
		char *body = xasprintf("handle=%s\nold-path=%s\npath=%s\nold-admin=%s\nadmin=%s\n"
				       "old-branch=%s\nbranch=%s\n",
				       handle, a->path, path, admin, new_admin, a->branch,
				       branch ? branch : "");
		rc = intent_begin(r, "rename", a->handle, body, &in);
		free(body);
		if (rc < 0)
			*cause = intent_refused(r, "a rename", a->handle, rc);
	}
	FAULT("rename.intent");
	if (rc == 0 && (rc = rename_moves(r, &p, &done, cause)) < 0) {
		/* Undone, last first: on failure nothing changed. */
		rename_unmove(r, &p, done);
		if (!*cause)
			*cause = xasprintf("renaming %s to %s: %s", a->path, path, strerror(-rc));
	}
	if (rc < 0)
		goto out;
	if ((rc = rename_record(r, &p)) < 0) {
		char *why = repo_config_why();
		*cause = xasprintf("%s is moved to %s, but its record could not be written to "
				   "%s/config (%s): the next workrex command finishes the rename",
				   a->handle, path, repo_gitdir(r), why);
		free(why);
		intent_leave(&in);
		goto out;
	}
	out->handle = xstrdup(handle);
	out->path = xstrdup(path);
	out->branch = xstrdup(branch ? branch : a->branch);
	out->agent = a->agent ? xstrdup(a->agent) : NULL;
	out->base = a->base ? xstrdup(a->base) : NULL;
	out->created = a->created;
	out->sandbox = a->sandbox;
	out->number = a->number;
	out->parent = a->parent ? xstrdup(a->parent) : NULL;
out:
	intent_end(&in);
	free(dir);
	free(path);
	free(admin);
	free(admins);
	free(new_admin);
	free(existing);
	return rc;
}

/* Whether path is dir/NAME, NAME a valid handle. */
static bool names_in(const char *path, const char *dir, const char *name)
{
	size_t n = dir ? strlen(dir) : 0;
	return path && dir && path[0] == '/' && strncmp(path, dir, n) == 0 && path[n] == '/' &&
	       handle_valid(path + n + 1) && (name == NULL || strcmp(path + n + 1, name) == 0);
}

/*
 * A rename a kill cut short: finished, as it was decided (its checks had
 * passed and nothing runs in the worktree). Its intent names old and new;
 * each must be where a rename of ours puts it.
 */
static int finish_rename(const struct repo *r, const char *old_handle, const char *body, void *arg)
{
	(void)arg;
	int keep = 0;
	char *handle = intent_get(body, "handle");
	char *old_path = intent_get(body, "old-path"), *path = intent_get(body, "path");
	char *old_admin = intent_get(body, "old-admin"), *admin = intent_get(body, "admin");
	char *old_branch = intent_get(body, "old-branch"), *branch = intent_get(body, "branch");
	char *dir = old_path ? path_parent(old_path) : NULL;
	char *admins = xasprintf("%s/worktrees", repo_gitdir(r));
	if (handle_valid(old_handle) && handle && handle_valid(handle) &&
	    names_in(old_path, dir, NULL) && names_in(path, dir, handle) &&
	    names_in(old_admin, admins, NULL) && names_in(admin, admins, handle) &&
	    !same_path(dir, repo_root(r)) && old_branch && repo_branch_name_valid(old_branch) &&
	    branch && (!*branch || repo_branch_name_valid(branch))) {
		struct rename_plan p = {old_handle, handle, old_path,   path,
					old_admin,  admin,  old_branch, *branch ? branch : NULL};
		char *cause = NULL;
		int done;
		int rc = rename_moves(r, &p, &done, &cause);
		if (rc == 0)
			rc = rename_record(r, &p);
		keep = rc < 0; /* the next command tries again */
		if (rc < 0)
			fprintf(stderr,
				"workrex: a rename of '%s' to '%s' was cut short; finishing it "
				"failed: %s\n",
				old_handle, handle, cause ? cause : strerror(-rc));
		else
			fprintf(stderr,
				"workrex: a rename of '%s' to '%s' was cut short; finished\n",
				old_handle, handle);
		free(cause);
	}
	free(handle);
	free(old_path);
	free(path);
	free(old_admin);
	free(admin);
	free(old_branch);
	free(branch);
	free(dir);
	free(admins);
	return keep;
}
