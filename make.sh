#!/bin/sh
# ./make.sh TARGET...: make, on a machine that may have nothing but git and a
# Debian package manager. It installs make, a compiler and the libraries
# workrex builds with (scripts/deps.sh, showing apt's progress; with `test`,
# the test tools too), then runs make with the same arguments:
#   ./make.sh run     build workrex and open the dashboard
#   ./make.sh test    build and run every test suite
set -eu
cd "$(dirname "$0")"
case " $* " in
*" test "* | *" test-deps "* | *" asan "* | *" bench "*) sh scripts/deps.sh --test ;;
*) sh scripts/deps.sh ;;
esac
exec make "$@"
