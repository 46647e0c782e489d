/*
 * repo.c - libgit2 reads of the repository, and the git CLI runner.
 *
 * The repository is always opened at its main worktree, whichever worktree
 * the user stands in, so every command sees the same config and the same
 * list of agents.
 */
#include "git.h"

#include "../config/config.h"
#include "../util/beneath.h"
#include "../util/fault.h"
#include "../util/proc.h"

#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct repo {
	git_repository *git;
	git_config *cfg;     /* the repository's config, read live (config_live) */
	git_config *batch;   /* repo_config_begin: the local config, locked */
	git_transaction *tx; /* its lock: the writes go to the file at commit */
	int owner;           /* held with the lock: workrex-config.owner (owner_take), or -1 */
	char *root;          /* owned */
	char *name;          /* owned */
	char *gitdir;        /* owned */
};

static char *git_cause(const char *what)
{
	const git_error *e = git_error_last();
	return xasprintf("%s: %s", what, e && e->message ? e->message : "unknown libgit2 error");
}

static char *strip_slash(const char *p)
{
	char *s = xstrdup(p);
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

int repo_open(const char *dir, struct repo **out, char **cause)
{
	git_lib_init();
	git_buf found = {0};
	if (git_repository_discover(&found, dir, 0, NULL) < 0) {
		*cause = xasprintf("%s is not inside a git repository", dir);
		return -ENOENT;
	}
	git_repository *g = NULL;
	int rc = git_repository_open(&g, found.ptr);
	git_buf_dispose(&found);
	if (rc < 0) {
		*cause = git_cause("cannot open the repository");
		return -EIO;
	}
	if (git_repository_is_bare(g)) {
		git_repository_free(g);
		*cause = xstrdup("a bare repository has no worktree to work in");
		return -EINVAL;
	}
	/* From a linked worktree, go to the main one (each open reads the config again). */
	char *common = strip_slash(git_repository_commondir(g));
	char *here = strip_slash(git_repository_path(g));
	bool linked = strcmp(here, common) != 0;
	free(here);
	if (linked)
		git_repository_free(g);
	if (linked && git_repository_open(&g, common) < 0) {
		*cause = git_cause("cannot open the main repository");
		free(common);
		return -EIO;
	}
	struct repo *r = xcalloc(1, sizeof *r);
	r->git = g;
	r->gitdir = common;
	r->owner = -1;
	const char *wd = git_repository_workdir(g);
	r->root = strip_slash(wd ? wd : common);
	const char *slash = strrchr(r->root, '/');
	r->name = xstrdup(slash && slash[1] ? slash + 1 : r->root);
	*out = r;
	return 0;
}

void repo_free(struct repo *r)
{
	if (r == NULL)
		return;
	repo_config_commit(r); /* a batch left open is written, as its writes would have been */
	git_config_free(r->cfg);
	git_repository_free(r->git);
	free(r->root);
	free(r->name);
	free(r->gitdir);
	free(r);
}

const char *repo_root(const struct repo *r)
{
	return r->root;
}

const char *repo_name(const struct repo *r)
{
	return r->name;
}

const char *repo_gitdir(const struct repo *r)
{
	return r->gitdir;
}

char *repo_head_branch(const struct repo *r)
{
	git_reference *head = NULL;
	if (git_repository_head(&head, r->git) < 0) {
		/* An unborn branch still has a name. */
		git_reference *sym = NULL;
		char *name = NULL;
		if (git_reference_lookup(&sym, r->git, "HEAD") == 0 &&
		    git_reference_type(sym) == GIT_REFERENCE_SYMBOLIC) {
			const char *t = git_reference_symbolic_target(sym);
			if (strncmp(t, "refs/heads/", 11) == 0)
				name = xstrdup(t + 11);
		}
		git_reference_free(sym);
		return name;
	}
	char *name = NULL;
	if (git_reference_is_branch(head))
		name = xstrdup(git_reference_shorthand(head));
	git_reference_free(head);
	return name;
}

bool repo_branch_name_valid(const char *name)
{
	int valid = 0;
	return name && name[0] != '-' && git_branch_name_is_valid(&valid, name) == 0 && valid;
}

char *repo_branch_at(const struct repo *r, const char *dir)
{
	/* dir's worktree by its git dir: r's own, or one of its linked ones, read through r. */
	git_buf found = {0};
	char *gd =
		git_repository_discover(&found, dir, 0, NULL) == 0 ? strip_slash(found.ptr) : NULL;
	git_buf_dispose(&found);
	size_t n = strlen(r->gitdir);
	git_repository *g = NULL;
	git_reference *head = NULL;
	int rc;
	if (gd && strcmp(gd, r->gitdir) == 0)
		rc = git_repository_head(&head, r->git);
	else if (gd && strncmp(gd, r->gitdir, n) == 0 && strncmp(gd + n, "/worktrees/", 11) == 0)
		rc = git_repository_head_for_worktree(&head, r->git, gd + n + 11);
	else
		rc = git_repository_open_ext(&g, dir, 0, NULL) == 0 ? git_repository_head(&head, g)
								    : -1;
	free(gd);
	char *name = NULL;
	if (rc == 0 && git_reference_is_branch(head))
		name = xstrdup(git_reference_shorthand(head));
	git_reference_free(head);
	git_repository_free(g);
	return name;
}

bool repo_branch_exists(const struct repo *r, const char *branch)
{
	git_reference *ref = NULL;
	bool ok = git_branch_lookup(&ref, r->git, branch, GIT_BRANCH_LOCAL) == 0;
	git_reference_free(ref);
	return ok;
}

char *repo_superproject(const struct repo *r)
{
	const char *common = git_repository_commondir(r->git);
	const char *at = common ? strstr(common, "/.git/modules/") : NULL;
	return at ? xstrndup(common, (size_t)(at - common)) : NULL;
}

bool repo_remote_branch_exists(const struct repo *r, const char *name)
{
	git_reference *ref = NULL;
	bool ok = git_branch_lookup(&ref, r->git, name, GIT_BRANCH_REMOTE) == 0;
	git_reference_free(ref);
	return ok;
}

char *repo_main_branch(const struct repo *r, const char *configured)
{
	if (configured && *configured)
		return xstrdup(configured);
	git_reference *ref = NULL;
	if (git_reference_lookup(&ref, r->git, "refs/remotes/origin/HEAD") == 0 &&
	    git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
		const char *t = git_reference_symbolic_target(ref);
		const char *p = "refs/remotes/origin/";
		if (strncmp(t, p, strlen(p)) == 0 && repo_branch_exists(r, t + strlen(p))) {
			char *name = xstrdup(t + strlen(p));
			git_reference_free(ref);
			return name;
		}
	}
	git_reference_free(ref);
	if (repo_branch_exists(r, "main"))
		return xstrdup("main");
	if (repo_branch_exists(r, "master"))
		return xstrdup("master");
	return repo_head_branch(r);
}

static int branch_oid(const struct repo *r, const char *branch, git_oid *oid)
{
	/* A local branch by its ref: revparse would look for refs/X and a tag X first. */
	char *ref = xasprintf("refs/heads/%s", branch);
	int found = git_reference_name_to_id(oid, r->git, ref);
	free(ref);
	if (found == 0)
		return 0;
	git_object *obj = NULL;
	if (git_revparse_single(&obj, r->git, branch) < 0)
		return -1;
	git_object *commit = NULL;
	int rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0)
		return -1;
	git_oid_cpy(oid, git_object_id(commit));
	git_object_free(commit);
	return 0;
}

long repo_ahead(const struct repo *r, const char *branch, const char *into)
{
	git_oid a, b;
	size_t ahead = 0, behind = 0;
	if (branch_oid(r, branch, &a) < 0 || branch_oid(r, into, &b) < 0)
		return -1;
	if (git_graph_ahead_behind(&ahead, &behind, r->git, &a, &b) < 0)
		return -1;
	return (long)ahead;
}

int repo_diffstat(const struct repo *r, const char *branch, const char *into,
		  struct repo_diffstat *out)
{
	memset(out, 0, sizeof *out);
	git_oid a, b, base;
	if (branch_oid(r, branch, &a) < 0 || branch_oid(r, into, &b) < 0 ||
	    git_merge_base(&base, r->git, &a, &b) < 0)
		return -1;
	git_commit *ca = NULL, *cb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_diff_stats *st = NULL;
	int rc = -1;
	if (git_commit_lookup(&ca, r->git, &a) == 0 && git_commit_lookup(&cb, r->git, &base) == 0 &&
	    git_commit_tree(&ta, ca) == 0 && git_commit_tree(&tb, cb) == 0 &&
	    git_diff_tree_to_tree(&diff, r->git, tb, ta, NULL) == 0 &&
	    git_diff_get_stats(&st, diff) == 0) {
		out->files = (int)git_diff_stats_files_changed(st);
		out->added = (int)git_diff_stats_insertions(st);
		out->deleted = (int)git_diff_stats_deletions(st);
		size_t n = git_diff_num_deltas(diff);
		out->paths = xcalloc(n + 1, sizeof *out->paths);
		for (size_t i = 0; i < n; i++) {
			const git_diff_delta *d = git_diff_get_delta(diff, i);
			out->paths[out->npaths++] =
				xstrdup(d->new_file.path ? d->new_file.path : d->old_file.path);
		}
		rc = 0;
	}
	git_diff_stats_free(st);
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
	return rc;
}

void repo_diffstat_free(struct repo_diffstat *d)
{
	for (size_t i = 0; i < d->npaths; i++)
		free(d->paths[i]);
	free(d->paths);
	memset(d, 0, sizeof *d);
}

char *repo_branch_tip(const struct repo *r, const char *branch)
{
	char *ref = xasprintf("refs/heads/%s", branch);
	git_oid oid;
	int rc = git_reference_name_to_id(&oid, r->git, ref);
	free(ref);
	if (rc < 0)
		return NULL;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof hex, &oid);
	return xstrdup(hex);
}

bool repo_has_object(const struct repo *r, const char *hex)
{
	git_oid oid;
	git_odb *odb = NULL;
	if (git_oid_fromstr(&oid, hex) < 0 || git_repository_odb(&odb, r->git) < 0)
		return false;
	/* No refresh on a miss: a miss is the common answer here (new objects). */
	bool has = git_odb_exists_ext(odb, &oid, GIT_ODB_LOOKUP_NO_REFRESH) == 1;
	git_odb_free(odb);
	return has;
}

static int add_packed(git_reference *ref, void *arg)
{
	void **a = arg;
	struct buf *b = a[0];
	const char *skip = a[1], *name = git_reference_name(ref);
	if (git_reference_type(ref) == GIT_REFERENCE_DIRECT && strcmp(name, skip) != 0 &&
	    (!strncmp(name, "refs/heads/", 11) || !strncmp(name, "refs/tags/", 10))) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof hex, git_reference_target(ref));
		buf_addf(b, "%s %s\n", hex, name);
	}
	git_reference_free(ref);
	return 0;
}

char *repo_packed_refs(const struct repo *r, const char *skip_branch)
{
	struct buf b = {0};
	char *skip = xasprintf("refs/heads/%s", skip_branch);
	void *arg[] = {&b, skip};
	git_reference_foreach(r->git, add_packed, arg);
	free(skip);
	return b.data ? b.data : xstrdup("");
}

static int status_list(const char *path, git_status_list **list, bool untracked, char **cause)
{
	git_repository *g = NULL;
	if (git_repository_open(&g, path) < 0) {
		*cause = git_cause(path);
		return -EIO;
	}
	git_status_options o;
	git_status_options_init(&o, GIT_STATUS_OPTIONS_VERSION);
	o.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	o.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (untracked)
		o.flags |= GIT_STATUS_OPT_INCLUDE_UNTRACKED;
	int rc = git_status_list_new(list, g, &o);
	if (rc < 0)
		*cause = git_cause(path);
	/* The list keeps the repository alive. */
	git_repository_free(g);
	return rc < 0 ? -EIO : 0;
}

/* An untracked path that one of the globs put there (a directory as "dir/"). */
static bool placed_here(const git_status_entry *e, const char *p, const struct strlist *placed)
{
	if (placed == NULL || e->status != GIT_STATUS_WT_NEW)
		return false;
	char *q = xstrdup(p);
	size_t n = strlen(q);
	if (n > 1 && q[n - 1] == '/')
		q[n - 1] = '\0';
	bool hit = false;
	for (size_t i = 0; i < placed->n && !hit; i++)
		hit = fnmatch(placed->v[i], q, FNM_PATHNAME | FNM_PERIOD) == 0;
	free(q);
	return hit;
}

int repo_dirty(const char *path, const struct strlist *placed, bool *dirty, char **cause)
{
	git_status_list *list = NULL;
	int rc = status_list(path, &list, true, cause);
	if (rc < 0)
		return rc;
	*dirty = false;
	size_t n = git_status_list_entrycount(list);
	for (size_t i = 0; i < n && !*dirty; i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		const char *p = e->index_to_workdir ? e->index_to_workdir->new_file.path
				: e->head_to_index  ? e->head_to_index->new_file.path
						    : "";
		/* workrex's own files in the worktree are not the user's work. */
		if (strncmp(p, ".workrex/", 9) == 0 || placed_here(e, p, placed))
			continue;
		*dirty = e->status != GIT_STATUS_CURRENT && e->status != GIT_STATUS_IGNORED;
	}
	git_status_list_free(list);
	return 0;
}

int repo_changed_files(const char *path, char ***files, size_t *n, char **cause)
{
	git_status_list *list = NULL;
	int rc = status_list(path, &list, false, cause);
	if (rc < 0)
		return rc;
	size_t cnt = git_status_list_entrycount(list);
	*files = xcalloc(cnt + 1, sizeof **files);
	*n = 0;
	for (size_t i = 0; i < cnt; i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		const git_diff_delta *d =
			e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
		if (d && e->status != GIT_STATUS_CURRENT)
			(*files)[(*n)++] = xstrdup(d->new_file.path);
	}
	git_status_list_free(list);
	return 0;
}

static void add_wt(struct worktree_info **out, size_t *n, const char *path, git_repository *g,
		   bool main)
{
	*out = xrealloc(*out, (*n + 1) * sizeof **out);
	struct worktree_info *w = &(*out)[(*n)++];
	w->path = strip_slash(path);
	w->main = main;
	w->missing = false;
	w->branch = NULL;
	git_reference *head = NULL;
	if (git_repository_head(&head, g) == 0) {
		if (git_reference_is_branch(head))
			w->branch = xstrdup(git_reference_shorthand(head));
		git_reference_free(head);
	} else {
		git_reference *sym = NULL;
		if (git_reference_lookup(&sym, g, "HEAD") == 0 &&
		    git_reference_type(sym) == GIT_REFERENCE_SYMBOLIC &&
		    strncmp(git_reference_symbolic_target(sym), "refs/heads/", 11) == 0)
			w->branch = xstrdup(git_reference_symbolic_target(sym) + 11);
		git_reference_free(sym);
	}
}

/*
 * A linked worktree's branch, read from the HEAD in its admin directory:
 * opening it as a repository would read the whole config again for each
 * worktree, and that config holds every agent's records (100 agents: 100
 * parses of 100 agents' keys). Detached: no branch.
 */
static void add_linked(struct worktree_info **out, size_t *n, const struct repo *r,
		       const char *name, const char *path)
{
	*out = xrealloc(*out, (*n + 1) * sizeof **out);
	struct worktree_info *w = &(*out)[(*n)++];
	w->path = strip_slash(path);
	w->main = false;
	w->missing = false;
	w->branch = NULL;
	char *head = xasprintf("%s/worktrees/%s/HEAD", git_repository_commondir(r->git), name);
	char *text = NULL, *cause = NULL;
	if (file_read(head, 4096, &text, &cause) == 0 &&
	    strncmp(text, "ref: refs/heads/", 16) == 0) {
		text[strcspn(text, "\r\n")] = '\0';
		w->branch = xstrdup(text + 16);
	}
	free(cause);
	free(text);
	free(head);
}

int repo_worktrees(const struct repo *r, struct worktree_info **out, size_t *n, char **cause)
{
	*out = NULL;
	*n = 0;
	add_wt(out, n, r->root, r->git, true);
	git_strarray names = {0};
	if (git_worktree_list(&names, r->git) < 0) {
		*cause = git_cause("listing worktrees");
		return -EIO;
	}
	for (size_t i = 0; i < names.count; i++) {
		git_worktree *wt = NULL;
		if (git_worktree_lookup(&wt, r->git, names.strings[i]) < 0)
			continue;
		struct stat st;
		const char *path = git_worktree_path(wt);
		/* Deleted by hand: still git's, and an agent's, until removed (libgit2's
		 * validate looks at git's admin files, not at the directory). */
		bool gone = path && lstat(path, &st) < 0 && errno == ENOENT;
		if (gone || git_worktree_validate(wt) == 0) {
			add_linked(out, n, r, names.strings[i], path);
			(*out)[*n - 1].missing = gone;
		}
		git_worktree_free(wt);
	}
	git_strarray_dispose(&names);
	return 0;
}

int repo_worktree(const struct repo *r, const char *name, struct worktree_info **out, char **cause)
{
	size_t n = 0;
	*out = NULL;
	git_worktree *wt = NULL;
	if (git_worktree_lookup(&wt, r->git, name) < 0) {
		*cause = xasprintf("no worktree '%s'", name);
		return -ENOENT;
	}
	struct stat st;
	const char *path = git_worktree_path(wt);
	bool gone = path && lstat(path, &st) < 0 && errno == ENOENT;
	if (gone || git_worktree_validate(wt) == 0) {
		add_linked(out, &n, r, name, path);
		(*out)->missing = gone;
	}
	git_worktree_free(wt);
	if (n == 0) {
		*cause = xasprintf("worktree '%s' is not valid", name);
		return -ENOENT;
	}
	return 0;
}

void worktree_info_free(struct worktree_info *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(w[i].path);
		free(w[i].branch);
	}
	free(w);
}

/* Is key set to true in the repository's config (as git reads it)? */
static bool config_true(const struct repo *r, const char *key)
{
	char *v = repo_config_get(r, key);
	int b = 0;
	bool on = v && git_config_parse_bool(&b, v) == 0 && b;
	free(v);
	return on;
}

/*
 * Where `git worktree add` does more than make the worktree's files and
 * check it out: a post-checkout hook to run, config or sparse patterns it
 * copies to the new worktree, an upstream it sets on a new branch, or a name
 * of the administrative directory it would change.
 */
static bool git_would_do_more(const struct repo *r, const char *name, const char *base,
			      bool new_branch)
{
	char *v = repo_config_get(r, "core.hooksPath");
	bool more = v != NULL;
	free(v);
	if (!more) {
		char *hook = xasprintf("%s/hooks/post-checkout", r->gitdir);
		char *admin = xasprintf("%s/worktrees/%s", r->gitdir, name);
		more = access(hook, F_OK) == 0 || access(admin, F_OK) == 0;
		free(hook);
		free(admin);
	}
	if (more || config_true(r, "extensions.worktreeConfig") ||
	    config_true(r, "core.sparseCheckout"))
		return true;
	if (!new_branch)
		return false;
	char *setup = repo_config_get(r, "branch.autoSetupMerge");
	more = setup && strcmp(setup, "true") != 0 && strcmp(setup, "false") != 0;
	free(setup);
	git_reference *remote = NULL;
	if (!more && (strncmp(base, "refs/remotes/", 13) == 0 ||
		      git_branch_lookup(&remote, r->git, base, GIT_BRANCH_REMOTE) == 0))
		more = true;
	git_reference_free(remote);
	return more;
}

static int write_new(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	FAULT("add.admin-file"); /* made, still empty: WORKREX_FAULT_SKIP=N for the N+1st */
	size_t n = strlen(text);
	int rc = write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Where an administrative directory is built before it is renamed into place. */
static char *admin_new(const struct repo *r, const char *name)
{
	return xasprintf("%s/workrex-new/%s", r->gitdir, name);
}

/*
 * A linked worktree's administrative files, as `git worktree add` leaves
 * them (gitrepository-layout(5)): <git>/worktrees/<name>/ with gitdir,
 * commondir and HEAD, and <path>/.git pointing there.
 *
 * git reads every entry of <git>/worktrees on each `git worktree list`,
 * and an entry with an empty commondir is fatal to it ("failed to read
 * .../commondir"), in the user's repository, until someone mends it by
 * hand. So the entry is built whole under <git>/workrex-new/<name>, which
 * git never reads, and renamed into place last, with RENAME_NOREPLACE, so
 * that a name git or another add took meanwhile is refused, not replaced.
 * A kill at any byte leaves no entry or a whole one; what it leaves beside
 * (the new directory, <path>) is taken away by the add's undo
 * (repo_worktree_mend). On a failure here, likewise at once.
 */
static int write_admin(const struct repo *r, const char *name, const char *path, const char *branch)
{
	char *root = xasprintf("%s/workrex-new", r->gitdir), *tmp = admin_new(r, name);
	char *admin = xasprintf("%s/worktrees/%s", r->gitdir, name);
	char *wts = xasprintf("%s/worktrees", r->gitdir);
	char *f[4] = {xasprintf("%s/gitdir", tmp), xasprintf("%s/commondir", tmp),
		      xasprintf("%s/HEAD", tmp), xasprintf("%s/.git", path)};
	char *text[4] = {xasprintf("%s/.git\n", path), xstrdup("../..\n"),
			 xasprintf("ref: refs/heads/%s\n", branch),
			 xasprintf("gitdir: %s\n", admin)};
	char *parent = xstrdup(path);
	*strrchr(parent, '/') = '\0';
	mkdir(root, 0755);
	mkdir(wts, 0755);
	/* (A killed add's of this name went with its undo: repo_worktree_mend.) */
	int rc = access(admin, F_OK) == 0 ? -EEXIST : mkdir(tmp, 0755) < 0 ? -errno : 0;
	bool made_tmp = rc == 0;
	if (rc == 0 && (rc = mkdir_p(parent, 0755)) == 0)
		rc = mkdir(path, 0755) < 0 ? -errno : 0;
	bool made_dir = made_tmp && rc == 0;
	for (int i = 0; i < 4 && rc == 0; i++)
		rc = write_new(f[i], text[i]);
	if (rc == 0 && renameat2(AT_FDCWD, tmp, AT_FDCWD, admin, RENAME_NOREPLACE) < 0)
		rc = -errno;
	if (rc < 0) {
		/* Only what was made just now. */
		if (made_tmp)
			beneath_remove_tree(tmp);
		if (made_dir) {
			unlink(f[3]);
			rmdir(path);
		}
	}
	for (int i = 0; i < 4; i++) {
		free(f[i]);
		free(text[i]);
	}
	free(parent);
	free(wts);
	free(admin);
	free(tmp);
	free(root);
	return rc;
}

/* Whether dir/file is there with something in it. */
static bool has_text(const char *dir, const char *file)
{
	char *p = xasprintf("%s/%s", dir, file);
	struct stat st;
	bool has = stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	free(p);
	return has;
}

void repo_worktree_mend(const struct repo *r, const char *name)
{
	char *tmp = admin_new(r, name);
	beneath_remove_tree(tmp);
	/* An older build wrote the entry in place: one file missing or empty
	 * (killed between its create and its write) is not whole. */
	char *admin = xasprintf("%s/worktrees/%s", r->gitdir, name);
	struct stat st;
	if (lstat(admin, &st) == 0 && S_ISDIR(st.st_mode) &&
	    !(has_text(admin, "gitdir") && has_text(admin, "commondir") && has_text(admin, "HEAD")))
		beneath_remove_tree(admin);
	free(admin);
	free(tmp);
}

int repo_worktree_prepare(const struct repo *r, const char *name, const char *path,
			  const char *branch, const char *base, bool *made_branch)
{
	*made_branch = false;
	git_reference *ref = NULL;
	bool exists = git_branch_lookup(&ref, r->git, branch, GIT_BRANCH_LOCAL) == 0;
	if (git_would_do_more(r, name, base, !exists) ||
	    (exists && git_branch_is_checked_out(ref) != 0)) {
		git_reference_free(ref);
		return -EAGAIN;
	}
	if (!exists) {
		/* Annotated by base's name: the reflog says "Created from main", as git's. */
		git_annotated_commit *from = NULL;
		int rc = git_annotated_commit_from_revspec(&from, r->git, base);
		if (rc == 0)
			rc = git_branch_create_from_annotated(&ref, r->git, branch, from, 0);
		git_annotated_commit_free(from);
		if (rc < 0)
			return -EAGAIN; /* git says what is wrong with base or branch */
		*made_branch = true;
	}
	int rc = write_admin(r, name, path, branch);
	if (rc < 0 && *made_branch) {
		git_reference_delete(ref);
		*made_branch = false;
	}
	git_reference_free(ref);
	return rc < 0 ? -EAGAIN : 0;
}

void repo_worktree_discard(const struct repo *r, const char *name, const char *branch)
{
	git_worktree *wt = NULL;
	if (git_worktree_lookup(&wt, r->git, name) == 0) {
		git_worktree_prune_options o;
		git_worktree_prune_options_init(&o, GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
		o.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE;
		git_worktree_prune(wt, &o);
		git_worktree_free(wt);
	}
	/* Only the ref and its log: a branch made just now has no config section
	 * (and git_branch_delete leaks in libgit2 1.5's config regex search). */
	git_reference *ref = NULL;
	if (branch && git_branch_lookup(&ref, r->git, branch, GIT_BRANCH_LOCAL) == 0)
		git_reference_delete(ref);
	git_reference_free(ref);
}

/*
 * Read live, not from a snapshot: a read stats the file and parses it
 * again only when it changed, where a snapshot copies every entry, and a
 * project of 100 agents has 600 of them (their records), taken again
 * after every write.
 */
static git_config *config_live(const struct repo *r)
{
	struct repo *m = (struct repo *)r; /* the repository's, kept */
	if (m->cfg == NULL && git_repository_config(&m->cfg, r->git) < 0)
		m->cfg = NULL;
	return m->cfg;
}

char *repo_config_get(const struct repo *r, const char *key)
{
	git_config *cfg = config_live(r);
	git_config_entry *e = NULL;
	if (cfg == NULL || git_config_get_entry(&e, cfg, key) < 0)
		return NULL;
	char *v = e->value ? xstrdup(e->value) : NULL;
	git_config_entry_free(e);
	return v;
}

/*
 * An iterator, not git_config_foreach_match: libgit2 1.5 leaks the regex's
 * match data (20 KB) on every call of that one.
 */
int repo_config_names(const struct repo *r, const char *prefix, const char *suffix,
		      struct strlist *out)
{
	git_config *cfg = config_live(r);
	git_config_iterator *it = NULL;
	if (cfg == NULL || git_config_iterator_new(&it, cfg) < 0)
		return -EIO;
	git_config_entry *e;
	size_t np = strlen(prefix), ns = strlen(suffix);
	while (git_config_next(&e, it) == 0) {
		size_t n = strlen(e->name);
		if (n > np + ns && strncmp(e->name, prefix, np) == 0 &&
		    strcmp(e->name + n - ns, suffix) == 0)
			strlist_add(out, e->name);
	}
	git_config_iterator_free(it);
	return 0;
}

/* Writes go to the repository's own file, never the user's global one. */
static git_config *local_config(const struct repo *r)
{
	git_config *cfg = config_live(r), *local = NULL;
	if (cfg == NULL || git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL) < 0)
		return NULL;
	return local;
}

/*
 * libgit2 looks up a key to delete (or a value already set) in what it
 * last read of the file, and writes under a lock do not update that: a
 * read reloads it when the file changed (after git, or a commit below).
 */
static void reread(git_config *local)
{
	git_config_entry *e = NULL;
	if (git_config_get_entry(&e, local, "core.bare") == 0)
		git_config_entry_free(e);
}

/*
 * git's config.lock, once made, is only ever removed by the write that made
 * it: a workrex killed between the two leaves it, and every later config
 * write (ours, git's) fails on it for good. So a write of ours holds a
 * lock of its own (workrex-config.owner, flock, which a kill lets go)
 * while it holds config.lock, and notes in that file which config.lock it
 * made (device and inode). A later write that can take the owner lock and
 * finds that very config.lock still there knows it for one a killed
 * workrex left: it removes it, and says so. One git made is never touched.
 */
static int owner_open(const struct repo *r)
{
	char *path = xasprintf("%s/workrex-config.owner", r->gitdir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(path);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static char *config_lock_path(const struct repo *r)
{
	return xasprintf("%s/config.lock", r->gitdir);
}

static void owner_note(const struct repo *r, int fd)
{
	char *lock = config_lock_path(r);
	struct stat st;
	char note[64];
	int n = stat(lock, &st) == 0 ? snprintf(note, sizeof note, "%lu %lu\n",
						(unsigned long)st.st_dev, (unsigned long)st.st_ino)
				     : 0;
	/* Unnoted, a kill now leaves a lock for the user to remove, as git's does. */
	if (ftruncate(fd, 0) == 0 && n > 0 && pwrite(fd, note, (size_t)n, 0) != n) {
		int t = ftruncate(fd, 0);
		(void)t;
	}
	free(lock);
}

/* With the owner lock held: a config.lock a killed workrex left goes (true). */
static bool owner_mend(const struct repo *r, int fd)
{
	char note[64] = {0};
	char *lock = config_lock_path(r);
	struct stat st;
	unsigned long dev, ino;
	bool left = pread(fd, note, sizeof note - 1, 0) > 0 &&
		    sscanf(note, "%lu %lu", &dev, &ino) == 2 && stat(lock, &st) == 0 &&
		    (unsigned long)st.st_dev == dev && (unsigned long)st.st_ino == ino;
	if (left && unlink(lock) == 0) {
		fprintf(stderr,
			"workrex: %s was left by a workrex killed while it wrote the config; "
			"removed\n",
			lock);
		if (ftruncate(fd, 0) < 0)
			left = false;
	}
	free(lock);
	return left;
}

int repo_git_config(const struct repo *r, const char *const *argv, struct buf *err)
{
	int fd = -1;
	for (int i = 0; r->batch == NULL && i < 500 && (fd = owner_open(r)) < 0; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (fd >= 0)
		owner_mend(r, fd);
	int rc = git_run(repo_root(r), argv, NULL, err, true);
	if (fd >= 0)
		close(fd);
	return rc;
}

void repo_config_mend(const struct repo *r)
{
	int fd = owner_open(r);
	if (fd >= 0) {
		owner_mend(r, fd);
		close(fd);
	}
}

int repo_config_begin(const struct repo *r)
{
	struct repo *m = (struct repo *)r;
	if (m->batch)
		return 0;
	m->batch = local_config(r);
	/*
	 * Another workrex or git may hold the lock (config.lock) for a moment:
	 * twelve adds at once did, and a write that gave up lost its record.
	 * Waited for, up to 5 s, as git waits for a ref's lock. The reread
	 * after it has the lock sees every record written before.
	 */
	if (m->batch)
		reread(m->batch);
	bool unowned = access(r->gitdir, W_OK) < 0; /* git's lock fails too, and says so */
	for (int i = 0; m->batch && i < 500; i++) {
		int owner = unowned ? -1 : owner_open(r);
		if (owner >= 0 || unowned) {
			if (git_config_lock(&m->tx, m->batch) == 0) {
				if (owner >= 0)
					owner_note(r, owner);
				m->owner = owner;
				reread(m->batch);
				return 0;
			}
			bool mended = owner >= 0 && owner_mend(r, owner);
			if (owner >= 0)
				close(owner);
			if (mended)
				continue;
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	git_config_free(m->batch);
	m->batch = NULL;
	return -EIO;
}

int repo_config_commit(const struct repo *r)
{
	struct repo *m = (struct repo *)r;
	if (m->batch == NULL)
		return 0;
	/*
	 * A test build's failed write (as on a full disk) lets the lock go
	 * uncommitted; libgit2 (1.5) frees the batch with it then.
	 */
	bool unwritten = FAULT_WRITE("write") < 0;
	if (unwritten)
		git_error_set_str(GIT_ERROR_OS, strerror(ENOSPC));
	int rc = unwritten || git_transaction_commit(m->tx) < 0 ? -EIO : 0;
	git_transaction_free(m->tx);
	if (m->owner >= 0) {
		/* Cleared; a note left (it cannot fail here) names an inode gone with the lock. */
		int t = ftruncate(m->owner, 0);
		(void)t;
		close(m->owner);
		m->owner = -1;
	}
	if (unwritten) {
		m->tx = NULL;
		m->batch = NULL;
		return rc;
	}
	reread(m->batch);
	git_config_free(m->batch);
	m->tx = NULL;
	m->batch = NULL;
	return rc;
}

char *repo_config_why(void)
{
	const git_error *e = git_error_last();
	return xstrdup(e && e->message ? e->message : "unknown libgit2 error");
}

/* Every write in a batch (repo_config_begin): one alone is a batch of one. */
int repo_config_set(const struct repo *r, const char *key, const char *value)
{
	bool own = r->batch == NULL;
	if (own && repo_config_begin(r) < 0)
		return -EIO;
	int rc = git_config_set_string(r->batch, key, value);
	if (own && repo_config_commit(r) < 0)
		rc = -1;
	return rc < 0 ? -EIO : 0;
}

int repo_config_unset(const struct repo *r, const char *key)
{
	bool own = r->batch == NULL;
	if (own && repo_config_begin(r) < 0)
		return -EIO;
	int rc = git_config_delete_entry(r->batch, key);
	if (own && repo_config_commit(r) < 0)
		rc = -1;
	return rc < 0 && rc != GIT_ENOTFOUND ? -EIO : 0;
}

int git_run(const char *dir, const char *const *argv, struct buf *out, struct buf *err,
	    bool no_hooks)
{
	return git_run_env(dir, argv, NULL, out, err, no_hooks);
}

int git_run_env(const char *dir, const char *const *argv, char *const *env, struct buf *out,
		struct buf *err, bool no_hooks)
{
	size_t n = 0;
	while (argv[n])
		n++;
	const char **av = xcalloc(n + 6, sizeof *av);
	size_t k = 0;
	av[k++] = "git";
	if (no_hooks) {
		av[k++] = "-c";
		av[k++] = "core.hooksPath=/dev/null";
	}
	for (size_t i = 0; i < n; i++)
		av[k++] = argv[i];
	size_t ne = 0;
	while (env && env[ne])
		ne++;
	char **all = xcalloc(ne + 2, sizeof *all);
	all[0] = "GIT_TERMINAL_PROMPT=0";
	if (ne)
		memcpy(all + 1, env, ne * sizeof *all);
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.dir = dir;
	o.env = all;
	int status = proc_capture((char *const *)av, &o, NULL, 0, out, err, 0);
	free(av);
	free(all);
	return status < 0 ? -1 : status;
}

int repo_fetch_verified(const struct repo *r, const char *from, const char *refspec,
			char *const *env, struct buf *err)
{
	const char *fetch[] = {"-c",
			       "transfer.fsckObjects=true",
			       "-c",
			       "fetch.fsckObjects=true",
			       "-c",
			       "fetch.writeCommitGraph=false",
			       "-c",
			       "maintenance.auto=false",
			       "fetch",
			       "--no-tags",
			       "--no-write-fetch-head",
			       "--quiet",
			       "--",
			       from,
			       refspec,
			       NULL};
	return git_run_env(repo_root(r), fetch, env, NULL, err, true);
}

char *git_rev(const char *dir, const char *what)
{
	struct buf out = {0};
	const char *argv[] = {"rev-parse", "--verify", "--quiet", what, NULL};
	if (git_run(dir, argv, &out, NULL, true) != 0 || out.data == NULL) {
		buf_free(&out);
		return NULL;
	}
	out.data[strcspn(out.data, "\n")] = '\0';
	return out.data;
}

char *git_error_line(struct buf *err, const char *fallback)
{
	while (err->len > 0 && (err->data[err->len - 1] == '\n' || err->data[err->len - 1] == ' '))
		err->data[--err->len] = '\0';
	if (err->len == 0)
		return xstrdup(fallback);
	char *nl = strrchr(err->data, '\n');
	char *line = nl ? nl + 1 : err->data;
	if (!strncmp(line, "fatal: ", 7) || !strncmp(line, "error: ", 7))
		line += 7;
	return xstrdup(line);
}
