#!/bin/sh
# Install the Debian packages workrex needs to build (and, with --test, to run
# its tests), only those that are missing. Uses sudo when not root.
#   deps.sh [--test]         install what is missing, showing apt's progress
#   deps.sh [--test] --list  print the package names and stop
set -eu

build="gcc make pkg-config ncurses-bin libncurses-dev libvterm-dev libuv1-dev libyaml-dev libjson-c-dev libgit2-dev libwebsockets-dev libwebsockets-evlib-uv libqrencode-dev libgpg-error-dev"
test="libcmocka-dev tmux strace python3 clang clang-format pmccabe libclang-rt-14-dev ncurses-term less vim vttest git procps podman runc debootstrap iproute2 zsh fish nodejs bubblewrap runsc xvfb xclip openssh-server openssh-client tinyproxy chromium chromium-driver curl"

want=$build
list=false
for arg; do
	case $arg in
	--test) want="$build $test" ;;
	--list) list=true ;;
	*) echo "usage: deps.sh [--test] [--list]" >&2; exit 2 ;;
	esac
done
if $list; then
	echo $want
	exit 0
fi

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
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "workrex: missing packages:$missing; as root: apt-get install$missing" >&2
		exit 1
	}
	sudo="sudo"
fi
n=$(echo $missing | wc -w)
echo "workrex: installing $n Debian packages (once):$missing" >&2
export DEBIAN_FRONTEND=noninteractive
install() {
	# -q: one line per package fetched and set up, no progress bars; apt's
	# own exit status, through a file (a POSIX pipeline has only the last's).
	st=$(mktemp)
	{
		$sudo apt-get install -y -q --no-install-recommends $missing 2>&1
		echo $? >"$st"
	} | grep --line-buffered -E '^(Get:|Setting up|E:)' | sed -u 's/^/  /' >&2 || true
	rc=$(cat "$st")
	rm -f "$st"
	return "$rc"
}
# Package lists that are there are tried first: no network needed when the
# packages are in apt's cache; without lists (a fresh system), or when they
# are stale, they are fetched and the install tried again.
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1 || ! install; then
	echo "workrex: fetching Debian's package lists" >&2
	$sudo apt-get update -q >&2
	install
fi
for p in $missing; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || {
		echo "workrex: $p did not install" >&2
		exit 1
	}
done
echo "workrex: packages installed" >&2
