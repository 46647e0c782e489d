/*
 * status.c - the status words (status.h).
 */
#include "status.h"

#include <stddef.h>
#include <string.h>

static const struct {
	const char *word;
	bool reported; /* an agent reports it (set-status); wait and status_icons name it */
} table[WRX_STATUS_COUNT] = {
	[WRX_STATUS_NONE] = {"-", false},
	[WRX_STATUS_WORKING] = {STATUS_WORKING, true},
	[WRX_STATUS_WAITING] = {STATUS_WAITING, true},
	[WRX_STATUS_DONE] = {STATUS_DONE, true},
	[WRX_STATUS_INTERRUPTED] = {"interrupted", false},
};

const char *status_word(enum wrx_status st)
{
	return (unsigned)st < WRX_STATUS_COUNT ? table[st].word : "-";
}

static int parse(const char *word, bool clear_too, enum wrx_status *st)
{
	if (word == NULL)
		return -1;
	if (clear_too && strcmp(word, STATUS_CLEAR) == 0) {
		*st = WRX_STATUS_NONE;
		return 0;
	}
	for (int i = 0; i < WRX_STATUS_COUNT; i++) {
		if (table[i].reported && strcmp(word, table[i].word) == 0) {
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
	return "working|waiting|done|" STATUS_CLEAR;
}
