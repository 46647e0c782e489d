/*
 * private.c - a sandboxed agent's private git dir and the verified import
 * of its commits (see private.h for the design and its reasons).
 *
 * Everything read from the private dir goes through beneath_* (no symlink
 * followed anywhere, regular files only) and is parsed as data: a ref is 40
 * (or 64) hex digits or it is ignored. The only git process that touches
 * what came from the sandbox is `git fetch` from the quarantine repository,
 * with hooks off and every object checked.
 */
#include "private.h"

#include "../util/beneath.h"
#include "../util/fault.h"
#include "../util/log.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define GIT_HEX_MAX 64 /* a SHA-256 object name */

char *private_project_dir(const char *project_root, bool create)
{
	char *state = state_dir();
	if (state == NULL)
		return NULL;
	char *dir = xasprintf("%s/sandbox/git-%08x", state, str_hash(WRX_HASH_INIT, project_root));
	free(state);
	if (create && mkdir_p(dir, 0700) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *private_agent_dir(const char *project_root, const char *handle, bool create)
{
	char *project = private_project_dir(project_root, false);
	if (project == NULL)
		return NULL;
	char *dir = xasprintf("%s/%s", project, handle);
	free(project);
	if (create && mkdir_p(dir, 0700) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

static char *agent_dir(const struct repo *r, const char *handle, bool create)
{
	return private_agent_dir(repo_root(r), handle, create);
}

/* s is a whole object name: 40 or 64 lower-case hex digits. */
static bool is_oid(const char *s, size_t n)
{
	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* The first line of root/rel if it is an object name. Caller frees. */
static char *read_oid(const char *root, const char *rel)
{
	char *text;
	if (beneath_read(root, rel, 256, &text) < 0)
		return NULL;
	size_t n = strcspn(text, "\n");
	char *oid = is_oid(text, n) ? xstrndup(text, n) : NULL;
	free(text);
	return oid;
}

/* The tip of branch in the private dir: its loose ref, else its packed one. */
static char *private_tip(const char *gitdir, const char *branch)
{
	char *ref = xasprintf("refs/heads/%s", branch);
	char *oid = read_oid(gitdir, ref), *packed;
	if (oid == NULL && beneath_read(gitdir, "packed-refs", 64u << 20, &packed) == 0) {
		for (char *save = NULL, *l = strtok_r(packed, "\n", &save); l && !oid;
		     l = strtok_r(NULL, "\n", &save)) {
			char *sp = strchr(l, ' ');
			if (sp && !strcmp(sp + 1, ref) && is_oid(l, (size_t)(sp - l)))
				oid = xstrndup(l, (size_t)(sp - l));
		}
		free(packed);
	}
	free(ref);
	return oid;
}

/*
 * root/rel := text, unless it holds exactly that already: a pane's start
 * then only reads (a new file costs an inode, a millisecond on some disks,
 * and the dashboard does this on its loop).
 */
static int write_str(const char *root, const char *rel, const char *text)
{
	char *old = NULL;
	size_t len = strlen(text);
	bool same = beneath_read(root, rel, len + 1, &old) == 0 && strcmp(old, text) == 0;
	free(old);
	return same ? 0 : beneath_write(root, rel, text, len, 0644);
}

/* Copy a host file (trusted, binary) into root/rel. */
static int copy_host_file(const char *src, const char *root, const char *rel)
{
	int fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct buf b = {0};
	char tmp[65536];
	ssize_t n;
	while ((n = read(fd, tmp, sizeof tmp)) > 0)
		buf_add(&b, tmp, (size_t)n);
	int rc = n < 0 ? -errno : beneath_write(root, rel, b.data ? b.data : "", b.len, 0644);
	close(fd);
	buf_free(&b);
	return rc;
}

static int set_branch(const char *gitdir, const char *branch, const char *oid)
{
	char *ref = xasprintf("refs/heads/%s", branch), *line = xasprintf("%s\n", oid);
	int rc = write_str(gitdir, ref, line);
	free(ref);
	free(line);
	return rc;
}

int private_prepare(const struct repo *r, const char *handle, const char *branch,
		    const char *config_text, struct private_git *out, char **cause)
{
	memset(out, 0, sizeof *out);
	char *dir = agent_dir(r, handle, true);
	if (dir == NULL) {
		*cause = xstrdup("no state directory for the sandbox's git dir (set HOME)");
		return -ENOENT;
	}
	char *gitdir = xasprintf("%s/git", dir), *synced_file = xasprintf("%s/synced", dir);
	char *host = repo_branch_tip(r, branch);
	char *tip = NULL, *synced = NULL;
	int rc = 0;
	struct stat st;
	if (host == NULL) {
		*cause = xasprintf("the branch '%s' does not exist", branch);
		rc = -ENOENT;
		goto out;
	}
	if (lstat(gitdir, &st) == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != getuid()))
		beneath_remove_tree(gitdir), unlink(gitdir);
	bool fresh = lstat(gitdir, &st) != 0;
	if (fresh && mkdir(gitdir, 0755) < 0) {
		*cause = xasprintf("%s: %s", gitdir, strerror(errno));
		rc = -errno;
		goto out;
	}
	tip = fresh ? NULL : private_tip(gitdir, branch);
	synced = read_oid(dir, "synced");
	/*
	 * The sandbox's branch follows the host's unless it has commits of its
	 * own not imported yet (then it keeps them until the next import).
	 */
	bool follow = tip == NULL || synced == NULL || !strcmp(tip, synced);
	char *admin_index = xasprintf("%s/worktrees/%s/index", repo_gitdir(r), handle);
	char *alternates = xasprintf("%s/objects\n", repo_gitdir(r));
	char *head = xasprintf("ref: refs/heads/%s\n", branch);
	char *packed = repo_packed_refs(r, branch);
	char *hooks = strcasestr(config_text, "hookspath")
			      ? xstrdup("")
			      : xasprintf("[core]\n\thooksPath = %s/hooks\n", repo_gitdir(r));
	char *config = xasprintf("%s\n[core]\n\tbare = false\n%s", config_text, hooks);
	/* objects/ and refs/ come with the files below; git makes the rest when it needs them. */
	rc = write_str(gitdir, "objects/info/alternates", alternates);
	if (rc == 0)
		rc = write_str(gitdir, "config", config);
	if (rc == 0 && (*packed || !fresh))
		rc = write_str(gitdir, "packed-refs", packed);
	if (rc == 0 && (fresh || follow))
		rc = write_str(gitdir, "HEAD", head);
	if (rc == 0)
		rc = set_branch(gitdir, branch, follow ? host : tip);
	if (rc == 0 && (fresh || (follow && (tip == NULL || strcmp(tip, host) != 0))))
		copy_host_file(admin_index, gitdir, "index"); /* none yet is fine */
	if (rc == 0 && follow) {
		char *line = xasprintf("%s\n", host);
		rc = write_str(dir, "synced", line);
		free(line);
	}
	free(admin_index);
	free(alternates);
	free(head);
	free(packed);
	free(hooks);
	free(config);
	if (rc < 0) {
		*cause = xasprintf("preparing the sandbox's git dir %s: %s", gitdir, strerror(-rc));
		goto out;
	}
	char *gitfile_text = xasprintf("gitdir: %s\n", gitdir);
	rc = write_str(dir, "gitfile", gitfile_text);
	free(gitfile_text);
	if (rc < 0) {
		*cause = xasprintf("%s/gitfile: %s", dir, strerror(-rc));
		goto out;
	}
	out->gitdir = gitdir;
	out->gitfile = xasprintf("%s/gitfile", dir);
	gitdir = NULL;
out:
	free(dir);
	free(gitdir);
	free(synced_file);
	free(host);
	free(tip);
	free(synced);
	return rc;
}

void private_git_free(struct private_git *p)
{
	if (p == NULL)
		return;
	free(p->gitdir);
	free(p->gitfile);
	memset(p, 0, sizeof *p);
}

/* Copy the open regular file in into dst/name. */
static int copy_fd(int in, int dst, const char *name)
{
	int out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (out < 0)
		return -errno;
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while (rc == 0 && (n = read(in, buf, sizeof buf)) != 0)
		if (n < 0 || write(out, buf, (size_t)n) != n)
			rc = -EIO;
	close(out);
	return rc;
}

/*
 * Put the regular files of from/sub into to/sub, but those wanted(sub, name,
 * arg) says no to: as hard links where the file system allows (no inode to
 * allocate, no byte to copy), else as copies. A link is safe here: what git
 * stores is what index-pack hashed while reading it, and a link is checked
 * after it is made, in a directory only the host writes, to be a regular
 * file, so a name the sandbox swapped for a symlink meanwhile is dropped.
 */
static int link_files(int from, int to, const char *sub,
		      bool (*wanted)(const char *, const char *, const void *), const void *arg)
{
	int src = openat(from, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return errno == ENOENT ? 0 : -errno;
	DIR *d = fdopendir(src);
	if (d == NULL) {
		close(src);
		return -errno;
	}
	int rc = 0, dst = -1;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || !wanted(sub, e->d_name, arg))
			continue;
		if (dst < 0 &&
		    ((mkdirat(to, sub, 0755) < 0 && errno != EEXIST) ||
		     (dst = openat(to, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
			     0)) {
			rc = -errno;
			break;
		}
		struct stat st;
		if (linkat(dirfd(d), e->d_name, dst, e->d_name, 0) < 0) {
			int in = openat(dirfd(d), e->d_name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (in >= 0 && fstat(in, &st) == 0 && S_ISREG(st.st_mode))
				rc = copy_fd(in, dst, e->d_name);
			if (in >= 0)
				close(in);
		} else if (fstatat(dst, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			   !S_ISREG(st.st_mode)) {
			unlinkat(dst, e->d_name, 0);
		}
	}
	closedir(d);
	if (dst >= 0)
		close(dst);
	return rc;
}

/* Empty the quarantine's object dirs (its links and copies), keeping the dirs. */
static void empty_objects(int objects)
{
	DIR *d = fdopendir(dup(objects));
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "info"))
			continue;
		int sub =
			openat(objects, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *s = sub >= 0 ? fdopendir(sub) : NULL;
		struct dirent *f;
		while (s && (f = readdir(s)) != NULL)
			if (f->d_name[0] != '.')
				unlinkat(dirfd(s), f->d_name, 0);
		if (s)
			closedir(s);
		else if (sub >= 0)
			close(sub);
	}
	if (d)
		closedir(d);
}

static bool loose_dir(const char *name)
{
	return strlen(name) == 2 && isxdigit((unsigned char)name[0]) &&
	       isxdigit((unsigned char)name[1]);
}

/* A loose object the host lacks (what it has already needs no copy, nor a check). */
static bool new_object(const char *sub, const char *name, const void *arg)
{
	char hex[GIT_HEX_MAX + 1];
	size_t a = strlen(sub), b = strlen(name);
	if (a + b > GIT_HEX_MAX)
		return false;
	memcpy(hex, sub, a);
	memcpy(hex + a, name, b + 1);
	return is_oid(hex, strlen(hex)) && !repo_has_object(arg, hex);
}

static bool pack_file(const char *sub, const char *name, const void *arg)
{
	(void)sub;
	(void)arg;
	size_t n = strlen(name);
	return !strncmp(name, "pack-", 5) && n > 4 &&
	       (!strcmp(name + n - 5, ".pack") || !strcmp(name + n - 4, ".idx"));
}

/* The quarantine: a bare repository of the host's holding copies of the sandbox's objects. */
/*
 * The quarantine: a bare repository of the host's, kept between imports (its
 * 256 object dirs are made once), holding links to (or copies of) the
 * private dir's objects that the host lacks, and the tip as its one branch.
 */
static int quarantine(const struct repo *r, const char *gitdir, const char *q, const char *tip)
{
	if (mkdir(q, 0700) < 0 && errno != EEXIST)
		return -errno;
	char *alt = xasprintf("%s/objects\n", repo_gitdir(r));
	char *ref = xasprintf("%s\n", tip);
	const char *cfg = strlen(tip) == 64
				  ? "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
				    "[extensions]\n\tobjectformat = sha256\n"
				  : "[core]\n\trepositoryformatversion = 0\n\tbare = true\n";
	int rc = write_str(q, "config", cfg);
	if (rc == 0)
		rc = write_str(q, "HEAD", "ref: refs/heads/import\n");
	if (rc == 0)
		rc = write_str(q, "refs/heads/import", ref);
	if (rc == 0)
		rc = write_str(q, "objects/info/alternates", alt);
	free(alt);
	free(ref);
	if (rc < 0)
		return rc;
	int from = beneath_dir(gitdir, "objects", false, 0);
	int to = beneath_dir(q, "objects", false, 0);
	if (from < 0 || to < 0) {
		rc = from < 0 ? from : to;
	} else {
		empty_objects(to); /* what a run that died left */
		DIR *d = fdopendir(dup(from));
		struct dirent *e;
		while (rc == 0 && d && (e = readdir(d)) != NULL)
			if (loose_dir(e->d_name))
				rc = link_files(from, to, e->d_name, new_object, r);
		if (d)
			closedir(d);
		if (rc == 0)
			rc = link_files(from, to, "pack", pack_file, NULL);
	}
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	return rc;
}

int private_import(const struct repo *r, const char *handle, const char *branch,
		   const char *worktree, char **note, char **cause)
{
	*note = NULL;
	char *dir = agent_dir(r, handle, false);
	if (dir == NULL || branch == NULL) {
		free(dir);
		return 0;
	}
	char *gitdir = xasprintf("%s/git", dir);
	char *tip = private_tip(gitdir, branch), *synced = read_oid(dir, "synced");
	char *q = NULL, *hidden = NULL;
	int rc = 0, lock = -1;
	if (tip == NULL || synced == NULL || !strcmp(tip, synced))
		goto out; /* nothing new inside (or never a sandbox) */
	/* One import at a time for this agent (two CLI commands may both want it). */
	char *lockfile = xasprintf("%s/import.lock", dir);
	lock = open(lockfile, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(lockfile);
	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		*cause =
			xasprintf("importing %s: cannot lock %s: %s", branch, dir, strerror(errno));
		rc = -EIO;
		goto out;
	}
	/* Whoever held the lock may have imported it already: read both again. */
	free(tip);
	free(synced);
	tip = private_tip(gitdir, branch);
	synced = read_oid(dir, "synced");
	if (tip == NULL || synced == NULL || !strcmp(tip, synced))
		goto out;
	q = xasprintf("%s/import", dir);
	if ((rc = quarantine(r, gitdir, q, tip)) < 0) {
		*cause = xasprintf("importing %s from its sandbox: %s", branch, strerror(-rc));
		goto out;
	}
	FAULT("import.quarantined");
	hidden = xasprintf("refs/workrex/import/%s", handle);
	char *spec = xasprintf("+refs/heads/import:%s", hidden);
	struct buf err = {0};
	int grc = repo_fetch_verified(r, q, spec, NULL, &err);
	free(spec);
	if (grc != 0) {
		/* Room, not the objects, failed: said as such (they are imported once there is). */
		bool room = err.data && strstr(err.data, strerror(ENOSPC));
		char *why =
			room ? xstrdup(strerror(ENOSPC)) : git_error_line(&err, "git fetch failed");
		*cause = room ? xasprintf("the sandbox's commits on %s were not imported: %s",
					  branch, why)
			      : xasprintf("the sandbox's commits on %s failed verification and "
					  "were not imported: %s",
					  branch, why);
		log_msg("import %s: refused: %s", handle, why);
		free(why);
		buf_free(&err);
		rc = -EIO;
		goto out;
	}
	buf_consume(&err, err.len);
	FAULT("import.fetched");
	/*
	 * Move the branch only from where the sandbox started: nothing of the
	 * host's is lost. Already at the tip: an import a kill cut short moved
	 * it; its last steps follow.
	 */
	const char *move[] = {"update-ref", "-m", "workrex: commits from the sandbox",
			      "--",         NULL, tip,
			      synced,       NULL};
	char *ref = xasprintf("refs/heads/%s", branch);
	char *now = repo_branch_tip(r, branch);
	bool moved = now && strcmp(now, tip) == 0;
	free(now);
	move[4] = ref;
	if (!moved && git_run(repo_root(r), move, NULL, &err, true) != 0) {
		*note = xasprintf("%s moved on the host while its sandbox committed too; the "
				  "sandbox's commits are kept as %s",
				  branch, hidden);
		free(ref);
		buf_free(&err);
		goto out;
	}
	free(ref);
	FAULT("import.moved");
	const char *drop[] = {"update-ref", "-d", "--", hidden, NULL};
	git_run(repo_root(r), drop, NULL, NULL, true);
	FAULT("import.dropped");
	/*
	 * The host's index for the worktree follows its HEAD; the files stay as
	 * they are. Before synced is written, which ends the import: a kill
	 * between leaves it to be done again.
	 */
	const char *reset[] = {"reset", "--quiet", NULL};
	git_run(worktree, reset, NULL, NULL, true);
	FAULT("import.reset");
	char *line = xasprintf("%s\n", tip);
	write_str(dir, "synced", line);
	free(line);
	buf_free(&err);
	log_msg("import %s: %s now at %s", handle, branch, tip);
out:
	if (q) {
		int objects = beneath_dir(q, "objects", false, 0);
		if (objects >= 0) {
			empty_objects(objects);
			close(objects);
		}
	}
	if (lock >= 0)
		close(lock); /* and the lock with it */
	free(q);
	free(hidden);
	free(tip);
	free(synced);
	free(gitdir);
	free(dir);
	return rc;
}

void private_forget(const struct repo *r, const char *handle)
{
	char *dir = agent_dir(r, handle, false);
	if (dir)
		beneath_remove_tree(dir);
	free(dir);
}
