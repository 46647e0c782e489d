/*
 * status.h - the one vocabulary of an agent's status: the enum and the
 * words for it, in one table (status.c).
 *
 * The words are what `workrex set-status` and the set_status request take,
 * what `list` and `wait --status` show and accept, and the names under
 * `status_icons` in the config. Everything that spells a status asks here;
 * the static guest client links this file too.
 */
#ifndef WRX_STATUS_H
#define WRX_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum wrx_status {
	WRX_STATUS_NONE,
	WRX_STATUS_WORKING,
	WRX_STATUS_WAITING,
	WRX_STATUS_DONE,
	/* Its program ended with an error before it said done (session.c). */
	WRX_STATUS_FAILED,
	/* Shown only: working, but its pane has been silent (session.h). */
	WRX_STATUS_INTERRUPTED,
	WRX_STATUS_COUNT,
};

/* The words, for tables that need them as constants (hook specs); status.c has them all. */
#define STATUS_WORKING "working"
#define STATUS_WAITING "waiting"
#define STATUS_DONE "done"
#define STATUS_FAILED "failed"
#define STATUS_CLEAR "clear" /* an agent reports none */

/* What an agent reports or the dashboard shows for st: "working", ... ; none: "-". */
const char *status_word(enum wrx_status st);
/*
 * The status an agent may report by word: working, waiting, done, failed
 * (its turn died: an API error), or clear (none). 0, or -1 for any other word.
 */
int status_parse(const char *word, enum wrx_status *st);
/* A status an agent reaches (working, waiting, done, failed): what wait and the icons name. */
int status_parse_reached(const char *word, enum wrx_status *st);
/*
 * Hooks arrive out of order (each is a process of its own): is a status
 * fired at `at` (wall ms; 0: not said) older than the one the agent holds,
 * fired at `last` (0: none)? Then it changes nothing, so that a late
 * working never undoes a done. At the same time, a working after a
 * settled status (waiting, done, failed) is the late one.
 */
bool status_late(uint64_t at, uint64_t last, enum wrx_status st, enum wrx_status cur);
/*
 * How an agent's program ended, from its wait status: the status it leaves
 * (done when it exited 0, else failed) and, failed, how ("exit 127",
 * "killed by signal 9") in how[len].
 */
enum wrx_status status_ended(int wstatus, char *how, size_t len);

/* "working|waiting|done|failed|clear", for usage and error messages. */
const char *status_choices(void);

#endif
