/*
 * cmd_kinds.c - `workrex agents`: the agent kinds workrex knows
 * (config/kinds.h), which of them are installed, and the profiles of the
 * global `agents:` map with the kind each one is.
 */
#include "cmd.h"

#include "../config/kinds.h"
#include "../util/util.h"
#include "cmd_setup.h"
#include "../util/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prompt_form(const struct agent_kind *k)
{
	return k->prompt == KIND_PROMPT_ARG    ? "argument"
	       : k->prompt == KIND_PROMPT_FLAG ? "flag"
					       : "typed";
}

/* "4m ago", "2h ago", "3d ago", or "-": when its hooks last reached a dashboard. */
static void heard_ago(const struct agent_kind *k, char *out, size_t n)
{
	uint64_t at = kind_heard(k), now = wall_ms();
	uint64_t s = at && now > at ? (now - at) / 1000 : 0;
	if (at == 0 || k->hooks == KIND_HOOKS_NONE)
		snprintf(out, n, "-");
	else if (s < 60)
		snprintf(out, n, "just now");
	else if (s < 3600)
		snprintf(out, n, "%llum ago", (unsigned long long)(s / 60));
	else if (s < 86400)
		snprintf(out, n, "%lluh ago", (unsigned long long)(s / 3600));
	else
		snprintf(out, n, "%llud ago", (unsigned long long)(s / 86400));
}

static json_object *kind_json(const struct agent_kind *k, const struct trust_place *at)
{
	json_object *o = json_object_new_object();
	json_add_str(o, "name", k->name);
	json_add_str(o, "title", k->title);
	json_object_object_add(o, "installed", json_object_new_boolean(kind_installed(k)));
	json_add_str(o, "prompt", prompt_form(k));
	json_add_str(o, "resume", k->resume);
	json_add_str(o, "fork", k->fork);
	json_add_str(o, "sandbox_flag", k->approve);
	json_add_str(o, "auto_name", k->auto_name);
	json_object_object_add(o, "hooks", json_object_new_boolean(k->hooks != KIND_HOOKS_NONE));
	/* Installed for this user, and heard from; its events and what each reports. */
	json_add_str(o, "hooks_state", setup_state(k, getenv("HOME"), at));
	uint64_t heard = kind_heard(k);
	json_object_object_add(o, "heard", heard ? json_object_new_int64((int64_t)heard) : NULL);
	json_object *events = json_object_new_array();
	for (const struct kind_event *e = k->events; e && e->event; e++) {
		json_object *ev = json_object_new_object();
		json_add_str(ev, "event", e->event);
		json_add_str(ev, "matcher", e->matcher);
		json_add_str(ev, "status", e->status);
		json_object_array_add(events, ev);
	}
	json_object_object_add(o, "events", events);
	/* Where its hooks go, what it says with none, which sessions adopt can show, its usage. */
	const char *home = getenv("HOME");
	char *hooks = kind_hooks_path(k, home), *dir = kind_config_dir(k, home);
	char *reg = dir && k->registry ? xasprintf("%s/%s", dir, k->registry) : NULL;
	json_add_str(o, "hooks_file", hooks);
	json_add_str(o, "registry", reg);
	json_add_str(o, "sessions_list", k->sessions_list);
	json_add_str(o, "usage", k->usage);
	free(reg);
	free(dir);
	free(hooks);
	json_add_str(o, "install", k->install);
	json_add_str(o, "doc", k->doc);
	return o;
}

/* The global file's profiles (agents: is global-only); none when it does not load. */
static void load_profiles(struct config *c)
{
	config_init(c);
	char *g = config_global_path(), *cause = NULL;
	if (g && config_load(c, g, true, &cause) < 0) {
		fprintf(stderr, "workrex: agents: %s (profiles not shown)\n", cause);
		free(cause);
	}
	free(g);
}

int cmd_agent_kinds(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool json = cmd_given(ctx, "json");
	if (json && cmd_given(ctx, "man"))
		return cmd_usage(ctx->self);
	if (cmd_given(ctx, "man")) {
		const char *which = cmd_value(ctx, "man");
		if (which && strcmp(which, "status") != 0)
			return cmd_usage(ctx->self);
		struct buf b = {0};
		if (which)
			kind_reference_status_man(&b);
		else
			kind_reference_man(&b);
		fwrite(b.data, 1, b.len, stdout);
		buf_free(&b);
		return 0;
	}
	struct config c;
	load_profiles(&c);
	/* Trusted or not: for a new agent of the project we are in. */
	struct trust_place at;
	trust_place_find(ctx->cwd, &at);
	if (json) {
		json_object *o = json_object_new_object(), *kinds = json_object_new_array();
		json_object *profiles = json_object_new_array();
		for (size_t i = 0; i < agent_nkinds; i++)
			json_object_array_add(kinds, kind_json(&agent_kinds[i], &at));
		for (size_t i = 0; i < c.nagents; i++) {
			const struct agent_kind *k = kind_of(&c, c.agents[i].name);
			json_object *p = json_object_new_object();
			json_add_str(p, "name", c.agents[i].name);
			json_add_str(p, "command", c.agents[i].command);
			json_add_str(p, "kind", k ? k->name : NULL);
			json_object_array_add(profiles, p);
		}
		json_object_object_add(o, "kinds", kinds);
		json_object_object_add(o, "profiles", profiles);
		printf("%s\n",
		       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		trust_place_free(&at);
		config_free(&c);
		return 0;
	}
	/* HOOKS: installed for you (setup); HEARD: when one last reached a dashboard. */
	printf("%-12s %-9s %-8s %-6s %-4s %-9s %-8s %s\n", "KIND", "INSTALLED", "PROMPT", "RESUME",
	       "FORK", "HOOKS", "HEARD", "IN A SANDBOX");
	for (size_t i = 0; i < agent_nkinds; i++) {
		const struct agent_kind *k = &agent_kinds[i];
		const char *state = setup_state(k, getenv("HOME"), &at);
		char heard[32];
		heard_ago(k, heard, sizeof heard);
		printf("%-12s %-9s %-8s %-6s %-4s %-9s %-8s %s\n", k->name,
		       kind_installed(k) ? "yes" : "-", prompt_form(k), k->resume ? "yes" : "-",
		       k->fork ? "yes" : "-", state ? state : "-", heard,
		       k->approve ? k->approve : "(asks)");
	}
	if (c.nagents)
		printf("\n%-13s %-13s %s\n", "PROFILE", "KIND", "COMMAND");
	for (size_t i = 0; i < c.nagents; i++) {
		const struct agent_kind *k = kind_of(&c, c.agents[i].name);
		printf("%-13s %-13s %s\n", c.agents[i].name, k ? k->name : "(a command)",
		       c.agents[i].command);
	}
	trust_place_free(&at);
	config_free(&c);
	return 0;
}
