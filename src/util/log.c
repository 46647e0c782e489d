/*
 * log.c - append-only diagnostics log under the state directory. Lines are
 * timestamped and written unbuffered so a crash loses nothing. Its size is
 * capped: past LOG_MAX bytes it becomes workrex.log.1 (the one before goes)
 * and a new one starts; every process that writes to it (the dashboard,
 * keepers, commands) notices on its next line and follows.
 */
#include "log.h"

#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static FILE *log_file;
static char *log_path; /* owned */
static void (*fail_fn)(void *arg, const char *why);
static void *fail_arg;
static bool failing; /* said; until a line is written again */

void log_on_failure(void (*fn)(void *arg, const char *why), void *arg)
{
	fail_fn = fn;
	fail_arg = arg;
}

char *state_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char *dir;
	if (xdg && *xdg == '/')
		dir = xasprintf("%s/workrex", xdg);
	else if (home && *home)
		dir = xasprintf("%s/.local/state/workrex", home);
	else
		return NULL;
	if (mkdir_p(dir, 0700) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

int log_open(void)
{
	char *dir = state_dir();
	if (dir == NULL)
		return -ENOENT;
	free(log_path);
	log_path = xasprintf("%s/workrex.log", dir);
	free(dir);
	log_file = fopen(log_path, "ae");
	if (log_file == NULL)
		return -errno;
	setvbuf(log_file, NULL, _IONBF, 0);
	return 0;
}

void log_close(void)
{
	if (log_file)
		fclose(log_file);
	log_file = NULL;
	free(log_path);
	log_path = NULL;
}

/* Past the cap: rotate, unless another process did already; then write to the new file. */
static void log_rotate(void)
{
	struct stat mine, now;
	if (fstat(fileno(log_file), &mine) < 0 || mine.st_size < LOG_MAX)
		return;
	if (stat(log_path, &now) == 0 && now.st_ino == mine.st_ino && now.st_dev == mine.st_dev) {
		char *old = xasprintf("%s.1", log_path);
		rename(log_path, old);
		free(old);
	}
	FILE *f = fopen(log_path, "ae");
	if (f == NULL)
		return;
	setvbuf(f, NULL, _IONBF, 0);
	fclose(log_file);
	log_file = f;
}

void log_msg(const char *fmt, ...)
{
	if (log_file == NULL)
		return;
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	log_rotate();
	if (fprintf(log_file, "%s [%ld] %s\n", stamp, (long)getpid(), msg) < 0) {
		if (!failing && fail_fn) {
			failing = true; /* first: what fn logs in turn is not said again */
			char *why =
				xasprintf("log: %s: %s (its lines are lost until there is room)",
					  log_path, strerror(errno));
			fail_fn(fail_arg, why);
			free(why);
		}
	} else {
		failing = false;
	}
	free(msg);
}
