/* Attaching and releasing probes so that no kill, at any moment, leaves one armed. */
#ifndef DBTAP_BPF_LINKS_H
#define DBTAP_BPF_LINKS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * The kernel gives up removing a uprobe when the process removing it has a SIGKILL
 * pending: the page rewrite that takes the int3 out fails with EINTR, the uprobe stays
 * registered ("failed to unregister, leaking uprobe") and its site keeps its int3 and
 * its semaphore raised in every process of the binary. Registering has the same hole:
 * a registration interrupted by SIGKILL fails, and so does its undo.
 *
 * A process that is exiting has already taken its SIGKILL off its pending set, and a
 * group that exits takes no more signals, so a uprobe whose last reference goes at a
 * process's exit is always removed. Hence:
 *  - links_attach() attaches in a child process that ignores the terminal's signals
 *    and sits in its own process group; it passes the links' fds back and exits. A
 *    kill of dbtap cannot interrupt a registration, and when dbtap is gone the child's
 *    exit releases what it made.
 *  - links_release() hands each link to a child of its own and drops dbtap's copies
 *    (never the last reference: cheap). The children exit, so every link is released
 *    at a process's exit, all of them at the same time: one grace period, not one per
 *    link.
 * dbtap itself never closes the last reference of a link while it lives.
 */
struct links {
	int *fds; /* every fd the attach made: BPF links, and perf events under them */
	int n;
	pid_t child; /* > 0: an attach still running (links_attach_start()) */
	int sock;    /* where that child answers, when child > 0 */
};

/*
 * Runs attach(arg) in a child process, which attaches with libbpf as usual (errors and
 * hints printed there), and takes every fd it opened into ls. Attach everything in one
 * call: libbpf's USDT bookkeeping lives in the child's memory and goes with it.
 * Returns attach's result (0, or a failure: nothing stays attached then), or -1 when
 * the child could not run or died.
 */
int links_attach(struct links *ls, int (*attach)(void *arg), void *arg);

/*
 * links_attach() in two halves, for work that does not need the links to go on while
 * the child attaches (loading the next object while a uprobe registration waits for
 * the kernel's grace period): start returns once the child runs (0, or -1 with the
 * error printed), wait takes its result and fds as links_attach() returns them. What
 * the child says reaches the waiting thread's messages at the wait. links_release()
 * of a started ls waits first. A kill meanwhile leaves nothing: the child's exit
 * releases what it made.
 */
int links_attach_start(struct links *ls, int (*attach)(void *arg), void *arg);
int links_attach_wait(struct links *ls);

/*
 * Releases every link of ls, each at a child's exit, and waits until the kernel has
 * removed them all, unless SIGINT or SIGTERM arrives meanwhile (a second Ctrl-C): then
 * it returns at once and the children finish the release by themselves. ls is empty
 * afterwards. Safe to call on an empty or zeroed ls.
 */
void links_release(struct links *ls);

#endif
