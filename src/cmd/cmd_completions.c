/*
 * cmd_completions.c - workrex completions bash|zsh|fish: shell completion
 * scripts written from the command table, so they name every command,
 * alias, subcommand and flag the binary has, and nothing it lacks.
 *
 * From each usage line: the flags (words starting with '-', split at '|'),
 * the subcommands or values when the first word is a '|' list
 * ("sandbox build|pull|..."), and what the arguments are: an agent
 * ("handle") or a branch ("<branch>"). Agents come from `workrex list -q`,
 * branches from git, at the time of the <Tab>.
 */
#include "cmd.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct words {
	struct buf flags; /* space-separated */
	struct buf subs;  /* space-separated, or empty */
	bool handles, branches;
};

static void add_word(struct buf *b, const char *w, size_t n)
{
	buf_addf(b, "%s%.*s", b->len ? " " : "", (int)n, w);
}

/* Does usage name word, whole (--no not in --no-sandbox)? */
static bool in_usage(const char *usage, const char *word)
{
	size_t n = strlen(word);
	for (const char *at = strstr(usage, word); at; at = strstr(at + 1, word))
		if (!isalnum((unsigned char)at[n]) && at[n] != '-' &&
		    (at == usage || at[-1] != '-'))
			return true;
	return false;
}

/*
 * A row's options as completions offer them: those its usage shows (an
 * agent's own doors, add --from-sandbox and the like, are not offered).
 */
static void row_flags(const struct cmd *c, struct buf *flags)
{
	for (const struct cmd_opt *o = c->opts; o->name; o++) {
		char *word = xasprintf("--%s", o->name);
		char letter[3] = {'-', (char)o->letter, 0};
		if (in_usage(c->usage, word))
			add_word(flags, word, strlen(word));
		if (o->letter && in_usage(c->usage, letter))
			add_word(flags, letter, 2);
		free(word);
	}
}

/* Split usage into flags (a row's own options, where it has them), subcommands and argument kinds. */
static void parse_usage(const struct cmd *c, struct words *w)
{
	memset(w, 0, sizeof *w);
	const char *u = c->usage + strlen(c->name);
	w->handles = strstr(u, "handle") != NULL;
	w->branches = !strncmp(u, " <branch>", 9);
	bool first = true;
	while (*u) {
		u += strspn(u, " ");
		size_t n = strcspn(u, " ");
		if (n == 0)
			break;
		/* One word: its alternatives, without [ ] < > ( ). */
		const char *end = u + n;
		bool bracketed = strchr("[<(", *u) != NULL;
		for (const char *p = u; p < end;) {
			p += strspn(p, "[]<>()|");
			size_t k = strcspn(p, "[]<>()| ");
			if (k == 0 || p >= end)
				break;
			if (p[0] == '-')
				add_word(&w->flags, p, k);
			else if (first && !bracketed && memchr(u, '|', n) &&
				 islower((unsigned char)p[0]))
				add_word(&w->subs, p, k);
			p += k;
		}
		first = false;
		u = end;
	}
	if (c->opts) {
		buf_free(&w->flags);
		w->flags = (struct buf){0};
		row_flags(c, &w->flags);
	}
}

/*
 * The body of a shell `case` on the command word, for bash and zsh alike:
 * each command sets flags and subs (quoted with open and close: a string
 * or an array) and what its arguments are.
 */
static void put_cases(const char *open, const char *close)
{
	for (size_t i = 0; cmd_at(i); i++) {
		const struct cmd *c = cmd_at(i);
		struct words w;
		parse_usage(c, &w);
		printf("\t%s%s%s) flags=%s%s%s subs=%s%s%s what=%s ;;\n", c->name,
		       c->alias ? "|" : "", c->alias ? c->alias : "", open,
		       w.flags.data ? w.flags.data : "", close, open,
		       w.subs.data ? w.subs.data : "", close,
		       w.handles    ? "handles"
		       : w.branches ? "branches"
				    : "none");
		buf_free(&w.flags);
		buf_free(&w.subs);
	}
}

static void bash(void)
{
	puts("# bash completion for workrex (workrex completions bash)\n"
	     "_workrex() {\n"
	     "\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} flags= subs= what=\n"
	     "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	     "\t\tCOMPREPLY=($(compgen -W \"$_workrex_commands --help --version --config\" -- "
	     "\"$cur\"))\n"
	     "\t\treturn\n"
	     "\tfi\n"
	     "\tcase $cmd in");
	put_cases("'", "'");
	puts("\tesac\n"
	     "\tif [[ $cur == -* ]]; then\n"
	     "\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
	     "\telif [ -n \"$subs\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	     "\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
	     "\telif [ \"$what\" = handles ]; then\n"
	     "\t\tCOMPREPLY=($(compgen -W \"$(workrex list -q 2>/dev/null)\" -- \"$cur\"))\n"
	     "\telif [ \"$what\" = branches ]; then\n"
	     "\t\tCOMPREPLY=($(compgen -W \"$(git for-each-ref --format='%(refname:short)' "
	     "refs/heads 2>/dev/null)\" -- \"$cur\"))\n"
	     "\tfi\n"
	     "}");
	printf("_workrex_commands='");
	for (size_t i = 0; cmd_at(i); i++)
		printf("%s%s%s%s", i ? " " : "", cmd_at(i)->name, cmd_at(i)->alias ? " " : "",
		       cmd_at(i)->alias ? cmd_at(i)->alias : "");
	puts("'\ncomplete -F _workrex workrex");
}

/* s with every ' made safe inside a single-quoted shell word. */
static void put_quoted(const char *s)
{
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
}

/* A line per name of c (and its alias): before (with %s for the name), the summary quoted, '. */
static void put_described(const struct cmd *c, const char *before)
{
	const char *names[] = {c->name, c->alias};
	for (size_t k = 0; k < 2 && names[k]; k++) {
		printf(before, names[k]);
		put_quoted(c->summary);
		puts("'");
	}
}

static void zsh(void)
{
	puts("#compdef workrex\n"
	     "# zsh completion for workrex (workrex completions zsh)\n"
	     "_workrex() {\n"
	     "\tlocal -a commands flags subs\n"
	     "\tlocal what\n"
	     "\tcommands=(");
	for (size_t i = 0; cmd_at(i); i++)
		put_described(cmd_at(i), "\t\t'%s:");
	puts("\t)\n"
	     "\tif (( CURRENT == 2 )); then\n"
	     "\t\t_describe -t commands 'workrex command' commands\n"
	     "\t\treturn\n"
	     "\tfi\n"
	     "\tcase $words[2] in");
	put_cases("(", ")");
	puts("\tesac\n"
	     "\tif [[ $PREFIX == -* ]]; then\n"
	     "\t\tcompadd -a flags\n"
	     "\telif (( ${#subs} )) && (( CURRENT == 3 )); then\n"
	     "\t\tcompadd -a subs\n"
	     "\telif [[ $what == handles ]]; then\n"
	     "\t\tcompadd -- ${(f)\"$(workrex list -q 2>/dev/null)\"}\n"
	     "\telif [[ $what == branches ]]; then\n"
	     "\t\tcompadd -- ${(f)\"$(git for-each-ref --format='%(refname:short)' refs/heads "
	     "2>/dev/null)\"}\n"
	     "\tfi\n"
	     "}\n"
	     "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
	     "\t_workrex \"$@\"\n"
	     "else\n"
	     "\tcompdef _workrex workrex\n"
	     "fi");
}

static void fish(void)
{
	puts("# fish completion for workrex (workrex completions fish)\n"
	     "complete -c workrex -f");
	for (size_t i = 0; cmd_at(i); i++) {
		const struct cmd *c = cmd_at(i);
		put_described(c, "complete -c workrex -n __fish_use_subcommand -a %s -d '");
		struct words w;
		parse_usage(c, &w);
		char *seen = xasprintf("__fish_seen_subcommand_from %s%s%s", c->name,
				       c->alias ? " " : "", c->alias ? c->alias : "");
		/* Flags are offered as words, long and short alike, as the usage line writes them. */
		if (w.flags.len)
			printf("complete -c workrex -n '%s; and string match -q -- \"-*\" "
			       "(commandline -ct)' -a '%s'\n",
			       seen, w.flags.data);
		if (w.subs.len)
			printf("complete -c workrex -n '%s; and test (count (commandline -opc)) "
			       "-eq 2' "
			       "-a '%s'\n",
			       seen, w.subs.data);
		if (w.handles)
			printf("complete -c workrex -n '%s' -a '(workrex list -q 2>/dev/null)'\n",
			       seen);
		else if (w.branches)
			printf("complete -c workrex -n '%s' -a '(git for-each-ref "
			       "--format=\"%%(refname:short)\" refs/heads 2>/dev/null)'\n",
			       seen);
		free(seen);
		buf_free(&w.flags);
		buf_free(&w.subs);
	}
}

int cmd_completions(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *shell = cmd_arg(ctx, 0);
	if (!strcmp(shell, "bash"))
		bash();
	else if (!strcmp(shell, "zsh"))
		zsh();
	else if (!strcmp(shell, "fish"))
		fish();
	else
		return cmd_usage(ctx->self);
	return 0;
}
