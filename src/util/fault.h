/*
 * fault.h - named points where a test build stops dead, to show that a
 * kill at any step of a user's action loses nothing (the crash tests,
 * tests/crash). Compiled in only with -DWRX_FAULTS (make faults); in any
 * other build FAULT() is nothing at all.
 *
 * WORKREX_FAULT=NAME[:ACTION] names the point and what happens on reaching
 * it: "kill" (SIGKILL to the process itself, the default), "exit" (_exit
 * at once, with no cleanup), "slow" (two seconds' sleep, then on: a
 * step that takes its time, for the race it opens) or "stall" (fifteen
 * seconds: past the ten a keeper's start is given). Each point's name
 * says where it is: the command, then the step it comes after
 * ("add.worktree": add, once the worktree is made). WORKREX_FAULT_SKIP=N
 * lets the point pass N times first (a point in a loop).
 *
 * FAULT_WRITE(name) is a point where a write is made, and also takes
 * "enospc": the write fails there as on a full disk (it returns -ENOSPC,
 * errno set; 0 when it is not failed). Each of workrex's durable writes
 * (a file staged, a git config batch, an intent) is the point "write":
 * WORKREX_FAULT=write:enospc with WORKREX_FAULT_SKIP=N fails the N+1st and
 * every one after it, as a disk that fills there.
 */
#ifndef WRX_FAULT_H
#define WRX_FAULT_H

#ifdef WRX_FAULTS
void fault_at(const char *name);
int fault_write(const char *name);
#define FAULT(name) fault_at(name)
#define FAULT_WRITE(name) fault_write(name)
#else
#define FAULT(name) ((void)0)
#define FAULT_WRITE(name) 0
#endif

#endif
