/*
 * cmd_config.c - workrex config path|check|reference, init, trust.
 */
#include "cmd.h"

#include "../config/table.h"
#include "../config/trust.h"
#include "../rpc/control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the project file is looked for (the main worktree's from inside an agent's). */
static char *search_dir(struct cmd_ctx *ctx)
{
	struct repo *r = NULL;
	char *cause = NULL;
	if (repo_open(ctx->cwd, &r, &cause) < 0)
		free(cause);
	char *dir = xstrdup(config_search_dir(ctx->cwd, r ? repo_root(r) : NULL));
	repo_free(r);
	return dir;
}

/* config reload: the running dashboard reads its files again and says how it went. */
static int reload_dashboard(struct cmd_ctx *ctx)
{
	char *cause = NULL;
	/* The repository only: a config that does not load is for the dashboard to report. */
	if (ctx->repo == NULL && repo_open(ctx->cwd, &ctx->repo, &cause) < 0)
		free(cause);
	json_object *req = json_object_new_object(), *reply = NULL, *w;
	json_object_object_add(req, "cmd", json_object_new_string("reload"));
	int rc = cmd_dashboard(ctx, "config reload", req, &reply);
	json_object_put(req);
	if (rc == -ENOENT)
		return cmd_fail("config reload", "no dashboard is running for this project; it "
						 "reads the files when it starts");
	if (rc < 0)
		return 1; /* said: the files do not load, the dashboard keeps its config */
	if (json_object_object_get_ex(reply, "warnings", &w))
		for (size_t i = 0; i < json_object_array_length(w); i++)
			fprintf(stderr, "warning: %s\n",
				json_object_get_string(json_object_array_get_idx(w, i)));
	json_object_put(reply);
	printf("the dashboard reloaded its config\n");
	return 0;
}

int cmd_config(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *sub = cmd_arg(ctx, 0);
	bool man = cmd_given(ctx, "man");
	if (man && strcmp(sub, "reference"))
		return cmd_usage(ctx->self);
	if (man) {
		struct buf b = {0};
		config_reference_man(&b);
		fwrite(b.data, 1, b.len, stdout);
		buf_free(&b);
		return 0;
	}
	if (!strcmp(sub, "reference")) {
		struct buf b = {0};
		config_reference(&b, NULL, 0);
		printf("# workrex configuration: every key with its default. See workrex.yaml(5).\n"
		       "# Global file: $XDG_CONFIG_HOME/workrex/config.yaml; project: "
		       ".workrex.yaml\n"
		       "%s",
		       b.data);
		buf_free(&b);
		return 0;
	}
	if (!strcmp(sub, "reload"))
		return reload_dashboard(ctx);
	if (!strcmp(sub, "path")) {
		char *g = config_global_path(), *dir = search_dir(ctx);
		char *p = ctx->config_file ? xstrdup(ctx->config_file) : config_project_path(dir);
		free(dir);
		printf("global:  %s\nproject: %s\n", g ? g : "(no HOME)", p ? p : "(none)");
		free(g);
		free(p);
		return 0;
	}
	if (strcmp(sub, "check") != 0)
		return cmd_usage(ctx->self);
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *dir = search_dir(ctx);
	int rc = config_load_all(&c, dir, ctx->config_file, &err);
	free(dir);
	for (size_t i = 0; i < c.nwarnings; i++)
		fprintf(stderr, "warning: %s\n", c.warnings[i]);
	if (rc < 0) {
		/* The walk names every error, a line each: each said, and counted. */
		size_t nerr = 0;
		for (char *line = err; line && *line;) {
			size_t len = strcspn(line, "\n");
			fprintf(stderr, "error: %.*s\n", (int)len, line);
			nerr++;
			line += len + (line[len] == '\n');
		}
		fprintf(stderr,
			"config check: not valid (%zu error%s, %zu warning%s); fix them, then "
			"check again\n",
			nerr, nerr == 1 ? "" : "s", c.nwarnings, c.nwarnings == 1 ? "" : "s");
		free(err);
		config_free(&c);
		return 1;
	}
	struct buf b = {0};
	config_reference(&b, &c, 0);
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
	/* The verdict last, where it is read: the resolved values came before it. */
	fflush(stdout);
	fprintf(stderr, "config check: valid, %zu warning%s\n", c.nwarnings,
		c.nwarnings == 1 ? "" : "s");
	config_free(&c);
	return 0;
}

/* A hint for a file the project has: post_create and files.copy suggestions. */
static const struct {
	const char *file, *hint;
} hints[] = {
	{"package-lock.json", "post_create: [\"npm ci\"]"},
	{"pnpm-lock.yaml", "post_create: [\"pnpm install --frozen-lockfile\"]"},
	{"yarn.lock", "post_create: [\"yarn install --frozen-lockfile\"]"},
	{"Cargo.toml", "post_create: [\"cargo fetch\"]"},
	{"uv.lock", "post_create: [\"uv sync\"]"},
	{"go.mod", "post_create: [\"go mod download\"]"},
	{".env", "files: {copy: [.env]}"},
	{".env.local", "files: {copy: [.env.local]}"},
};

/*
 * workrex init: a .workrex.yaml in the project's root with every key a
 * project may set, commented out at its default (the reference less what
 * only the global file may hold), and what the project's own files suggest.
 */
int cmd_init(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	int rc = cmd_open_repo(ctx, "init");
	if (rc)
		return rc;
	char *path = xasprintf("%s/.workrex.yaml", repo_root(ctx->repo));
	struct buf b = {0};
	buf_addf(&b, "# workrex project configuration (workrex.yaml(5)), made by `workrex init`.\n"
		     "# Every key is at its default: uncomment what this project needs. What\n"
		     "# runs a command or names one, here or on a remote,\n");
	/* Every such key, from the key table: the header never falls behind it. */
	struct buf keys = {0};
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		if ((k->flags & CONFIG_COMMAND) && !(k->flags & CONFIG_GLOBAL_ONLY))
			buf_addf(&keys, "%s%s", keys.len ? ", " : "", k->path);
	}
	/* ...broken into comment rows of at most 76 columns. */
	struct buf row = {0};
	for (const char *p = keys.data ? keys.data : ""; *p;) {
		size_t n = strcspn(p, " ");
		if (row.len && row.len + 1 + n > 74) {
			buf_addf(&b, "#   %s\n", row.data);
			buf_consume(&row, row.len);
		}
		if (row.len)
			buf_addch(&row, ' ');
		buf_add(&row, p, n);
		p += n + (p[n] == ' ');
	}
	if (row.len)
		buf_addf(&b, "#   %s\n", row.data);
	buf_free(&row);
	buf_free(&keys);
	buf_addf(&b, "# is used only once you `workrex trust` the file, and again after each\n"
		     "# change.\n#\n");
	bool hinted = false;
	for (size_t i = 0; i < WRX_ARRAY_LEN(hints); i++) {
		char *f = xasprintf("%s/%s", repo_root(ctx->repo), hints[i].file);
		if (access(f, F_OK) == 0) {
			buf_addf(&b, "%s# %-40s # this project has %s\n",
				 hinted ? "" : "# Suggested:\n", hints[i].hint, hints[i].file);
			hinted = true;
		}
		free(f);
	}
	if (hinted)
		buf_addf(&b, "#\n");
	/* The reference without the global-only keys, each line commented out. */
	struct buf ref = {0};
	config_reference(&ref, NULL, CONFIG_REF_PROJECT);
	for (const char *line = ref.data; *line;) {
		size_t n = strcspn(line, "\n");
		buf_addf(&b, "# %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
	buf_free(&ref);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = cmd_fail("init", "%s: %s%s", path, strerror(errno),
			      errno == EEXIST ? " (left as it is)" : "");
	} else {
		if (write(fd, b.data, b.len) != (ssize_t)b.len || close(fd) < 0)
			rc = cmd_fail("init", "%s: %s", path, strerror(errno));
		else
			printf("wrote %s: uncomment what the project needs; `workrex config check` "
			       "reads it\n",
			       path);
	}
	buf_free(&b);
	free(path);
	return rc;
}

/*
 * workrex trust [--revoke]: show the project config whose commands are
 * ignored, and trust that exact content (it is what was just shown);
 * --revoke forgets the trust.
 */
/*
 * The project's running dashboard, if one runs, reads its config again: a
 * trust takes effect there at once (its commands, a group's checks), a
 * revoke too. None running: nothing to tell, none started.
 */
static void tell_dashboard(struct cmd_ctx *ctx)
{
	char *cause = NULL;
	if (ctx->repo == NULL && repo_open(ctx->cwd, &ctx->repo, &cause) < 0) {
		free(cause);
		return;
	}
	char *path = control_path(repo_root(ctx->repo), &cause);
	json_object *req = json_object_new_object(), *reply = NULL, *e;
	json_object_object_add(req, "cmd", json_object_new_string("reload"));
	int rc = path ? control_request(path, req, &reply, 10000, &cause) : -ENOENT;
	if (rc == 0 && !json_object_object_get_ex(reply, "error", &e))
		printf("the running dashboard took it\n");
	else if (rc == 0)
		fprintf(stderr, "workrex: trust: the running dashboard did not reload: %s\n",
			json_object_get_string(e));
	else if (rc != -ENOENT)
		fprintf(stderr, "workrex: trust: the running dashboard was not told: %s\n",
			cause ? cause : strerror(-rc));
	json_object_put(reply);
	json_object_put(req);
	free(path);
	free(cause);
}

int cmd_trust(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool revoke = cmd_given(ctx, "revoke");
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *dir = search_dir(ctx);
	char *p = ctx->config_file ? xstrdup(ctx->config_file) : config_project_path(dir);
	int rc = config_load_all(&c, dir, ctx->config_file, &err);
	free(dir);
	if (rc < 0) {
		rc = cmd_fail("trust", "%s", err);
	} else if (p == NULL) {
		rc = cmd_fail("trust", "no project config (.workrex.yaml) here");
	} else if (revoke) {
		trust_revoke(p);
		printf("%s is no longer trusted: its commands will not run\n", p);
		tell_dashboard(ctx);
	} else if (c.untrusted_path == NULL) {
		printf("%s: nothing to trust (its commands run already, or it has none)\n", p);
	} else {
		printf("--- %s\n%s%s---\n", c.untrusted_path, c.untrusted_text,
		       *c.untrusted_text && c.untrusted_text[strlen(c.untrusted_text) - 1] != '\n'
			       ? "\n"
			       : "");
		if (config_trust(&c, &err) < 0)
			rc = cmd_fail("trust", "%s", err);
		else {
			printf("trusted: its commands (%s%s) run until it changes\n",
			       c.untrusted.v[0], c.untrusted.n > 1 ? ", ..." : "");
			tell_dashboard(ctx);
		}
	}
	free(err);
	free(p);
	config_free(&c);
	return rc;
}
