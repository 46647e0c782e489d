/*
 * prompts.c - the questions some keys ask before their verb runs: n asks
 * the new agent's branch and prompt, : a workrex command line. What the
 * answers lead to is an action (core/actions.h), which asks its own yes or
 * no where the table says so (m, X).
 */
#include "../core/children.h"
#include "../core/actions.h"
#include "../core/run.h"
#include "../git/worktree.h"
#include "ui.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* n: branch name, then an optional prompt. */
static void new_prompt_answer(struct ui *ui, const char *answer, void *arg)
{
	char *branch = arg;
	if (answer == NULL) {
		free(branch);
		return;
	}
	json_object *args = json_object_new_object();
	json_object_object_add(args, "branch", json_object_new_string(branch));
	if (*answer)
		json_object_object_add(args, "prompt", json_object_new_string(answer));
	actions_call(ui->w, "add", args, DOOR_UI, 0, NULL, NULL);
	ui_message(ui, false, "creating %s...", branch);
	free(branch);
}

static void new_branch_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer == NULL || *answer == '\0')
		return;
	/* #N: GitHub issue N names the branch and is the prompt (add --issue). */
	if (answer[0] == '#' && answer[1] &&
	    strspn(answer + 1, "0123456789") == strlen(answer + 1)) {
		json_object *args = json_object_new_object();
		json_object_object_add(args, "issue", json_object_new_string(answer + 1));
		actions_call(ui->w, "add-issue", args, DOOR_UI, 0, NULL, NULL);
		ui_message(ui, false, "asking gh for issue %s...", answer);
		return;
	}
	/* What can be known without git, before the user writes a prompt for nothing. */
	char *handle = handle_from_branch(answer);
	if (!repo_branch_name_valid(answer))
		ui_message(ui, true, "new agent: '%s' is not a valid branch name", answer);
	else if (handle == NULL || !handle_valid(handle))
		ui_message(ui, true, "new agent: '%s' cannot be a worktree name", answer);
	else if (session_find_agent(ui->w->s, handle))
		ui_message(ui, true, "new agent: an agent named '%s' exists already", handle);
	else
		ui_prompt(ui, "prompt (Enter for none):", false, new_prompt_answer,
			  xstrdup(answer));
	free(handle);
}

/*
 * #, then Tab: the project's open GitHub issues, "#N title" a line, as gh
 * lists them (a child: gh asks the network), kept for the dashboard's
 * life once they came; Tab again completes a number.
 */
static struct buf issues;
static enum { ISSUES_NONE, ISSUES_ASKING, ISSUES_CAME } issues_state;

static void issues_show(struct ui *ui, const char *prefix)
{
	struct buf b = {0};
	int n = 0;
	for (const char *l = issues.data; l && *l;
	     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (strncmp(l, prefix, strlen(prefix)) == 0 && n++ < 12)
			buf_addf(&b, "%s%.*s", b.len ? "  " : "",
				 (int)WRX_MIN(strcspn(l, "\n"), 48), l);
	/* Said in the question itself (a long one shows whole above the status line). */
	if (ui->prompt) {
		free(ui->prompt->label);
		ui->prompt->label = xasprintf("new agent, #N of the open issues: %s:",
					      n ? b.data : "none by that number");
		ui_dirty(ui);
	}
	buf_free(&b);
}

static char *complete_issue(struct ui *ui, const char *input);

static void issues_came(void *arg, int status, const char *output, const char *last)
{
	struct ui *ui = arg;
	buf_free(&issues);
	/* Its lines "#N title" alone: anything else gh said is not one. */
	for (const char *l = output; status == 0 && l && *l;
	     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (l[0] == '#' && l[1] >= '0' && l[1] <= '9')
			buf_addf(&issues, "%.*s\n", (int)strcspn(l, "\n"), l);
	issues_state = issues.data ? ISSUES_CAME : ISSUES_NONE; /* none: asked again */
	if (status != 0)
		ui_message(ui, true, "new agent: gh issue list: %s",
			   last && *last ? last : "it failed");
	else if (issues.data == NULL)
		ui_message(ui, false, "new agent: no open issue");
	else if (ui->prompt && ui->prompt->complete == complete_issue && ui->prompt->input.data &&
		 ui->prompt->input.data[0] == '#')
		issues_show(ui, ui->prompt->input.data);
}

static char *complete_issue(struct ui *ui, const char *input)
{
	if (input[0] != '#' || strspn(input + 1, "0123456789") != strlen(input + 1))
		return NULL;
	if (issues_state == ISSUES_ASKING) {
		ui_message(ui, false, "asking gh for the open issues...");
		return NULL;
	}
	if (issues_state == ISSUES_NONE) {
		char *const argv[] = {"gh",
				      "issue",
				      "list",
				      "--limit",
				      "30",
				      "--json",
				      "number,title",
				      "--jq",
				      ".[] | \"#\\(.number) \\(.title)\"",
				      NULL};
		struct run_opts o = {
			.argv = argv, .cwd = ui->w->root, .done = issues_came, .arg = ui};
		bool started = run_start(ui->w->loop, &o) == 0;
		issues_state = started ? ISSUES_ASKING : ISSUES_NONE;
		ui_message(ui, !started, "%s",
			   started ? "asking gh for the open issues..."
				   : "new agent: gh does not start");
		return NULL;
	}
	/* One number that begins so: it; else the ones that do, shown. */
	const char *one = NULL;
	int n = 0;
	for (const char *l = issues.data; l && *l;
	     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (strncmp(l, input, strlen(input)) == 0 && n++ == 0)
			one = l;
	if (n == 1)
		return xstrndup(one, strcspn(one, " \n"));
	issues_show(ui, input);
	return NULL;
}

void prompts_new_agent(struct ui *ui)
{
	if (!ui->w->in_repo) {
		ui_message(ui, true, "new agent: %s is not a git repository", ui->w->root);
		return;
	}
	ui_prompt(ui, "new agent, branch (or #N, a GitHub issue; # Tab lists them):", false,
		  new_branch_answer, NULL);
	ui->prompt->complete = complete_issue;
}

/* ---- R in the overview: remove --gone, asked once with the list ---- */

static void gone_removed(void *arg, int status, const char *output, const char *last)
{
	struct ui *ui = arg;
	(void)output;
	const char *said = wrx_outcome(last);
	ui_message(ui, status != 0, "%s", *said ? said : "removed");
}

static void gone_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer == NULL || strcmp(answer, "y") != 0)
		return;
	char **argv = child_argv(ui->w, "gone-remove", NULL);
	struct run_opts o = {.argv = argv, .cwd = ui->w->root, .done = gone_removed, .arg = ui};
	if (run_start(ui->w->loop, &o) < 0)
		ui_message(ui, true, "remove --gone did not start");
	child_argv_free(argv);
}

/* The agents whose work is gone upstream, listed by `remove --gone -n`: asked once. */
static void gone_listed(void *arg, int status, const char *output, const char *last)
{
	struct ui *ui = arg;
	if (status != 0) {
		ui_message(ui, true, "%s", wrx_outcome(last));
		return;
	}
	struct buf names = {0};
	int n = 0;
	for (const char *p = output; p && *p;) {
		size_t len = strcspn(p, "\n");
		if (len > 2 && p[0] == ' ' && p[1] == ' ') { /* "  handle: why" */
			buf_addf(&names, "%s%.*s", n ? ", " : "", (int)(len - 2), p + 2);
			n++;
		}
		p += len + (p[len] == '\n');
	}
	if (n == 0) {
		ui_message(ui, false, "no agent's work is gone upstream");
	} else {
		char *q = xasprintf("remove %s? (y/n)", names.data);
		ui_prompt(ui, q, true, gone_answer, NULL);
		free(q);
	}
	buf_free(&names);
}

void prompts_remove_gone(struct ui *ui)
{
	char **argv = child_argv(ui->w, "gone-list", NULL);
	struct run_opts o = {.argv = argv, .cwd = ui->w->root, .done = gone_listed, .arg = ui};
	int rc = run_start(ui->w->loop, &o);
	child_argv_free(argv);
	if (rc < 0)
		ui_message(ui, true, "remove --gone did not start");
	else
		ui_message(ui, false, "asking which agents' work is gone upstream...");
}

/* m, X: the verb on the focused agent; the action asks the user. */
void prompts_agent_verb(struct ui *ui, const char *verb)
{
	struct wpane *f = session_focus(ui->w->s);
	struct agent *a = f ? f->agent : NULL;
	if (a == NULL || !a->git.worktree) {
		ui_message(ui, true,
			   "%s: focus an agent's pane first (the main worktree is never %s)", verb,
			   strcmp(verb, "merge") == 0 ? "merged" : "removed");
		return;
	}
	json_object *args = json_object_new_object();
	json_object_object_add(args, "handle", json_object_new_string(a->handle));
	actions_call(ui->w, verb, args, DOOR_UI, 0, NULL, NULL);
}

/* ---- ': an agent by number or name ---- */

/* The agent the answer names: its number, its handle or a prefix of one handle; or -1. */
static int prompts_agent_named(struct ui *ui, const char *answer)
{
	struct session *s = ui->w->s;
	char *end;
	long num = strtol(answer, &end, 10);
	if (*answer && *end == '\0')
		return num > 0 && num <= INT32_MAX ? session_agent_by_num(s, (int)num) : -1;
	int found = -1, n = 0;
	for (int i = 0; i < session_agent_count(s); i++) {
		const char *h = session_agent(s, i)->handle;
		if (strcmp(h, answer) == 0)
			return i;
		if (*answer && strncmp(h, answer, strlen(answer)) == 0)
			found = i, n++;
	}
	return n == 1 ? found : -1;
}

/* The longest prefix the handles starting with input share. */
static char *complete_agent(struct ui *ui, const char *input)
{
	struct session *s = ui->w->s;
	char *common = NULL;
	for (int i = 0; i < session_agent_count(s); i++) {
		const char *h = session_agent(s, i)->handle;
		if (strncmp(h, input, strlen(input)) != 0)
			continue;
		if (common == NULL) {
			common = xstrdup(h);
			continue;
		}
		size_t k = 0;
		while (common[k] && common[k] == h[k])
			k++;
		common[k] = '\0';
	}
	return common;
}

static void pick_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer == NULL || *answer == '\0')
		return;
	int at = prompts_agent_named(ui, answer);
	if (at < 0)
		ui_message(ui, true, "no agent '%s' (C-b w lists them)", answer);
	else
		ui_focus_agent(ui, at);
}

void prompts_pick_agent(struct ui *ui)
{
	ui_prompt(ui, "agent (number or name, Tab completes):", false, pick_answer, NULL);
	ui->prompt->complete = complete_agent;
}

/* ---- : a workrex command line, its output shown ---- */

struct command {
	struct ui *ui;
	char *line; /* owned: "workrex ...", the title of a long output */
	char *what; /* owned: "verb:" for progress */
};

static void command_progress(void *arg, const char *line, size_t len)
{
	struct command *k = arg;
	if (!k->ui->quitting)
		ui_message(k->ui, false, "%s %.*s", k->what, (int)WRX_MIN(len, 200), line);
}

static void command_done(void *arg, int status, const char *output, const char *last)
{
	struct command *k = arg;
	struct ui *ui = k->ui;
	last = wrx_outcome(last);
	if (ui->quitting) {
		/* nothing to show it on */
	} else if (strchr(output, '\n')) {
		char *title = xasprintf("%s%s", k->line, status ? "  (failed)" : "");
		textview_open(ui, title, output);
		free(title);
	} else if (status == 0) {
		*last ? ui_message(ui, false, "%s", last)
		      : ui_message(ui, false, "%s done", k->what);
	} else {
		ui_message(ui, true, "%s", *last ? last : "failed");
	}
	free(k->line);
	free(k->what);
	free(k);
	trust_ask(ui); /* a merge may have brought a new project config */
}

/* Split a command line into words: spaces separate, quotes group. */
static char **split_words(const char *s, char **cause)
{
	char **v = xcalloc(strlen(s) + 3, sizeof *v);
	size_t n = 1; /* v[0]: the binary, filled in by the caller */
	struct buf w = {0};
	bool in_word = false;
	char quote = 0;
	for (; *s; s++) {
		if (quote) {
			if (*s == quote)
				quote = 0;
			else
				buf_addch(&w, *s);
		} else if (*s == '\'' || *s == '"') {
			quote = *s;
			in_word = true;
		} else if (*s == ' ' || *s == '\t') {
			if (in_word) {
				v[n++] = w.data ? w.data : xstrdup("");
				memset(&w, 0, sizeof w);
				in_word = false;
			}
		} else {
			buf_addch(&w, *s);
			in_word = true;
		}
	}
	if (quote) {
		*cause = xstrdup("unterminated quote");
		buf_free(&w);
		for (size_t i = 1; i < n; i++)
			free(v[i]);
		free(v);
		return NULL;
	}
	if (in_word)
		v[n++] = w.data ? w.data : xstrdup("");
	return v;
}

static void command_answer(struct ui *ui, const char *answer, void *arg)
{
	(void)arg;
	if (answer == NULL || *answer == '\0')
		return;
	char *cause = NULL;
	char **words = split_words(answer, &cause);
	if (words == NULL) {
		ui_message(ui, true, ": %s", cause);
		free(cause);
		return;
	}
	if (words[1]) {
		struct command *k = xcalloc(1, sizeof *k);
		k->ui = ui;
		struct buf line = {0};
		buf_addstr(&line, "workrex");
		for (size_t i = 1; words[i]; i++)
			buf_addf(&line, " %s", words[i]);
		k->line = line.data;
		k->what = xasprintf("%s:", words[1]);
		char **argv = child_argv(ui->w, "command", words + 1);
		struct run_opts o = {.argv = argv,
				     .cwd = ui->w->root,
				     .done = command_done,
				     .progress = command_progress,
				     .arg = k};
		int rc = run_start(ui->w->loop, &o);
		child_argv_free(argv);
		if (rc < 0) {
			ui_message(ui, true, "cannot run workrex %s: %s", words[1],
				   uv_strerror(rc));
			free(k->line);
			free(k->what);
			free(k);
		}
	}
	for (char **p = words + 1; *p; p++)
		free(*p);
	free(words);
}

void prompts_command(struct ui *ui)
{
	ui_prompt(ui, "workrex", false, command_answer, NULL);
}
