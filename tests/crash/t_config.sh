#!/usr/bin/env bash
# Config edits killed at each fault point: the file holds its old bytes or
# its new ones, never a mix; the same command then succeeds and leaves no
# temporary file. allow-domain edits the user's config; trust writes the
# record of a trusted project file.
# points: config.* trust.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cfg="$XDG_CONFIG_HOME/workrex/config.yaml"

test_allow_domain() {
	local point action
	for point in config.written config.renamed; do
		for action in "${ACTIONS[@]}"; do
			make_repo
			mkdir -p "$(dirname "$cfg")"
			printf '# mine\nagent: bash\nsandbox:\n  network:\n    allowed_domains: [a.example]\n' >"$cfg"
			cp "$cfg" "$E2E_TMP/old"
			killed "$point" "$action" allow-domain b.example -y
			# Old bytes before the rename, new ones after: never a mix.
			if [ "$point" = config.written ]; then
				cmp -s "$cfg" "$E2E_TMP/old"
			else
				not cmp -s "$cfg" "$E2E_TMP/old"
				grep -q 'b.example' "$cfg" && grep -q '# mine' "$cfg"
			fi
			wrx list >/dev/null
			wrx allow-domain c.example -y >/dev/null
			grep -q 'c.example' "$cfg" && grep -q 'a.example' "$cfg"
			[ -z "$(ls "$(dirname "$cfg")" | grep -v '^config.yaml$')" ] ||
				{ echo "  left: $(ls "$(dirname "$cfg")")" >&2; return 1; }
			invariants
		done
	done
}

test_trust() {
	local action
	for action in "${ACTIONS[@]}"; do
		make_repo
		rm -rf "$XDG_STATE_HOME/workrex/trusted"
		mkdir -p "$(dirname "$cfg")"
		printf 'agent: bash\n' >"$cfg"
		printf 'post_create: ["touch %s/ran"]\n' "$E2E_TMP" >"$repo/.workrex.yaml"
		git -C "$repo" add .workrex.yaml && git -C "$repo" commit -qm cfg
		killed trust.written "$action" trust
		# Not trusted: its hook does not run.
		wrx add -b one --no-sandbox >/dev/null 2>&1 || true
		test ! -e "$E2E_TMP/ran"
		wrx trust >/dev/null
		wrx add -b two --no-sandbox >/dev/null 2>&1
		test -e "$E2E_TMP/ran"
		local left
		left=$(find "$XDG_STATE_HOME/workrex/trusted" -name '*.[0-9]*')
		[ -z "$left" ] || { echo "  left: $left" >&2; return 1; }
		rm -f "$E2E_TMP/ran"
		end_keepers
		invariants
	done
}

run_test "allow-domain killed before and after its rename: old bytes or new, then it works" test_allow_domain
run_test "trust killed before its rename: not trusted; trust then works, nothing left" test_trust
rm -rf "$E2E_TMP"
