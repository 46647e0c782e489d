#!/bin/sh
# tests/sandbox/sshd_image.sh - a server for the remote engine tests: a
# Debian root filesystem with sshd, git and podman (runc, for a sandbox
# there) and nothing of workrex's (debootstrap from Debian's packages, no
# registry), imported into podman as workrex-test-sshd:latest. Cached like
# image.sh's.
set -eu
: "${CONTAINERS_CONF:?set CONTAINERS_CONF (runc, no default ulimits)}"
cache=${WORKREX_TEST_CACHE:-/var/cache/workrex-test}
image=workrex-test-sshd:latest
version=2
if [ "$(podman image inspect --format '{{index .Labels "workrex.rootfs"}}' "$image" 2>/dev/null)" = "$version" ]; then
	exit 0
fi
mkdir -p "$cache"
if [ ! -x "$cache/rootfs-sshd/usr/sbin/sshd" ] || [ ! -x "$cache/rootfs-sshd/usr/bin/git" ] ||
	[ ! -x "$cache/rootfs-sshd/usr/bin/podman" ]; then
	rm -rf "$cache/rootfs-sshd.tmp"
	echo "remote engine tests: building a Debian root filesystem with sshd in $cache (once)" >&2
	debootstrap --variant=minbase \
		--include=git,openssh-server,podman,runc,containernetworking-plugins,ca-certificates,iptables \
		bookworm "$cache/rootfs-sshd.tmp" \
		"${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/debootstrap-sshd.log" 2>&1 ||
		{ tail -20 "$cache/debootstrap-sshd.log" >&2; exit 1; }
	rm -rf "$cache/rootfs-sshd"
	mv "$cache/rootfs-sshd.tmp" "$cache/rootfs-sshd"
fi
tar -C "$cache/rootfs-sshd" -c . | podman import -q --change "LABEL=workrex.rootfs=$version" - "$image" >/dev/null
