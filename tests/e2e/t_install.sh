#!/usr/bin/env bash
# make install: the binary, the sandbox client and keeper beside it, the man pages,
# under PREFIX and DESTDIR; make uninstall takes them out again.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

root=$(cd "$(dirname "$0")/../.." && pwd)

t_make_install() {
	local dest=$E2E_TMP/dest build
	# The build under test (-o all: copied as it is, never rebuilt here).
	build=$(cd "$(dirname "$WORKREX")" && pwd)
	make -C "$root" --no-print-directory -o all install BUILD="$build" PREFIX=/usr \
		DESTDIR="$dest" >/dev/null
	test -x "$dest/usr/bin/workrex"
	test -x "$dest/usr/bin/workrex-guest"
	test -x "$dest/usr/bin/workrex-keeper"
	test -x "$dest/usr/bin/workrex-server"
	test -f "$dest/usr/share/man/man1/workrex.1"
	test -f "$dest/usr/share/man/man5/workrex.yaml.5"
	grep -q '^complete -F _workrex workrex' "$dest/usr/share/bash-completion/completions/workrex"
	grep -q '^#compdef workrex' "$dest/usr/share/zsh/site-functions/_workrex"
	grep -q '^complete -c workrex' "$dest/usr/share/fish/vendor_completions.d/workrex.fish"
	"$dest/usr/bin/workrex" --version | grep -q workrex
	make -C "$root" --no-print-directory uninstall PREFIX=/usr DESTDIR="$dest" >/dev/null
	test ! -e "$dest/usr/bin/workrex"
	test ! -e "$dest/usr/bin/workrex-keeper"
	test ! -e "$dest/usr/bin/workrex-server"
	test ! -e "$dest/usr/share/man/man5/workrex.yaml.5"
	test ! -e "$dest/usr/share/zsh/site-functions/_workrex"
}

run_test "make install puts the binary, its sandbox client and keeper, man pages and completions under PREFIX" t_make_install
