/*
 * status.c - the status words (status.h).
 */
#include "status.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static const struct {
	const char *word;
	bool reported; /* an agent reports it (set-status) */
	bool reached;  /* wait and status_icons name it */
} table[WRX_STATUS_COUNT] = {
	[WRX_STATUS_NONE] = {"-", false, false},
	[WRX_STATUS_WORKING] = {STATUS_WORKING, true, true},
	[WRX_STATUS_WAITING] = {STATUS_WAITING, true, true},
	[WRX_STATUS_DONE] = {STATUS_DONE, true, true},
	[WRX_STATUS_FAILED] = {STATUS_FAILED, true, true},
	[WRX_STATUS_INTERRUPTED] = {"interrupted", false, false},
};

const char *status_word(enum wrx_status st)
{
	return (unsigned)st < WRX_STATUS_COUNT ? table[st].word : "-";
}

static int parse(const char *word, bool reported, enum wrx_status *st)
{
	if (word == NULL)
		return -1;
	if (reported && strcmp(word, STATUS_CLEAR) == 0) {
		*st = WRX_STATUS_NONE;
		return 0;
	}
	for (int i = 0; i < WRX_STATUS_COUNT; i++) {
		if ((reported ? table[i].reported : table[i].reached) &&
		    strcmp(word, table[i].word) == 0) {
			*st = (enum wrx_status)i;
			return 0;
		}
	}
	return -1;
}

int status_parse(const char *word, enum wrx_status *st)
{
	return parse(word, true, st);
}

int status_parse_reached(const char *word, enum wrx_status *st)
{
	return parse(word, false, st);
}

const char *status_choices(void)
{
	return "working|waiting|done|failed|" STATUS_CLEAR;
}

enum wrx_status status_ended(int wstatus, char *how, size_t len)
{
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		return WRX_STATUS_DONE;
	if (WIFEXITED(wstatus))
		snprintf(how, len, "exit %d", WEXITSTATUS(wstatus));
	else if (WIFSIGNALED(wstatus))
		snprintf(how, len, "killed by signal %d", WTERMSIG(wstatus));
	else
		snprintf(how, len, "ended (status %d)", wstatus);
	return WRX_STATUS_FAILED;
}

bool status_late(uint64_t at, uint64_t last, enum wrx_status st, enum wrx_status cur)
{
	if (at == 0 || last == 0 || at > last)
		return false;
	if (at < last)
		return true;
	return st == WRX_STATUS_WORKING &&
	       (cur == WRX_STATUS_WAITING || cur == WRX_STATUS_DONE || cur == WRX_STATUS_FAILED);
}
