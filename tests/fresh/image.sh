#!/bin/sh
# tests/fresh/image.sh - a Debian 12 root with nothing but git
# (debootstrap --variant=minbase --include=git), imported into podman as
# workrex-fresh:latest: the machine the README's commands must work on.
#
# The tests run it without a network (--network none: tests reach no other
# address), so the Debian packages workrex's set-up installs are fetched
# here, once, into the root's apt cache (apt-get --download-only): present
# as .deb files, not installed. Root and image are cached between runs.
set -eu
: "${CONTAINERS_CONF:?set CONTAINERS_CONF (runc, no default ulimits)}"
here=$(cd "$(dirname "$0")" && pwd)
cache=${WORKREX_TEST_CACHE:-/var/cache/workrex-test}
image=workrex-fresh:latest
pkgs=$(sh "$here/../../scripts/deps.sh" --test --list)
stamp=$(echo "$pkgs" | cksum | cut -d' ' -f1)
if podman image exists "$image" &&
	[ "$(podman image inspect --format '{{index .Labels "workrex.deps"}}' "$image" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
root=$cache/fresh-rootfs
mkdir -p "$cache"
if [ ! -f "$root/.deps-$stamp" ]; then
	rm -rf "$root" "$root.tmp"
	echo "fresh: building a Debian 12 root with only git in $root (once)" >&2
	debootstrap --variant=minbase --include=git bookworm "$root.tmp" \
		"${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/fresh-debootstrap.log" 2>&1 ||
		{ tail -20 "$cache/fresh-debootstrap.log" >&2; exit 1; }
	cp /etc/resolv.conf "$root.tmp/etc/resolv.conf"
	echo "fresh: fetching the packages set-up will install, into its apt cache" >&2
	chroot "$root.tmp" sh -c "apt-get update -q && apt-get install -y -q --download-only --no-install-recommends $pkgs" \
		>"$cache/fresh-download.log" 2>&1 || { tail -20 "$cache/fresh-download.log" >&2; exit 1; }
	rm -f "$root.tmp/etc/resolv.conf"
	touch "$root.tmp/.deps-$stamp"
	mv "$root.tmp" "$root"
fi
podman rmi -f "$image" >/dev/null 2>&1 || true
tar -C "$root" --exclude "./.deps-*" -c . |
	podman import -q --change "LABEL workrex.deps=$stamp" - "$image" >/dev/null
