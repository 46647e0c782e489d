#!/bin/sh
# A stand-in agent for the merge queue's test (t_queue.sh): its change to
# a.txt (by its handle), committed, then done. It reads what it is told:
# told its branch conflicts, it rebases onto main and resolves the
# conflict by keeping both sides, and is done again; told its check
# failed, it says so and stays.
set -u
case $WORKREX_HANDLE in
qa) sed -i 's/^two$/two-A/' a.txt ;;
qb) sed -i 's/^two$/two-B/' a.txt ;;
qc) sed -i 's/^five$/five BAD/' a.txt ;;
esac
git commit -qam "$WORKREX_HANDLE: its change"
echo "STAND-IN $WORKREX_HANDLE: committed"
workrex set-status done
while IFS= read -r line; do
	case $line in
	*"conflicts with main"*)
		printf "\nSTAND-IN %s: resolving\n" "$WORKREX_HANDLE"
		git rebase main >/dev/null 2>&1 || {
			sed -i '/^<<<<<<< /d; /^=======$/d; /^>>>>>>> /d' a.txt
			git add a.txt
			GIT_EDITOR=true git rebase --continue >/dev/null
		}
		echo "STAND-IN $WORKREX_HANDLE: resolved"
		workrex set-status done
		;;
	*"its check failed"*)
		printf "\nSTAND-IN %s: told its check failed\n" "$WORKREX_HANDLE"
		;;
	esac
done
