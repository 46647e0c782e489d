/*
 * fault.h - named points where a test build stops dead, to show that a
 * kill at any step of a user's action loses nothing (the crash tests,
 * tests/crash). Compiled in only with -DWRX_FAULTS (make faults); in any
 * other build FAULT() is nothing at all.
 *
 * WORKREX_FAULT=NAME[:ACTION] names the point and what happens on reaching
 * it: "kill" (SIGKILL to the process itself, the default), "exit" (_exit
 * at once, with no cleanup), or "slow" (two seconds' sleep, then on: a
 * step that takes its time, for the race it opens). Each point's name
 * says where it is: the command, then the step it comes after
 * ("add.worktree": add, once the worktree is made). WORKREX_FAULT_SKIP=N
 * lets the point pass N times first (a point in a loop).
 */
#ifndef WRX_FAULT_H
#define WRX_FAULT_H

#ifdef WRX_FAULTS
void fault_at(const char *name);
#define FAULT(name) fault_at(name)
#else
#define FAULT(name) ((void)0)
#endif

#endif
