#!/bin/sh
# Install the Debian packages workrex needs to build (and, with --test, to run
# its tests), only those that are missing. Uses sudo when not root.
set -eu

build="gcc make pkg-config libncurses-dev libvterm-dev libuv1-dev libyaml-dev libjson-c-dev libgit2-dev"
test="libcmocka-dev tmux python3 clang libclang-rt-14-dev ncurses-term less git procps podman runc debootstrap iproute2 zsh fish"

want=$build
[ "${1:-}" = "--test" ] && want="$build $test"

missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "workrex: missing packages:$missing (install them with your package manager)" >&2
	exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "workrex: installing$missing" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
