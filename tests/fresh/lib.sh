# tests/fresh/lib.sh - what the fresh tests share on ../e2e/lib.sh: the
# README's commands as a newcomer pastes them, and a clone of the project
# as a user gets it. The Debian 12 root (image.sh) has nothing but git and
# no network: its apt cache holds the packages.
. "$(dirname "$0")/../e2e/lib.sh"
trap stop EXIT

root=$(cd "$(dirname "$0")/../.." && pwd)

# readme_command N: the README's N-th command, as a newcomer pastes it.
readme_command() {
	awk '/^```sh$/ { inblock = 1; next } /^```$/ { exit } inblock { print }' "$src/README.md" |
		sed -n "${1}p"
}

# A clone of the project, as a user gets it (committed files only).
fresh_clone() {
	src=$E2E_TMP/src
	rm -rf "$src"
	git clone -q "$root" "$src"
}

