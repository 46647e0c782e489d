/*
 * log.h - the workrex log file, $XDG_STATE_HOME/workrex/workrex.log.
 *
 * The dashboard owns the terminal, so nothing may print to stderr while it
 * runs; diagnostics go here instead. log_open() is optional: before it (or
 * if the file cannot be opened) messages are dropped.
 */
#ifndef WRX_LOG_H
#define WRX_LOG_H

/* workrex.log's size at most (then it is workrex.log.1, and a new one starts). */
#define LOG_MAX (8 << 20)

int log_open(void);
void log_close(void);
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * fn(arg, why) when a line cannot be written (a full disk): once, until a
 * line is written again. The dashboard shows it; NULL: nobody is told.
 */
void log_on_failure(void (*fn)(void *arg, const char *why), void *arg);

/* $XDG_STATE_HOME/workrex (created 0700); caller frees. NULL if no HOME. */
char *state_dir(void);

#endif
