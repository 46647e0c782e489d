/*
 * trustprompt.c - the dashboard asks the user to trust the project's
 * .workrex.yaml when its commands (agent, panes, post_create, pre_merge,
 * pre_remove) were ignored because that content was never trusted
 * (config/trust.h): at start, and after every workrex command the
 * dashboard ran, since a merge may have brought a new file or changed one.
 *
 * The question is not the user's own: it waits on the status line for
 * prefix a, as an agent's does, so that a key typed into a pane never
 * answers it (a change to the file comes while the user types). Opened, it
 * shows the lines that set the commands it would let run, numbered, and a
 * yes trusts exactly the text that was read and shown, not whatever the
 * file holds a moment later. A no is remembered for that text: the user is
 * asked again only when it changes. The check re-reads the config files: a
 * few small reads, only after a command ends, never per frame.
 */
#include "../util/log.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#define TRUST_LINES 16                 /* shown in the question; more: workrex trust */
#define TRUST_WHO "the project config" /* who asks, on the status line */

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
	SWAP(untrusted_lines);
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
	} else if (answer && c->untrusted_text) {
		/* A no (not a question dropped or put off: it waits again on the status line). */
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
		if (c->untrusted_path == NULL)
			ui_asked_drop(ui, TRUST_WHO); /* asked no longer */
		config_free(c);
		free(c);
		return;
	}
	if (ui->trust_declined && strcmp(ui->trust_declined, c->untrusted_text) == 0) {
		config_free(c);
		free(c);
		return;
	}
	struct buf q = {0};
	size_t n = strlen(ui->w->root);
	const char *name = c->untrusted_path;
	if (!strncmp(name, ui->w->root, n) && name[n] == '/')
		name += n + 1;
	buf_addf(&q, "%s is not trusted, so its ", name);
	for (size_t i = 0; i < c->untrusted.n; i++)
		buf_addf(&q, "%s%s", i ? ", " : "", c->untrusted.v[i]);
	/* Every line that sets one: a yes is to text the user saw. */
	size_t shown = WRX_MIN(c->untrusted_lines.n, (size_t)TRUST_LINES);
	buf_addstr(&q, " did not run. Its lines:");
	for (size_t i = 0; i < shown; i++)
		buf_addf(&q, "\n  %s", c->untrusted_lines.v[i]);
	if (shown < c->untrusted_lines.n) {
		buf_addf(&q,
			 "\n  (%zu lines more: too many to show here; `workrex trust` in a "
			 "terminal shows and trusts them)",
			 c->untrusted_lines.n - shown);
		ui_message(ui, true, "%s", q.data);
		config_free(c);
		free(c);
		buf_free(&q);
		return;
	}
	buf_addstr(&q, "\ntrust it? (y/n)");
	ui_ask_waiting(ui, q.data, TRUST_WHO, answered, c, true);
	buf_free(&q);
}
