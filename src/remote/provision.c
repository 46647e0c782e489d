/*
 * provision.c - a host made, found and destroyed by the user's commands
 * (provision.h).
 */
#include "provision.h"

#include "../util/beneath.h"
#include "../util/log.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A step gets this long: a cloud VM's create takes minutes. */
#define STEP_TIMEOUT_MS (15 * 60 * 1000)

static const char *const step_names[PROVISION_STEPS] = {"create", "start", "endpoint", "stop",
							"destroy"};

bool provision_used(const struct remote_host *h)
{
	return h->provision[PROVISION_ENDPOINT].n > 0;
}

/* state/provision and the host's record's name in it; NULL + errno. */
static char *record(const struct remote_host *h, const char *root, char **dir)
{
	char *state = state_dir();
	if (state == NULL)
		return NULL;
	*dir = xasprintf("%s/provision", state);
	free(state);
	if (mkdir(*dir, 0700) < 0 && errno != EEXIST) {
		free(*dir);
		return NULL;
	}
	return xasprintf("%s-%08x", h->name, str_hash(WRX_HASH_INIT, root));
}

/* What the record says: "made DEST", "half", or NULL (nothing made). */
static char *record_read(const struct remote_host *h, const char *root)
{
	char *dir = NULL, *name = record(h, root, &dir), *text = NULL;
	if (name == NULL || beneath_read(dir, name, 4096, &text) < 0)
		text = NULL;
	free(dir);
	free(name);
	if (text)
		text[strcspn(text, "\n")] = '\0';
	return text;
}

static void record_write(const struct remote_host *h, const char *root, const char *what)
{
	char *dir = NULL, *name = record(h, root, &dir);
	if (name == NULL)
		return;
	if (what == NULL) {
		char *p = xasprintf("%s/%s", dir, name);
		unlink(p);
		free(p);
	} else {
		char *text = xasprintf("%s\n", what);
		if (beneath_write(dir, name, text, strlen(text), 0600) < 0)
			log_msg("provision %s: cannot record '%s'", h->name, what);
		free(text);
	}
	free(dir);
	free(name);
}

char *provision_dest(const struct remote_host *h, const char *root)
{
	char *r = record_read(h, root);
	char *dest = r && !strncmp(r, "made ", 5) && r[5] ? xstrdup(r + 5) : NULL;
	free(r);
	return dest;
}

/* word with {host}, {project} and {id} as they are for this project. */
static char *expand(const char *word, const struct remote_host *h, const char *root)
{
	const char *base = strrchr(root, '/');
	char id[16];
	snprintf(id, sizeof id, "%08x", str_hash(WRX_HASH_INIT, root));
	const struct {
		const char *name, *value;
	} vars[] = {{"{host}", h->name},
		    {"{project}", base && base[1] ? base + 1 : root},
		    {"{id}", id}};
	struct buf b = {0};
	buf_addstr(&b, "");
	for (const char *p = word; *p;) {
		size_t i = 0;
		while (i < WRX_ARRAY_LEN(vars) && strncmp(p, vars[i].name, strlen(vars[i].name)))
			i++;
		if (i < WRX_ARRAY_LEN(vars)) {
			buf_addstr(&b, vars[i].value);
			p += strlen(vars[i].name);
		} else {
			buf_addch(&b, *p++);
		}
	}
	return b.data;
}

/*
 * Run step s: its output in *out (stdout; stderr is shown as it comes, as
 * progress). 0, or -1 with *cause naming the step and what it said last.
 */
static int step(const struct remote_host *h, const char *root, int s, struct buf *out, char **cause)
{
	const struct strlist *t = &h->provision[s];
	struct strlist argv = {0};
	for (size_t i = 0; i < t->n; i++) {
		char *w = expand(t->v[i], h, root);
		strlist_add(&argv, w);
		free(w);
	}
	fprintf(stderr, "remote %s: %s (%s)\n", h->name, step_names[s], argv.v[0]);
	struct buf err = {0};
	char **av = strlist_argv(&argv);
	struct proc_opts o = PROC_OPTS_DEFAULT;
	int st = proc_capture(av, &o, NULL, 0, out, &err, STEP_TIMEOUT_MS);
	free(av);
	strlist_free(&argv);
	if (st != 0) {
		/* Its own words, the last lines of them, say why. */
		const char *text = err.len ? err.data : out && out->len ? out->data : "";
		size_t n = strlen(text), from = n > 600 ? n - 600 : 0;
		*cause = xasprintf("remote.hosts.%s.provision.%s failed (%s): %s", h->name,
				   step_names[s],
				   st == 127   ? "not found"
				   : st >= 128 ? "killed or timed out"
					       : "exit status",
				   *text ? text + from : "(it said nothing)");
		size_t len = strlen(*cause);
		while (len && (*cause)[len - 1] == '\n')
			(*cause)[--len] = '\0';
	}
	buf_free(&err);
	return st == 0 ? 0 : -1;
}

/* create failed: what it made, destroyed; or, when that fails too, recorded as half made. */
static void undo_create(const struct remote_host *h, const char *root, char **cause)
{
	char *why = NULL;
	if (h->provision[PROVISION_DESTROY].n == 0 ||
	    step(h, root, PROVISION_DESTROY, NULL, &why) < 0) {
		record_write(h, root, "half");
		char *more = xasprintf("%s; what it made may remain%s%s (workrex rm of its agent, "
				       "or provision.destroy by hand, ends it)",
				       *cause, why ? ": " : "", why ? why : "");
		free(*cause);
		*cause = more;
	} else {
		record_write(h, root, NULL);
	}
	free(why);
}

/* endpoint's first line: an ssh destination, or an ssh:// URL; NULL when it is neither. */
static char *destination(const struct buf *out)
{
	if (out->data == NULL)
		return NULL;
	size_t n = strcspn(out->data, "\r\n");
	char *d = xstrndup(out->data, n);
	bool ok = n > 0 && d[0] != '-';
	for (const unsigned char *c = (const unsigned char *)d; ok && *c; c++)
		ok = *c > ' ' && *c != 0x7f && *c != '\'' && *c != '"' && *c != '\\';
	if (!ok) {
		free(d);
		return NULL;
	}
	return d;
}

int provision_up(const struct remote_host *h, const char *root, char **dest, char **cause)
{
	*dest = NULL;
	char *r = record_read(h, root);
	bool made = r && !strncmp(r, "made", 4);
	free(r);
	if (!made && h->provision[PROVISION_CREATE].n) {
		record_write(h, root, "half"); /* a kill -9 from here leaves it named */
		if (step(h, root, PROVISION_CREATE, NULL, cause) < 0) {
			undo_create(h, root, cause);
			return -1;
		}
	} else if (made && h->provision[PROVISION_START].n &&
		   step(h, root, PROVISION_START, NULL, cause) < 0) {
		return -1;
	}
	struct buf out = {0};
	int rc = step(h, root, PROVISION_ENDPOINT, &out, cause);
	if (rc == 0 && (*dest = destination(&out)) == NULL) {
		*cause = xasprintf("remote.hosts.%s.provision.endpoint printed no ssh destination "
				   "(user@host or ssh://user@host:port on its first line)",
				   h->name);
		rc = -1;
	}
	buf_free(&out);
	if (rc == 0) {
		char *what = xasprintf("made %s", *dest);
		record_write(h, root, what);
		free(what);
	}
	return rc;
}

int provision_stop(const struct remote_host *h, const char *root, char **cause)
{
	char *r = record_read(h, root);
	bool made = r && !strncmp(r, "made", 4);
	free(r);
	if (!made || h->provision[PROVISION_STOP].n == 0)
		return 0;
	return step(h, root, PROVISION_STOP, NULL, cause) < 0 ? -1 : 1;
}

int provision_down(const struct remote_host *h, const char *root, char **cause)
{
	char *r = record_read(h, root);
	bool any = r != NULL;
	free(r);
	if (!any || h->provision[PROVISION_DESTROY].n == 0)
		return 0;
	if (step(h, root, PROVISION_DESTROY, NULL, cause) < 0)
		return -1;
	record_write(h, root, NULL);
	return 0;
}
