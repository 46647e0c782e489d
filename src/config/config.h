/*
 * config.h - workrex's settings, read from YAML into one typed struct.
 *
 * Files are read in order (global, then project); later values win. Bad
 * YAML or a bad value is an error naming file:line:column; an unknown key
 * is a warning naming file:line. Only this module touches libyaml.
 *
 * This first reader knows the dashboard's keys (scrollback, keys, notify,
 * status_icons) and accepts, without acting on them yet, the other keys of
 * SPEC.md section 3 so that a full config file raises no false warnings.
 */
#ifndef WRX_CONFIG_H
#define WRX_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct config_bind {
	int key;
	int action; /* enum wrx_action */
	int arg;
};

struct config {
	size_t scrollback;
	int prefix; /* key code, C-b by default */
	struct config_bind *binds; /* owned */
	size_t nbinds;
	char *notify;       /* owned: off, bell, desktop, both */
	char *icons[3];     /* owned: working, waiting, done */
	char **warnings;    /* owned */
	size_t nwarnings;
};

void config_init(struct config *c);
void config_free(struct config *c);

/*
 * Read one file into c. A missing file is not an error (returns 0). On error
 * returns -1 with *err set ("file:line:col: message"; caller frees).
 */
int config_load(struct config *c, const char *path, bool global, char **err);

/* The global config path ($XDG_CONFIG_HOME/workrex/config.yaml); caller frees. */
char *config_global_path(void);
/* .workrex.yaml from dir upwards (stopping at a .git), or NULL; caller frees. */
char *config_project_path(const char *dir);

#endif
