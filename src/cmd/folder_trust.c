/*
 * folder_trust.c - whether an agent CLI runs its hooks in this project's
 * worktrees without asking first.
 *
 * Claude Code reads none of a project's hooks until the user says yes to
 * its folder-trust question, and keeps that yes for the project's main
 * checkout, which its worktrees share: ~/.claude.json's
 * projects.<dir>.hasTrustDialogAccepted, on the project or an ancestor.
 *
 * Gemini CLI, with folder trust on (its default), asks in each folder
 * and keeps the answers in trustedFolders.json: {path: TRUST_FOLDER |
 * TRUST_PARENT | DO_NOT_TRUST}. The rule with the longest path among those
 * containing the folder decides; TRUST_PARENT's covers the path's parent.
 * workrex starts each agent in a new worktree under one directory, so
 * trusted means a rule covering that directory: "Trust parent folder" in
 * any agent's menu gives one.
 */
#include "cmd_setup.h"

#include "../config/config.h"
#include "../git/git.h"
#include "../git/worktree.h"
#include "../util/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void trust_place_find(const char *cwd, struct trust_place *at)
{
	*at = (struct trust_place){0};
	struct repo *r = NULL;
	char *cause = NULL;
	if (cwd == NULL || repo_open(cwd, &r, &cause) < 0) {
		free(cause);
		return;
	}
	struct config c;
	config_init(&c);
	/* A config that does not load: the default worktree directory. */
	if (config_load_all(&c, config_search_dir(cwd, repo_root(r)), NULL, &cause) < 0) {
		free(cause);
		cause = NULL;
		config_free(&c);
		config_init(&c);
	}
	at->project = xstrdup(repo_root(r));
	at->worktrees = worktree_dir(r, &c, &cause);
	free(cause);
	config_free(&c);
	repo_free(r);
}

void trust_place_free(struct trust_place *at)
{
	free(at->project);
	free(at->worktrees);
	*at = (struct trust_place){0};
}

/* path resolved as far as it exists, without a trailing slash. Caller frees. */
static char *real_path(const char *path)
{
	char buf[PATH_MAX];
	char *p = xstrdup(realpath(path, buf) ? buf : path);
	for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
		p[n - 1] = '\0';
	return p;
}

/* Claude Code: a yes on the project or one of its ancestors. */
static int claude_trusted(const char *home, const struct agent_kind *k, const char *project)
{
	char *path = xasprintf("%s/%s", home, k->home_file), *text = NULL, *cause = NULL;
	json_object *root = file_read(path, 64u << 20, &text, &cause) == 0
				    ? json_tokener_parse(text)
				    : NULL,
		    *projects;
	int trusted = 0;
	if (json_object_object_get_ex(root, k->home_trust, &projects) &&
	    json_object_is_type(projects, json_type_object)) {
		char *dir = real_path(project);
		for (;;) {
			json_object *d, *v;
			trusted = json_object_object_get_ex(projects, dir, &d) &&
				  json_object_object_get_ex(d, "hasTrustDialogAccepted", &v) &&
				  json_object_is_type(v, json_type_boolean) &&
				  json_object_get_boolean(v);
			char *slash = strrchr(dir, '/');
			if (trusted || slash == NULL || !strcmp(dir, "/"))
				break;
			slash[slash == dir] = '\0'; /* the parent; "/" after "/a" */
		}
		free(dir);
	}
	json_object_put(root);
	free(cause);
	free(text);
	free(path);
	return trusted;
}

/* Gemini CLI: the longest rule covering a new worktree under worktrees. */
static int gemini_trusted(const char *home, const struct agent_kind *k, const char *worktrees)
{
	const char *env = getenv("GEMINI_CLI_TRUST_WORKSPACE"), *file = NULL;
	if (env && strcmp(env, "true") == 0)
		return 1;
	if ((env && strcmp(env, "false") == 0) ||
	    (getenv("GEMINI_RESTRICTED_MODE") && !strcmp(getenv("GEMINI_RESTRICTED_MODE"), "true")))
		return 0;
	char *dir = kind_config_dir(k, home), *path = NULL, *text = NULL, *cause = NULL;
	file = getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH");
	if (file == NULL || *file == '\0')
		file = path = xasprintf("%s/%s", dir, k->trusted_folders);
	json_object *rules =
		file_read(file, 16u << 20, &text, &cause) == 0 ? json_tokener_parse(text) : NULL;
	char *where = real_path(worktrees);
	size_t longest = 0;
	int trusted = 0;
	if (json_object_is_type(rules, json_type_object)) {
		json_object_object_foreach(rules, rule, level)
		{
			const char *l = json_object_get_string(level);
			bool parent = l && strcmp(l, "TRUST_PARENT") == 0;
			char *eff = xstrdup(rule), *slash = strrchr(eff, '/');
			if (parent && slash)
				*(slash == eff ? slash + 1 : slash) = '\0';
			char *real = real_path(eff);
			if (path_within(where, real) && strlen(rule) > longest && l &&
			    (parent || !strcmp(l, "TRUST_FOLDER") || !strcmp(l, "DO_NOT_TRUST"))) {
				longest = strlen(rule);
				trusted = strcmp(l, "DO_NOT_TRUST") != 0;
			}
			free(real);
			free(eff);
		}
	}
	free(where);
	json_object_put(rules);
	free(cause);
	free(text);
	free(path);
	free(dir);
	return trusted;
}

int folder_trusted(const struct agent_kind *k, const char *home, const struct trust_place *at,
		   json_object *settings)
{
	if (at == NULL || at->project == NULL)
		return -1;
	if (k->home_trust && k->home_file)
		return claude_trusted(home, k, at->project);
	if (k->trusted_folders == NULL || at->worktrees == NULL)
		return -1;
	/* Its security.folderTrust.enabled, in the same settings as its hooks: on unless false. */
	json_object *s, *ft, *on;
	if (json_object_object_get_ex(settings, "security", &s) &&
	    json_object_object_get_ex(s, "folderTrust", &ft) &&
	    json_object_object_get_ex(ft, "enabled", &on) &&
	    json_object_is_type(on, json_type_boolean) && !json_object_get_boolean(on))
		return -1;
	return gemini_trusted(home, k, at->worktrees);
}
