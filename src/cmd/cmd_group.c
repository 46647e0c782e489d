/*
 * cmd_group.c - many agents on one task (SPEC §11): `add` with -a twice,
 * -n N, --foreach, -p - or a prompt file's foreach makes a group.
 *
 * Every candidate's prompt and branch are rendered, and every branch
 * checked (a valid name, new, not twice), before the first worktree is
 * made: a template error costs nothing. Then each is made as a single add
 * makes one (cmd_add_made), in order.
 */
#include "cmd.h"

#include "../config/foreach.h"
#include "../core/agentcmd.h"
#include "../util/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_MAX 100
#define BRANCH_TEMPLATE "{{ base_name }}-{{ agent | slugify }}-{{ num }}"

struct candidate {
	const char *agent; /* -a's, or NULL: the default */
	char *branch, *prompt;
};

/* What add was given for a group: is it one? */
bool cmd_add_is_group(const struct add_group *g)
{
	return g->agents.n > 1 || g->count > 1 || g->each.n > 0 || g->inputs.n > 0 ||
	       g->branch_template || g->max_concurrent > 0;
}

static void candidates_free(struct candidate *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].branch);
		free(c[i].prompt);
	}
	free(c);
}

/*
 * Every candidate, in order: by agent, then input, then foreach
 * combination, then copy. NULL with *cause when a template or a branch
 * is wrong.
 */
static struct candidate *expand(struct cmd_ctx *ctx, const struct add_group *g, size_t *nout,
				char **cause)
{
	size_t nagents = g->agents.n ? g->agents.n : 1, ninputs = g->inputs.n ? g->inputs.n : 1;
	size_t combos = foreach_count(&g->each), count = (size_t)(g->count > 0 ? g->count : 1);
	size_t per_agent = ninputs * combos * count, n = nagents * per_agent;
	if (n > GROUP_MAX) {
		*cause = xasprintf("a group of %zu: at most %d agents in one add", n, GROUP_MAX);
		return NULL;
	}
	size_t nv = 5 + g->each.n;
	const char **names = xcalloc(nv, sizeof *names), **values = xcalloc(nv, sizeof *values);
	names[0] = "base_name";
	names[1] = "agent";
	names[2] = "num";
	names[3] = "index";
	names[4] = "input";
	for (size_t i = 0; i < g->each.n; i++)
		names[5 + i] = g->each.names[i];
	struct tpl_vars vars = {.names = names, .values = values, .n = nv};
	struct candidate *c = xcalloc(n, sizeof *c);
	const char *tpl = g->branch_template ? g->branch_template : BRANCH_TEMPLATE;
	size_t k = 0;
	char num[24], index[24];
	for (size_t a = 0; a < nagents && !*cause; a++) {
		for (size_t j = 0; j < per_agent && !*cause; j++, k++) {
			c[k].agent = g->agents.n ? g->agents.v[a] : NULL;
			snprintf(num, sizeof num, "%zu", j + 1);
			snprintf(index, sizeof index, "%zu", k);
			values[0] = g->base_name;
			values[1] = c[k].agent ? c[k].agent : "";
			values[2] = per_agent > 1 ? num : "";
			values[3] = index;
			values[4] = g->inputs.n ? g->inputs.v[j / (combos * count)] : "";
			foreach_pick(&g->each, j / count % combos, values + 5);
			char *why = NULL;
			if ((c[k].branch = tpl_render(tpl, &vars, true, &why)) == NULL) {
				*cause = xasprintf("--branch-template %s", why);
			} else if (g->prompt && (c[k].prompt = tpl_render(g->prompt, &vars, false,
									  &why)) == NULL) {
				*cause = xasprintf("the prompt, %s", why);
			} else if (!repo_branch_name_valid(c[k].branch)) {
				*cause = xasprintf("'%s' (agent %zu) is not a branch name",
						   c[k].branch, k + 1);
			} else if (repo_branch_exists(ctx->repo, c[k].branch)) {
				*cause = xasprintf("'%s' exists: a group's agents are all new "
						   "branches (--branch-template names them)",
						   c[k].branch);
			}
			for (size_t i = 0; i < k && !*cause; i++) {
				char *h1 = handle_from_branch(c[i].branch),
				     *h2 = handle_from_branch(c[k].branch);
				if (h1 && h2 && strcmp(h1, h2) == 0)
					*cause = xasprintf("two agents would be '%s' (%s, %s): "
							   "put {{ num }} or a foreach variable "
							   "in --branch-template",
							   h2, c[i].branch, c[k].branch);
				free(h1);
				free(h2);
			}
			free(why);
		}
	}
	free(names);
	free(values);
	if (*cause) {
		candidates_free(c, n);
		return NULL;
	}
	*nout = n;
	return c;
}

int cmd_add_group(struct cmd_ctx *ctx, const struct add_group *g)
{
	if (g->remote)
		return cmd_fail("add", "a group on a server: add its agents one at a time");
	int rc = cmd_open_repo(ctx, "add");
	if (rc)
		return rc;
	size_t n = 0;
	char *cause = NULL;
	struct candidate *c = expand(ctx, g, &n, &cause);
	if (c == NULL) {
		rc = cmd_fail("add", "%s; no agent was made", cause);
		free(cause);
		return rc;
	}
	size_t made = 0;
	for (size_t k = 0; k < n; k++) {
		struct add_opts o = g->o;
		o.branch = c[k].branch;
		o.handle = NULL;
		o.prompt = c[k].prompt;
		o.group = g->base_name;
		o.agent = c[k].agent ? c[k].agent : agentcmd_default(&ctx->cfg);
		/* Past the limit: made, and waiting for a slot (a dashboard's queue, core/queue.c). */
		o.max_concurrent = g->max_concurrent;
		o.queued = g->max_concurrent > 0 && k >= (size_t)g->max_concurrent;
		/* The first takes the focus, unless -b; the rest open behind it. */
		if (cmd_add_made(ctx, &o, g->background || k > 0, 0, NULL) != 0)
			break;
		made++;
	}
	candidates_free(c, n);
	if (made < n) {
		fprintf(stderr, "workrex: add: %zu of the group's %zu agents were made\n", made, n);
		return 1;
	}
	printf("group %s: %zu agents\n", g->base_name, n);
	return 0;
}
