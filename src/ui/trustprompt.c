/*
 * trustprompt.c - the dashboard asks the user to trust the project's
 * .workrex.yaml when its commands (agent, panes, post_create, pre_merge,
 * pre_remove) were ignored because that content was never trusted
 * (config/trust.h): at start, and after every workrex command the
 * dashboard ran, since a merge may have brought a new file or changed one.
 *
 * The question quotes the file (on one line) and a yes trusts exactly the
 * text that was read and shown, not whatever the file holds a moment later.
 * A no is remembered for that text: the user is asked again only when it
 * changes. The check re-reads the config files: a few small reads, only
 * after a command ends, never per frame.
 */
#include "../util/log.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

/* The commands the dashboard itself uses (agent, panes) and the rest, taken from c. */
static void adopt_commands(struct ui *ui, struct config *c)
{
	struct config *u = &ui->w->cfg;
#define SWAP(f)                                                                                    \
	do {                                                                                       \
		__typeof__(u->f) t_ = u->f;                                                        \
		u->f = c->f;                                                                       \
		c->f = t_;                                                                         \
	} while (0)
	SWAP(agent);
	SWAP(panes);
	SWAP(npanes);
	SWAP(post_create);
	SWAP(pre_merge);
	SWAP(pre_remove);
	SWAP(untrusted_path);
	SWAP(untrusted_text);
	SWAP(untrusted);
#undef SWAP
}

static int reload(struct ui *ui, struct config *c)
{
	char *cause = NULL;
	int rc = wrx_config_read(ui->w, c, &cause);
	if (rc < 0) {
		log_msg("trust: %s", cause);
		free(cause);
	}
	return rc;
}

static void answered(struct ui *ui, const char *answer, void *arg)
{
	struct config *c = arg;
	char *cause = NULL;
	if (answer && strcmp(answer, "y") == 0 && !ui->quitting) {
		if (config_trust(c, &cause) < 0) {
			ui_message(ui, true, "trust: %s", cause);
			free(cause);
		} else {
			/* Read with its commands now: what was ignored may be wrong (said). */
			struct config now;
			char *why = NULL;
			if (wrx_config_read(ui->w, &now, &why) == 0) {
				adopt_commands(ui, &now);
				ui_message(ui, false,
					   "trusted %s: its commands run until it changes",
					   c->untrusted_path);
			} else {
				ui_message(ui, true, "trusted %s, but it is not valid: %s",
					   c->untrusted_path, why);
				free(why);
			}
			config_free(&now);
		}
	} else if (c->untrusted_text) {
		free(ui->trust_declined);
		ui->trust_declined = xstrdup(c->untrusted_text);
	}
	config_free(c);
	free(c);
}

void trust_ask(struct ui *ui)
{
	if (ui->quitting)
		return;
	/*
	 * A change the watch saw is read first (it asks in its turn): else its
	 * reload would come after this question, and its word after the answer.
	 */
	ui_reload_pending(ui);
	struct config *c = xcalloc(1, sizeof *c);
	if (reload(ui, c) < 0 || c->untrusted_path == NULL) {
		/* Trusted now (`workrex trust`), or nothing to ask: take its commands. */
		if (c->untrusted_path == NULL && ui->w->cfg.untrusted_path != NULL)
			adopt_commands(ui, c);
		config_free(c);
		free(c);
		return;
	}
	if (ui->prompt ||
	    (ui->trust_declined && strcmp(ui->trust_declined, c->untrusted_text) == 0)) {
		config_free(c);
		free(c);
		return;
	}
	struct buf q = {0};
	size_t n = strlen(ui->w->root);
	const char *name = c->untrusted_path;
	if (!strncmp(name, ui->w->root, n) && name[n] == '/')
		name += n + 1; /* .workrex.yaml: the status line is one line */
	buf_addf(&q, "%s is not trusted, so its ", name);
	for (size_t i = 0; i < c->untrusted.n; i++)
		buf_addf(&q, "%s%s", i ? ", " : "", c->untrusted.v[i]);
	buf_addstr(&q, " did not run: [");
	for (const char *p = c->untrusted_text; *p && q.len < 400; p++)
		buf_addch(&q, *p == '\n' ? ' ' : (*p == '\t' ? ' ' : *p));
	buf_addstr(&q, "] trust it? (y/n)");
	ui_prompt(ui, q.data, true, answered, c);
	buf_free(&q);
}
