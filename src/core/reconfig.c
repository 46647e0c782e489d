/*
 * reconfig.c - the config read again (a file changed, `workrex trust`, a
 * profile added a moment ago): the new one in force, the checks run if
 * its check changed, the sandboxes' proxies told the new policy.
 */
#include "wrx.h"

#include "../util/log.h"

#include <string.h>

int wrx_config_reload(struct wrx *w, struct strlist *warnings, char **cause)
{
	struct config c;
	if (wrx_config_read(w, &c, cause) < 0) {
		config_free(&c);
		log_msg("config reload: %s", *cause);
		return -1;
	}
	for (size_t i = 0; i < c.nwarnings; i++) {
		log_msg("config: %s", c.warnings[i]);
		if (warnings)
			strlist_add(warnings, c.warnings[i]);
	}
	bool new_check = c.check && (w->cfg.check == NULL || strcmp(c.check, w->cfg.check) != 0);
	config_free(&w->cfg);
	w->cfg = c;
	session_set_scrollback(w->s, w->cfg.scrollback);
	if (new_check)
		checks_all(w); /* trusted just now, or changed: the done candidates' */
	keep_proxy_policy(w);
	if (w->hooks->config_changed)
		w->hooks->config_changed(w->ui);
	wrx_relayout(w);
	return 0;
}
