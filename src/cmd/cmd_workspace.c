/*
 * cmd_workspace.c - one agent, several repositories (add --repos; SPEC
 * §14). The agent is this project's. Each other repository gets an agent
 * of the same handle and branch of its own: its worktree and record, made
 * and removed as any agent's there, each kill-safe by that repository's
 * own intents. The agent's home, beside its worktree, holds a link to
 * each worktree by its repository's name; its panes start there.
 *
 * Its merge previews every repository first (uncommitted work, a conflict
 * with that repository's main branch): with anything in the way nothing is
 * merged. Then the others land, this one last. Git cannot take back a
 * merge that landed, so one that fails after another landed says which
 * landed and how to finish (the same merge again: the landed ones are gone
 * and skipped). remove removes them all.
 */
#include "cmd.h"

#include "../util/fault.h"
#include "../util/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One of the agent's other repositories, opened: its config and its agent there. */
struct other {
	char *name, *root;
	struct repo *r;
	struct config cfg;
	struct agent_rec a;
	bool found; /* its agent there (a) */
	bool made;  /* ...made by this add (the others an add a kill cut short left: kept) */
};

/* name's path: the workspace file's entry named so, else the sibling directory. */
static char *named_path(const char *dir, const struct strlist *listed, bool have_file,
			const char *name)
{
	if (!have_file)
		return xasprintf("%s/%s", dir, name);
	for (size_t i = 0; i < listed->n; i++) {
		const char *l = listed->v[i], *base = strrchr(l, '/');
		base = base ? base + 1 : l;
		if (strcmp(base, name) == 0)
			return l[0] == '/' ? xstrdup(l) : xasprintf("%s/%s", dir, l);
	}
	return NULL;
}

/* The global config's workspace that holds the project at self, or NULL. */
static const struct workspace_def *global_workspace(const struct config *c, const char *self)
{
	for (size_t i = 0; i < c->nworkspaces; i++)
		for (size_t k = 0; k < c->workspaces[i].repos.n; k++) {
			char real[PATH_MAX];
			if (realpath(c->workspaces[i].repos.v[k], real) && !strcmp(real, self))
				return &c->workspaces[i];
		}
	return NULL;
}

/*
 * --repos LIST: the repositories it names besides this project, as
 * "name=root\n"... into *out; from .workrex-workspace.yaml beside the
 * project when there is one, else from the global config's workspace
 * that holds it, else the project's sibling directories. 0, or 1 (said).
 */
static int resolve(struct cmd_ctx *ctx, const char *list, char **out)
{
	char *dir = path_parent(repo_root(ctx->repo)), *cause = NULL;
	char *file = xasprintf("%s/.workrex-workspace.yaml", dir);
	struct strlist listed = {0};
	char self[PATH_MAX];
	if (realpath(repo_root(ctx->repo), self) == NULL)
		snprintf(self, sizeof self, "%s", repo_root(ctx->repo));
	bool have_file = access(file, F_OK) == 0;
	int rc = have_file && config_workspace_repos(file, &listed, &cause) < 0
			 ? cmd_fail("add", "%s", cause)
			 : 0;
	const struct workspace_def *ws = have_file ? NULL : global_workspace(&ctx->cfg, self);
	if (ws) {
		for (size_t i = 0; i < ws->repos.n; i++)
			strlist_add(&listed, ws->repos.v[i]);
		free(file);
		file = xasprintf("the workspace %s (workspaces: in the global config)", ws->name);
		have_file = true;
	}
	struct buf b = {0};
	char *names = xstrdup(list), *save = NULL;
	for (char *n = strtok_r(names, ",", &save); n && rc == 0; n = strtok_r(NULL, ",", &save)) {
		char *path = named_path(dir, &listed, have_file, n), real[PATH_MAX];
		struct repo *r = NULL;
		if (path == NULL || strchr(n, '/') || strchr(n, '=')) {
			rc = cmd_fail("add", "--repos: no repository '%s' in %s", n, file);
		} else if (realpath(path, real) == NULL) {
			rc = cmd_fail("add", "--repos: %s: %s", path, strerror(errno));
		} else if (strcmp(real, self) != 0) {
			if (repo_open(real, &r, &cause) < 0 || strcmp(repo_root(r), real) != 0)
				rc = cmd_fail("add",
					      "--repos: %s is not a repository's top directory",
					      real);
			else if (strstr(b.data ? b.data : "", real) == NULL)
				buf_addf(&b, "%s=%s\n", n, real);
			repo_free(r);
		}
		free(cause);
		cause = NULL;
		free(path);
	}
	if (rc == 0 && b.data == NULL)
		rc = cmd_fail("add", "--repos names no repository but this one");
	free(names);
	strlist_free(&listed);
	free(file);
	free(dir);
	*out = rc ? NULL : b.data;
	if (rc)
		buf_free(&b);
	return rc;
}

/* The repositories of repos ("name=root\n"...), opened, their agent handle found. */
static size_t others_open(const char *repos, const char *handle, struct other **out)
{
	size_t n = 0;
	*out = NULL;
	char *text = xstrdup(repos ? repos : ""), *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '='), *cause = NULL;
		if (eq == NULL)
			continue;
		*out = xrealloc(*out, (n + 1) * sizeof **out);
		struct other *o = &(*out)[n++];
		*o = (struct other){.name = xstrndup(l, (size_t)(eq - l)), .root = xstrdup(eq + 1)};
		config_init(&o->cfg);
		if (repo_open(o->root, &o->r, &cause) == 0) {
			free(cause);
			cause = NULL;
			if (config_load_all(&o->cfg, config_search_dir(o->root, repo_root(o->r)),
					    NULL, &cause) < 0) {
				config_free(&o->cfg);
				config_init(&o->cfg);
			}
			o->found = handle && agent_find(o->r, handle, NULL, &o->a, &cause) == 0;
		}
		free(cause);
	}
	free(text);
	return n;
}

static void others_free(struct other *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(o[i].name);
		free(o[i].root);
		if (o[i].found)
			agent_rec_free(&o[i].a);
		config_free(&o[i].cfg);
		repo_free(o[i].r);
	}
	free(o);
}

/* The agent's home, its links and then itself; nothing but links is touched. */
static void home_drop(const char *home, const char *repos, const char *self)
{
	if (home == NULL)
		return;
	char *link = xasprintf("%s/%s", home, self);
	struct stat st;
	if (lstat(link, &st) == 0 && S_ISLNK(st.st_mode))
		unlink(link);
	free(link);
	char *text = xstrdup(repos ? repos : ""), *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		link = xasprintf("%s/%.*s", home, (int)strcspn(l, "="), l);
		if (lstat(link, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(link);
		free(link);
	}
	free(text);
	rmdir(home);
}

/* Does dir hold links only (a home a killed add left)? Its links then go. */
static bool home_left(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool links = d != NULL;
	while (d && links && (e = readdir(d)))
		links = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || e->d_type == DT_LNK;
	if (d)
		closedir(d);
	for (d = links ? opendir(dir) : NULL; d && (e = readdir(d));)
		if (e->d_type == DT_LNK) {
			char *p = xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
	if (d)
		closedir(d);
	return links;
}

/* Each other repository's agent this add made, taken away again: it did not finish. */
static void others_undo(struct other *os, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!os[i].made)
			continue;
		struct remove_opts ro = {.force = true};
		char *cause = NULL;
		if (worktree_remove(os[i].r, &os[i].cfg, &os[i].a, &ro, &cause) < 0)
			fprintf(stderr, "workrex: add: %s: its agent there stays: %s\n", os[i].name,
				cause);
		free(cause);
	}
}

int cmd_workspace_add(struct cmd_ctx *ctx, struct add_opts *o, const char *list, char **home,
		      char **repos)
{
	*home = *repos = NULL;
	if (o->sandbox == 1 || (o->sandbox == -1 && ctx->cfg.sandbox.enabled))
		return cmd_fail("add", "--repos: an agent of several repositories runs here, "
				       "not in a sandbox (yet): add --no-sandbox");
	char *handle = o->handle ? xstrdup(o->handle) : handle_from_branch(o->branch);
	char *cause = NULL, *dir = worktree_dir(ctx->repo, &ctx->cfg, &cause);
	struct agent_rec here;
	if (handle && agent_find(ctx->repo, handle, NULL, &here, &cause) == 0) {
		agent_rec_free(&here);
		free(dir);
		int rc = cmd_fail("add", "an agent '%s' exists already", handle);
		free(handle);
		return rc;
	}
	free(cause);
	cause = NULL;
	int rc = handle && dir ? resolve(ctx, list, repos)
			       : cmd_fail("add", "%s", cause ? cause : "no handle");
	char *h = rc == 0 ? xasprintf("%s/%s.repos", dir, handle) : NULL;
	struct stat st;
	bool made = false;
	/* One a killed add left (links only, no agent here): made again. */
	if (rc == 0 && lstat(h, &st) == 0 && !home_left(h))
		rc = cmd_fail("add", "%s exists already", h);
	else if (rc == 0 && mkdir_p(h, 0755) < 0)
		rc = cmd_fail("add", "%s: %s", h, strerror(errno));
	else
		made = rc == 0;
	struct other *os = NULL;
	size_t n = rc == 0 ? others_open(*repos, NULL, &os) : 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct add_opts o2 = {.branch = o->branch, .handle = handle, .cwd = os[i].root};
		o2.sandbox = 0;
		/* Its agent there, on this branch, made by an add a kill cut short: taken. */
		if (os[i].r && agent_find(os[i].r, handle, NULL, &os[i].a, &cause) == 0) {
			os[i].found = os[i].a.branch && !strcmp(os[i].a.branch, o->branch);
			if (!os[i].found) {
				rc = cmd_fail("add",
					      "--repos: %s has an agent '%s' of another branch",
					      os[i].name, handle);
				agent_rec_free(&os[i].a);
				break;
			}
		} else if (os[i].r == NULL ||
			   worktree_add(os[i].r, &os[i].cfg, &o2, &os[i].a, &cause) < 0) {
			rc = cmd_fail("add", "--repos: %s: %s", os[i].name,
				      cause ? cause : "not a repository");
			break;
		} else {
			os[i].found = os[i].made = true;
		}
		free(cause);
		cause = NULL;
		char *link = xasprintf("%s/%s", h, os[i].name);
		if (symlink(os[i].a.path, link) < 0)
			rc = cmd_fail("add", "%s: %s", link, strerror(errno));
		free(link);
		printf("made %s in %s, at %s\n", handle, os[i].name, os[i].a.path);
	}
	/* This project's worktree, made next (cmd_add_made), by its name. */
	char *self = rc == 0 ? xasprintf("%s/%s", h, repo_name(ctx->repo)) : NULL,
	     *mine = rc == 0 ? xasprintf("%s/%s", dir, handle) : NULL;
	if (rc == 0 && symlink(mine, self) < 0)
		rc = cmd_fail("add", "%s: %s", self, strerror(errno));
	if (rc == 0)
		FAULT("workspace.others"); /* theirs made, this one's not yet */
	if (rc) {
		others_undo(os, n);
		if (made)
			home_drop(h, *repos, repo_name(ctx->repo));
		free(*repos);
		*repos = NULL;
	} else {
		*home = h;
		h = NULL;
	}
	others_free(os, n);
	free(self);
	free(mine);
	free(h);
	free(cause);
	free(dir);
	free(handle);
	return rc;
}

void cmd_workspace_undo(struct cmd_ctx *ctx, const char *home, const char *repos,
			const char *handle)
{
	struct other *os;
	size_t n = others_open(repos, handle, &os);
	others_undo(os, n);
	others_free(os, n);
	home_drop(home, repos, repo_name(ctx->repo));
}

/* Anything in the way of one repository's merge: why (to free), or NULL. */
static char *in_the_way(const struct repo *r, const struct config *c, const struct agent_rec *a)
{
	bool dirty = false;
	char *cause = NULL, *files = NULL, *hunks = NULL, *why = NULL;
	char *into = repo_main_branch(r, c->main_branch);
	if (worktree_dirty(c, a, &dirty, &cause) < 0)
		why = cause ? cause : xstrdup("its worktree cannot be read");
	else if (dirty)
		why = xstrdup("uncommitted changes");
	else if (into && cmd_merge_conflicts(repo_root(r), into, a->branch, &files, &hunks))
		why = xasprintf("conflicts with %s in %s", into, files);
	free(files);
	free(hunks);
	free(into);
	return why;
}

/* What stands in the way of a merge of all of them: "name: why; ..." (to free), or NULL. */
static char *in_the_way_all(struct cmd_ctx *ctx, const struct agent_rec *a, struct other *os,
			    size_t n)
{
	struct buf way = {0};
	for (size_t i = 0; i < n; i++) {
		char *why = os[i].found ? in_the_way(os[i].r, &os[i].cfg, &os[i].a) : NULL;
		if (why)
			buf_addf(&way, "%s%s: %s", way.len ? "; " : "", os[i].name, why);
		free(why);
	}
	char *mine = in_the_way(ctx->repo, &ctx->cfg, a);
	if (mine)
		buf_addf(&way, "%s%s: %s", way.len ? "; " : "", repo_name(ctx->repo), mine);
	free(mine);
	return way.data;
}

/* One repository's part of the preview: "name: N files changed..." into b. */
static void preview_one(struct buf *b, const char *name, const struct repo *r,
			const struct config *c, const struct agent_rec *a)
{
	char *into = repo_main_branch(r, c->main_branch);
	struct branch_changes ch;
	cmd_branch_changes(r, a->branch, into ? into : "HEAD", &ch);
	buf_addf(b, "%s%s: %s%s%s", b->len ? "; " : "", name, ch.stat,
		 ch.runs ? ", WARNING, runs on the host: " : "", ch.runs ? ch.runs : "");
	branch_changes_free(&ch);
	free(into);
}

int cmd_workspace_diff(const struct agent_rec *a, enum diff_mode m, int fd, char **cause)
{
	struct other *os;
	size_t n = others_open(a->repos, a->handle, &os);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!os[i].found)
			continue;
		char *main = os[i].a.base ? NULL : repo_main_branch(os[i].r, os[i].cfg.main_branch);
		char *prefix = xasprintf("%s/", os[i].name);
		struct diff_target t = {.worktree = os[i].a.path,
					.branch = os[i].a.branch,
					.base = os[i].a.base ? os[i].a.base : main,
					.prefix = prefix};
		char *why = NULL;
		if ((rc = diff_write(os[i].r, &t, m, fd, &why)) < 0)
			*cause = xasprintf("%s: %s", os[i].name, why);
		free(why);
		free(prefix);
		free(main);
	}
	others_free(os, n);
	return rc;
}

int cmd_workspace_preview(struct cmd_ctx *ctx, const struct agent_rec *a)
{
	struct other *os;
	size_t n = others_open(a->repos, a->handle, &os);
	char *way = in_the_way_all(ctx, a, os, n);
	int rc = 0;
	if (way) {
		rc = cmd_fail("merge", "nothing would merge, in any of its repositories: %s", way);
	} else {
		struct buf b = {0};
		preview_one(&b, repo_name(ctx->repo), ctx->repo, &ctx->cfg, a);
		for (size_t i = 0; i < n; i++)
			if (os[i].found)
				preview_one(&b, os[i].name, os[i].r, &os[i].cfg, &os[i].a);
		printf("%s into main: %s\n", a->branch, b.data);
		buf_free(&b);
	}
	free(way);
	others_free(os, n);
	return rc ? -EIO : 0;
}

int cmd_workspace_merge(struct cmd_ctx *ctx, struct agent_rec *a, struct merge_opts *o)
{
	struct other *os;
	size_t n = others_open(a->repos, a->handle, &os);
	char *way = in_the_way_all(ctx, a, os, n);
	int rc = 0;
	if (way) {
		cmd_fail("merge", "nothing merged, in any of its repositories: %s", way);
		free(way);
		others_free(os, n);
		return -EIO;
	}
	/* The others first, each as merge does there; this one last. */
	struct buf landed = {0};
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!os[i].found) {
			printf("%s: its agent there is gone (merged before): skipped\n",
			       os[i].name);
			continue;
		}
		struct merge_opts o2 = {.strategy = o->strategy, .keep = o->keep};
		char *note = NULL, *cause = NULL;
		if (worktree_merge(os[i].r, &os[i].cfg, &os[i].a, &o2, &note, &cause) < 0) {
			rc = cmd_fail("merge", "%s: %s%s%s%s", os[i].name, cause,
				      landed.data ? "; landed already: " : "",
				      landed.data ? landed.data : "",
				      landed.data ? " (git cannot take those back): fix this one, "
						    "then merge again, which skips them"
						  : "; nothing merged");
		} else {
			printf("merged %s into its main branch in %s%s%s\n", os[i].a.branch,
			       os[i].name, note ? ": " : "", note ? note : "");
			buf_addf(&landed, "%s%s", landed.len ? ", " : "", os[i].name);
		}
		free(note);
		free(cause);
	}
	char *why = NULL;
	if (rc == 0 && cmd_merge_agent(ctx, a, o, &why) < 0) {
		rc = cmd_fail("merge",
			      "%s: %s; landed already: %s (git cannot take those back): "
			      "fix this one, then merge again, which skips them",
			      repo_name(ctx->repo), why ? why : "its merge failed",
			      landed.data ? landed.data : "none");
	} else if (rc == 0 && !o->keep && access(a->path, F_OK) != 0) {
		home_drop(a->home, a->repos, repo_name(ctx->repo));
	}
	free(why);
	buf_free(&landed);
	others_free(os, n);
	return rc ? -EIO : 0;
}

int cmd_workspace_remove(struct cmd_ctx *ctx, const struct agent_rec *a,
			 const struct remove_opts *ro)
{
	struct other *os;
	size_t n = others_open(a->repos, a->handle, &os);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!os[i].found)
			continue;
		struct remove_opts o2 = {.force = ro->force,
					 .keep_branch = ro->keep_branch,
					 .run_hooks = ro->run_hooks};
		char *cause = NULL;
		if (worktree_remove(os[i].r, &os[i].cfg, &os[i].a, &o2, &cause) < 0)
			rc = cmd_fail("remove", "%s: %s (%s's own worktree stays)", os[i].name,
				      cause, a->handle);
		else
			printf("removed %s in %s\n", a->handle, os[i].name);
		free(cause);
	}
	others_free(os, n);
	(void)ctx;
	return rc;
}

void cmd_workspace_gone(struct cmd_ctx *ctx, const struct agent_rec *a)
{
	if (a->home && access(a->path, F_OK) != 0)
		home_drop(a->home, a->repos, repo_name(ctx->repo));
}
