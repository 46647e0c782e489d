/*
 * table.h - every configuration key, once, as data.
 *
 * In the manner of tmux's options-table.c: one row per key with its dotted
 * path, type, where it lives in struct config, its default, the values it
 * allows, who may set it and one line of help. Four things are driven by
 * the rows, so that they cannot disagree:
 *
 *   - the YAML walk (config.c): a key not in the table is unknown, a
 *     global-only key in a project file is ignored, a command key needs
 *     trust, a value is checked against its type and choices;
 *   - the defaults (config_init sets each row's default);
 *   - `workrex config reference` and `workrex init` (reference.c);
 *   - the KEY REFERENCE section of workrex.yaml(5), which
 *     `workrex config reference --man` prints and `make man` splices in.
 *
 * tests/unit/test_config.c loads the reference back and checks that every
 * key comes out at its default, and that the man page holds exactly the
 * generated section.
 *
 * Rows are in tree order: a section comes before its keys, and a key
 * directly follows its section's earlier keys.
 */
#ifndef WRX_CONFIG_TABLE_H
#define WRX_CONFIG_TABLE_H

#include <stddef.h>

enum config_type {
	CONFIG_SECTION, /* a mapping of the keys below it */
	CONFIG_STRING,  /* char *; NULL when unset */
	CONFIG_PATH,    /* char *: absolute, ~/ expanded */
	CONFIG_BOOL,    /* bool */
	CONFIG_NUMBER,  /* long, min..max */
	CONFIG_CHOICE,  /* char *, one of choices */
	CONFIG_LIST,    /* struct strlist; "<global>" splices the global file's */
	CONFIG_ENV,     /* struct strlist of "NAME=value", from NAME: value */
	CONFIG_KEY,     /* int, a key name (keys.h) */
	CONFIG_AGENTS,  /* name: {command, args, env} */
	CONFIG_PANES,   /* list of {command, split, size|percentage, focus} */
	CONFIG_LAYOUTS, /* name: {panes: [...]} */
	CONFIG_MOUNTS,  /* list of path | {host_path, guest_path, writable} */
	CONFIG_BINDS,   /* key: action */
	CONFIG_DOMAINS, /* list of name | "*.name" | {host, allow_private_ips} (net/hostname.h) */
	CONFIG_HOSTS,   /* name: {ssh, path, docker | podman} (struct remote_host) */
	CONFIG_WORKSPACES, /* name: {repos: [PATH...]} (struct workspace_def) */
	CONFIG_ANY,        /* accepted as it is: read by nothing yet */
};

enum {
	/* A project file that sets it gets a warning, and it is ignored. */
	CONFIG_GLOBAL_ONLY = 1 << 0,
	/*
	 * The host runs it, or writes or reads where it says: in a project
	 * file it counts only once trusted.
	 */
	CONFIG_COMMAND = 1 << 1,
	/* A project file may set it true, never false over a global true. */
	CONFIG_ONLY_ON = 1 << 2,
	/* A CONFIG_STRING that is a size: a number and GiB, MiB, TiB, G or M. */
	CONFIG_SIZE = 1 << 3,
	/*
	 * Its value is an argument of a command (the row's sink) where an
	 * option could be read: one beginning with '-' is refused, in any file.
	 */
	CONFIG_ARGUMENT = 1 << 4,
	/*
	 * Paths beneath the project: one that leaves it (an absolute path,
	 * "..", a directory on the way that is a link) is refused where used.
	 */
	CONFIG_BENEATH = 1 << 5,
};

struct config_key {
	const char *path; /* "sandbox.container.memory" */
	enum config_type type;
	unsigned flags;
	size_t offset; /* of the value in struct config; 0 for sections and CONFIG_ANY */
	/*
	 * The default as YAML writes it: what config_init sets and the
	 * reference shows. NULL: unset (null), and `unset` says what that
	 * means ("detected", "none").
	 */
	const char *def;
	const char *unset;
	const char *const *choices; /* CONFIG_CHOICE: NULL-terminated */
	long min, max;              /* CONFIG_NUMBER */
	/*
	 * Set, for what is not built yet: a value other than the default is
	 * warned about with this reason (": sandboxed agents do not start").
	 */
	const char *not_yet;
	const char *help; /* one line; the man page's prose says more */
	/*
	 * Where the value goes when it leaves workrex, for one that reaches a
	 * command's arguments, a shell, a path or a URL: the reference and
	 * the man page say it, and a refusal names it. NULL: nowhere such.
	 */
	const char *sink;
	/* CONFIG_SECTION: the key a plain value sets (notify: bell is notify.mode: bell), or NULL. */
	const char *scalar;
};

extern const struct config_key config_keys[];
extern const size_t config_nkeys;

/* The row for a dotted path, or NULL. */
const struct config_key *config_key_find(const char *path);
/* The type's name for the reference and the man page ("list", "number"). */
const char *config_type_name(enum config_type t);

#endif
