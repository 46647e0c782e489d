/*
 * terminfo.c - the few terminfo strings workrex reads directly.
 *
 * <term.h> defines a macro for every capability name (bell, lines, ...), so
 * it is included here and nowhere else.
 */
#include "terminfo.h"

#include "../util/log.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <term.h>
#include <unistd.h>

const char *terminfo_cursor_style(int decscusr)
{
	char *ss = tigetstr("Ss");
	if (ss == NULL || ss == (char *)-1)
		return NULL;
	return tiparm(ss, decscusr);
}

int terminfo_key_code(const char *cap)
{
	char *seq = tigetstr(cap);
	if (seq == NULL || seq == (char *)-1)
		return -1;
	return key_defined(seq);
}

static bool flag(const char *cap)
{
	return tigetflag(cap) > 0;
}

bool terminfo_wants_direct(const char *term, int fd)
{
	const char *ct = getenv("COLORTERM");
	bool asked = ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit"));
	TERMINAL *saved = cur_term, *probe = NULL;
	int err = 0;
	if (setupterm(term, fd, &err) != OK)
		return false;
	probe = cur_term;
	/* tmux's Tc and ncurses' RGB: the entry says the terminal has it. */
	asked |= flag("RGB") || flag("Tc");
	bool has = tigetnum("colors") >= (1 << 24);
	set_curterm(saved);
	del_curterm(probe);
	return asked && !has;
}

/* Only names that are a plain file name. */
static bool term_name_ok(const char *term)
{
	if (*term == '\0' || strlen(term) > 64)
		return false;
	for (const char *c = term; *c; c++)
		if (!(*c == '-' || *c == '_' || *c == '.' || *c == '+' ||
		      (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
		      (*c >= 'A' && *c <= 'Z')))
			return false;
	return true;
}

char *terminfo_direct_entry(const char *term, char **dir)
{
	char *state = state_dir();
	if (state == NULL || !term_name_ok(term)) {
		free(state);
		return NULL;
	}
	char *d = xasprintf("%s/terminfo", state);
	char *name = xasprintf("wrx-%s-direct", term);
	free(state);
	/* Compiled once: ncurses files an entry under its first letter, or its hex code. */
	char *f1 = xasprintf("%s/w/%s", d, name), *f2 = xasprintf("%s/77/%s", d, name);
	bool have = access(f1, R_OK) == 0 || access(f2, R_OK) == 0;
	free(f1);
	free(f2);
	if (!have) {
		char *src = xasprintf("%s/%s.src", d, name);
		FILE *f = mkdir_p(d, 0700) == 0 ? fopen(src, "w") : NULL;
		int rc = -1;
		if (f) {
			/*
			 * Colours 0-255 are the palette's (as the program said them), 256
			 * and up an RGB value plus 256 (so that every RGB value, black
			 * too, is exact), in the semicolon form every such terminal
			 * reads; the rest is term's own.
			 */
			fprintf(f,
				"%s|%s with direct colour for workrex,\n"
				"\tRGB, colors#0x1000100, pairs#0x10000,\n"
				"\tsetaf=\\E[%%?%%p1%%{8}%%<%%t3%%p1%%d%%e%%p1%%{16}%%<%%t9%%p1%%{"
				"8}%%-%%d"
				"%%e%%?%%p1%%{256}%%<%%t38;5;%%p1%%d%%e38;2;%%p1%%{256}%%-%%Pa%%ga%"
				"%{65536}"
				"%%/%%d;%%ga%%{256}%%/%%{255}%%&%%d;%%ga%%{255}%%&%%d%%;%%;m,\n"
				"\tsetab=\\E[%%?%%p1%%{8}%%<%%t4%%p1%%d%%e%%p1%%{16}%%<%%t10%%p1%%{"
				"8}%%-%%d"
				"%%e%%?%%p1%%{256}%%<%%t48;5;%%p1%%d%%e48;2;%%p1%%{256}%%-%%Pa%%ga%"
				"%{65536}"
				"%%/%%d;%%ga%%{256}%%/%%{255}%%&%%d;%%ga%%{255}%%&%%d%%;%%;m,\n",
				name, term);
			fprintf(f, "\tuse=%s,\n", term);
			fclose(f);
			char *argv[] = {"tic", "-x", "-o", d, src, NULL};
			struct proc_opts o = PROC_OPTS_DEFAULT;
			o.in = o.out = o.err = PROC_NULL;
			rc = proc_run(argv, &o);
			unlink(src);
		}
		free(src);
		if (rc != 0) {
			log_msg("direct colour: tic could not make %s (%s); 256 colours", name,
				f ? "tic failed" : strerror(errno));
			free(d);
			free(name);
			return NULL;
		}
	}
	*dir = d;
	return name;
}

int terminfo_direct_kind(void)
{
	if (tigetnum("colors") < (1 << 24))
		return TERMINFO_PALETTE;
	char *setaf = tigetstr("setaf");
	if (setaf == NULL || setaf == (char *)-1)
		return TERMINFO_DIRECT;
	char s100[64], s256[64];
	snprintf(s100, sizeof s100, "%s", tiparm(setaf, 100));
	snprintf(s256, sizeof s256, "%s", tiparm(setaf, 256 + 0x123456));
	if (!strstr(s100, "5;100m"))
		return TERMINFO_DIRECT;
	return strstr(s256, "2;18;52;86m") ? TERMINFO_DIRECT256_SHIFTED : TERMINFO_DIRECT256;
}

static const char *string(const char *cap)
{
	char *v = tigetstr(cap);
	return v == NULL || v == (char *)-1 ? NULL : v;
}

void terminfo_extras(const char *term, struct terminfo_extras *x)
{
	bool tmux = !strncmp(term, "tmux", 4) || getenv("TMUX") != NULL;
	x->strike = string("smxx");
	x->underline_style = string("Smulx") ? string("Smulx") : tmux ? "\033[4:%p1%dm" : NULL;
	x->overline = string("Smol") ? string("Smol") : tmux ? "\033[53m" : NULL;
	x->underline_colour = string("Setulc") != NULL || tmux;
}
