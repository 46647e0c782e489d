/*
 * cmd.c - the command table and what commands share: failing with one clear
 * line, opening the repository with its config.
 */
#include "cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct cmd table[] = {
	{"add", NULL,
	 "add <branch> [--base REF] [-p TEXT | -P FILE] [-a AGENT] [--name HANDLE] [-b]",
	 "create a branch and worktree for a new agent", cmd_add},
	{"list", "ls", "list [--json]", "list the agents", cmd_list},
	{"status", NULL, "status [handle...] [--json]", "agents and their status", cmd_status},
	{"merge", NULL,
	 "merge [handle] [--into BRANCH] [--rebase|--squash] [-k] [--ignore-uncommitted] "
	 "[--no-verify]",
	 "merge an agent's branch, then remove its worktree and branch", cmd_merge},
	{"remove", "rm", "remove [handle...] [-f] [-k|--keep-branch] [--all]",
	 "remove agents' worktrees and branches without merging", cmd_remove},
	{"config", NULL, "config path|check|reference", "show and check the configuration",
	 cmd_config},
};

const struct cmd *cmd_find(const char *name)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		if (!strcmp(table[i].name, name) || (table[i].alias && !strcmp(table[i].alias, name)))
			return &table[i];
	return NULL;
}

void cmd_list_all(FILE *f)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		fprintf(f, "  %-8s %s\n", table[i].name, table[i].summary);
}

int cmd_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "workrex: %s: %s\n", cmd, msg);
	free(msg);
	return 1;
}

int cmd_usage(const struct cmd *c)
{
	fprintf(stderr, "usage: workrex %s\n", c->usage);
	return 2;
}

int cmd_open_repo(struct cmd_ctx *ctx, const char *cmd)
{
	char *cause = NULL;
	if (ctx->repo == NULL && repo_open(ctx->cwd, &ctx->repo, &cause) < 0) {
		int rc = cmd_fail(cmd, "%s", cause);
		free(cause);
		return rc;
	}
	if (!ctx->cfg_loaded) {
		config_init(&ctx->cfg);
		ctx->cfg_loaded = true;
		if (config_load_all(&ctx->cfg, ctx->cwd, ctx->config_file, &cause) < 0) {
			int rc = cmd_fail(cmd, "%s", cause);
			free(cause);
			return rc;
		}
		for (size_t i = 0; i < ctx->cfg.nwarnings; i++)
			fprintf(stderr, "workrex: warning: %s\n", ctx->cfg.warnings[i]);
	}
	return 0;
}

void cmd_ctx_free(struct cmd_ctx *ctx)
{
	repo_free(ctx->repo);
	if (ctx->cfg_loaded)
		config_free(&ctx->cfg);
	free(ctx->cwd);
}
