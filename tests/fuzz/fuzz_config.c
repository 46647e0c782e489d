/*
 * fuzz_config.c - libFuzzer target for what a cloned repository controls:
 * its .workrex.yaml, walked by the key table (src/config/config.c), then
 * written back out as `config check` does (src/config/reference.c).
 *
 * The first input byte picks a global file (which may set every key) or a
 * project file (whose global-only keys and untrusted commands are refused);
 * the rest is the file. A project file is loaded over a global one, so the
 * "<global>" splices and the only-on rule see a value to work on.
 */
#include "config/config.h"
#include "util/util.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *path, *global;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char dir[] = "/tmp/wrx-fuzz-config-XXXXXX";
	if (mkdtemp(dir) == NULL)
		abort();
	char *st = xasprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", st, 1);
	free(st);
	path = xasprintf("%s/.workrex.yaml", dir);
	global = xasprintf("%s/config.yaml", dir);
	FILE *f = fopen(global, "w");
	if (f == NULL)
		abort();
	fputs("post_create: [g1]\nfiles: {copy: [.env]}\nsandbox: {enabled: true}\n", f);
	fclose(f);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool as_global = data[0] & 1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	close(fd);
	struct config c;
	char *err = NULL;
	config_init(&c);
	if (!as_global && config_load(&c, global, true, &err) < 0)
		abort();
	if (config_load(&c, path, as_global, &err) < 0)
		free(err);
	struct buf out = {0};
	config_reference(&out, &c, 0);
	buf_free(&out);
	config_free(&c);
	return 0;
}
