#!/bin/sh
# tests/sandbox/image.sh - the sandbox tests' own image, built without any
# registry: a Debian root filesystem from Debian's packages (debootstrap,
# with git, curl and iptables), imported into podman as workrex-test:latest.
# Both the root filesystem and the image are cached; a second run costs
# nothing.
set -eu
: "${CONTAINERS_CONF:?set CONTAINERS_CONF (runc, no default ulimits)}"
cache=${WORKREX_TEST_CACHE:-/var/cache/workrex-test}
image=workrex-test:latest
# The root's contents change now and then: its version is a label on the image.
version=3
if [ "$(podman image inspect --format '{{index .Labels "workrex.rootfs"}}' "$image" 2>/dev/null)" = "$version" ]; then
	exit 0
fi
mkdir -p "$cache"
if [ ! -x "$cache/rootfs/usr/bin/git" ] || [ ! -x "$cache/rootfs/usr/bin/curl" ] ||
	[ ! -x "$cache/rootfs/usr/sbin/iptables" ]; then
	rm -rf "$cache/rootfs.tmp"
	echo "sandbox tests: building a Debian root filesystem in $cache (once)" >&2
	debootstrap --variant=minbase --include=git,ca-certificates,curl,iptables bookworm "$cache/rootfs.tmp" \
		"${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/debootstrap.log" 2>&1 ||
		{ tail -20 "$cache/debootstrap.log" >&2; exit 1; }
	rm -rf "$cache/rootfs"
	mv "$cache/rootfs.tmp" "$cache/rootfs"
fi
tar -C "$cache/rootfs" -c . | podman import -q --change "LABEL=workrex.rootfs=$version" - "$image" >/dev/null
