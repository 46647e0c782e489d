/*
 * dashboard.h - run the full-screen dashboard until the user quits.
 */
#ifndef WRX_DASHBOARD_H
#define WRX_DASHBOARD_H

struct ui;

struct dashboard_opts {
	const char *config_file; /* --config, replaces the project file; NULL: search */
};

/* Returns the process exit status. */
int dashboard_run(const struct dashboard_opts *opts);

#endif
