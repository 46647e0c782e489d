/*
 * log.c - append-only diagnostics log under the state directory. Lines are
 * timestamped and written unbuffered so a crash loses nothing.
 */
#include "log.h"

#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static FILE *log_file;

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
	char *path = xasprintf("%s/workrex.log", dir);
	free(dir);
	log_file = fopen(path, "ae");
	free(path);
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
	fprintf(log_file, "%s [%ld] %s\n", stamp, (long)getpid(), msg);
	free(msg);
}
