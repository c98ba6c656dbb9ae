/* SPDX-License-Identifier: BSD-3-Clause */
/* signals.c - the interposer's part in signal chaining: numaplace's SIGSEGV/SIGBUS handler stays
 * first, and the program keeps its own handlers and masks as if numaplace were not there.
 *
 * The dispatcher is src/sys/faults.c (one per process: this copy; a libnumaplace the program
 * links itself links its claimers to it through npl__preload_fault_link). It is installed before
 * main under NUMAPLACE_NEXT_TOUCH, else at the first claimer. Interposed here:
 *  - actions: sigaction, __sigaction, signal, bsd_signal, sysv_signal, __sysv_signal, sigset,
 *    sigignore, siginterrupt. For SIGSEGV and SIGBUS they act on the program's recorded action
 *    (libc's semantics for each: BSD signal() = SA_RESTART and the signal masked, sysv_signal =
 *    SA_RESETHAND | SA_NODEFER, sigset/sigignore = no flags); sigaction returns the program's
 *    previous action (never numaplace's), in the form the kernel reports it. Other signals go
 *    straight to libc.
 *  - masks: pthread_sigmask, sigprocmask, sigsuspend, sighold, sigrelse, sigpause,
 *    __xpg_sigpause, __sigpause, sigblock, sigsetmask, siggetmask, sigpending. A synchronous fault
 *    with its signal blocked kills the process, so while the handler is installed a program's
 *    block of SIGSEGV/SIGBUS is kept as the thread's view (faults.c) and not given to the kernel:
 *    numaplace's faults still resolve on that thread, its own faults die as the kernel makes them
 *    die, signals sent by kill wait until it unblocks them, and every old mask returned says
 *    what the program asked for. Blocks the kernel made itself (the signal's own handler
 *    running) stay in the kernel. New threads inherit their creator's view (pthread_create in
 *    threads.c).
 * Not reachable: raw rt_sigaction/rt_sigprocmask system calls (Go), sigwait/sigwaitinfo/
 * signalfd on SIGSEGV/SIGBUS, a thread that blocked them before the handler was installed (until
 * its next mask call), an exec with them blocked (the new program starts with them unblocked). */
#define _GNU_SOURCE
#include "sys/sys.h"

#include "env.h"
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*suspend_fn)(const sigset_t *);
typedef int (*pending_fn)(sigset_t *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static sigaction_fn real_sigaction;
static sigmask_fn real_mask;
static suspend_fn real_suspend;
static pending_fn real_pending;
static signal_fn real_signal, real_sysv_signal, real_sigset;
static int (*real_sigignore)(int);
static int (*real_siginterrupt)(int, int);
static unsigned intr; /* siginterrupt(SIGSEGV/SIGBUS, 1): signal() without SA_RESTART */

static int fault_sig(int sig) { return sig == SIGSEGV || sig == SIGBUS; }
static unsigned fbit(int sig) { return sig == SIGSEGV ? 1u : 2u; }

static void resolve_signals(void)
{
    if (__atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE))
        return;
    npl__preload_enter(); /* dlsym may allocate */
    real_mask = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
    real_suspend = (suspend_fn)dlsym(RTLD_NEXT, "sigsuspend");
    real_pending = (pending_fn)dlsym(RTLD_NEXT, "sigpending");
    real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
    real_sysv_signal = (signal_fn)dlsym(RTLD_NEXT, "sysv_signal");
    real_sigset = (signal_fn)dlsym(RTLD_NEXT, "sigset");
    real_sigignore = (int (*)(int))dlsym(RTLD_NEXT, "sigignore");
    real_siginterrupt = (int (*)(int, int))dlsym(RTLD_NEXT, "siginterrupt");
    sigaction_fn sa = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    npl__fault_interposer(sa);
    __atomic_store_n(&real_sigaction, sa, __ATOMIC_RELEASE);
    npl__preload_leave();
}

/* before init.c's constructor: it may register next-touch ranges, which installs */
__attribute__((constructor(102))) static void signals_init(void)
{
    resolve_signals();
    const char *e = getenv("NUMAPLACE_NEXT_TOUCH");
    /* next-touch, numaplace profile (its traps) and run --profile (next-touch of phase-changing
     * arrays) take faults */
    int faults = (e && *e && strcmp(e, "0")) || ((e = getenv(NPL_ENV_PROFILE_SHM)) && *e) ||
                 ((e = getenv(NPL_ENV_PROFILE_APPLY)) && *e);
    if (faults) { /* before main: every thread's masks are kept from now on */
        npl__preload_enter();
        if (npl__fault_install() < 0)
            npl__debug("preload: %s", npl_last_error());
        npl__preload_leave();
    }
}

/* A libnumaplace the program links itself: its claimers join this dispatcher (one handler per
 * process). 0, or -1. */
EXPORT int npl__preload_fault_link(int (*dispatch)(int, siginfo_t *, void *))
{
    resolve_signals();
    npl__preload_enter();
    int rc = npl__fault_claim(dispatch);
    npl__preload_leave();
    return rc;
}

/* ---- actions ---- */
EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
    resolve_signals();
    return npl__fault_program_sigaction(sig, act, oact);
}
EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
    return sigaction(sig, act, oact);
}

/* a handler with libc's flags for its entry point; the previous handler or SIG_ERR */
static sighandler_t set_handler(int sig, sighandler_t h, int flags, int mask_self)
{
    struct sigaction a, o;
    if (h == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    a.sa_flags = flags;
    sigemptyset(&a.sa_mask);
    if (mask_self)
        sigaddset(&a.sa_mask, sig);
    return sigaction(sig, &a, &o) < 0 ? SIG_ERR : o.sa_handler;
}

EXPORT sighandler_t signal(int sig, sighandler_t h)
{
    resolve_signals();
    if (!fault_sig(sig))
        return real_signal(sig, h);
    return set_handler(sig, h, intr & fbit(sig) ? 0 : SA_RESTART, 1); /* BSD semantics */
}
EXPORT sighandler_t bsd_signal(int sig, sighandler_t h) { return signal(sig, h); }

EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
    resolve_signals();
    if (!fault_sig(sig))
        return real_sysv_signal(sig, h);
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h) { return sysv_signal(sig, h); }

EXPORT int sigignore(int sig)
{
    resolve_signals();
    if (!fault_sig(sig))
        return real_sigignore(sig);
    return set_handler(sig, SIG_IGN, 0, 0) == SIG_ERR ? -1 : 0;
}

EXPORT int siginterrupt(int sig, int flag)
{
    resolve_signals();
    if (!fault_sig(sig))
        return real_siginterrupt(sig, flag);
    struct sigaction a;
    if (sigaction(sig, NULL, &a) < 0)
        return -1;
    if (flag) {
        __atomic_or_fetch(&intr, fbit(sig), __ATOMIC_RELAXED);
        a.sa_flags &= ~SA_RESTART;
    } else {
        __atomic_and_fetch(&intr, ~fbit(sig), __ATOMIC_RELAXED);
        a.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &a, NULL);
}

/* ---- masks ---- */
static unsigned bits_of(const sigset_t *s)
{
    return (sigismember(s, SIGSEGV) == 1 ? 1u : 0u) | (sigismember(s, SIGBUS) == 1 ? 2u : 0u);
}
static void put_bits(sigset_t *s, unsigned b)
{
    if (b & 1)
        sigaddset(s, SIGSEGV);
    else
        sigdelset(s, SIGSEGV);
    if (b & 2)
        sigaddset(s, SIGBUS);
    else
        sigdelset(s, SIGBUS);
}

/* For a mask the program asks for (bits R of SIGSEGV/SIGBUS), given the kernel's (kb) and the
 * view (vold): a bit the kernel blocked on its own (the signal's handler runs: kb, not in the
 * view) stays in the kernel, which undoes it when the handler returns; the program's own
 * blocks become the view. */
static unsigned kernel_keeps(unsigned R, unsigned kb, unsigned vold) { return R & kb & ~vold; }

/* pthread_sigmask: 0 or an errno value */
static int mask_call(int how, const sigset_t *set, sigset_t *oldset)
{
    resolve_signals();
    if (set && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
        return EINVAL;
    int rc;
    if (set && how != SIG_SETMASK && !bits_of(set)) { /* neither SIGSEGV nor SIGBUS: one call */
        unsigned v = npl__fault_view();
        if ((rc = real_mask(how, set, oldset)) == 0 && oldset && v)
            put_bits(oldset, bits_of(oldset) | v);
        return rc;
    }
    sigset_t kold;
    rc = real_mask(SIG_BLOCK, NULL, &kold);
    if (rc)
        return rc;
    unsigned vold = npl__fault_view(), kb = bits_of(&kold);
    if (set) {
        sigset_t knew = kold;
        unsigned cur = kb | vold, sb = bits_of(set), R;
        if (how == SIG_BLOCK) {
            sigorset(&knew, &kold, set);
            R = cur | sb;
        } else if (how == SIG_UNBLOCK) {
            for (int s = 1; s < NSIG; s++)
                if (sigismember(set, s) == 1)
                    sigdelset(&knew, s);
            R = cur & ~sb;
        } else {
            knew = *set;
            R = sb;
        }
        unsigned K = kernel_keeps(R, kb, vold);
        put_bits(&knew, npl__fault_installed() ? K : R);
        if ((rc = real_mask(SIG_SETMASK, &knew, NULL)))
            return rc;
        npl__fault_set_view(R & ~K); /* raises what was sent while blocked and is not now */
    }
    if (oldset) {
        *oldset = kold;
        put_bits(oldset, kb | vold);
    }
    return 0;
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *oldset)
{
    return mask_call(how, set, oldset);
}
EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *oldset)
{
    int rc = mask_call(how, set, oldset);
    if (rc) {
        errno = rc;
        return -1;
    }
    return 0;
}

EXPORT int sighold(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    return sigaddset(&s, sig) < 0 ? -1 : sigprocmask(SIG_BLOCK, &s, NULL);
}
EXPORT int sigrelse(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    return sigaddset(&s, sig) < 0 ? -1 : sigprocmask(SIG_UNBLOCK, &s, NULL);
}

/* BSD masks: signals 1..32 as the bits of an int */
static void from_bsd(sigset_t *s, int mask)
{
    sigemptyset(s);
    for (int sig = 1; sig <= 32; sig++)
        if ((unsigned)mask & (1u << (sig - 1)))
            sigaddset(s, sig);
}
static int to_bsd(const sigset_t *s)
{
    unsigned m = 0;
    for (int sig = 1; sig <= 32; sig++)
        if (sigismember(s, sig) == 1)
            m |= 1u << (sig - 1);
    return (int)m;
}
static int bsd_mask(int how, int mask)
{
    sigset_t s, o;
    from_bsd(&s, mask);
    return sigprocmask(how, &s, &o) < 0 ? -1 : to_bsd(&o);
}
EXPORT int sigblock(int mask) { return bsd_mask(SIG_BLOCK, mask); }
EXPORT int sigsetmask(int mask) { return bsd_mask(SIG_SETMASK, mask); }
EXPORT int siggetmask(void)
{
    sigset_t o;
    return sigprocmask(SIG_BLOCK, NULL, &o) < 0 ? -1 : to_bsd(&o);
}

EXPORT int sigsuspend(const sigset_t *mask)
{
    resolve_signals();
    sigset_t kold, m = *mask;
    int rc = real_mask(SIG_BLOCK, NULL, &kold);
    if (rc) {
        errno = rc;
        return -1;
    }
    unsigned vold = npl__fault_view(), R = bits_of(mask);
    unsigned K = kernel_keeps(R, bits_of(&kold), vold);
    if (npl__fault_installed())
        put_bits(&m, K);
    unsigned waiting = npl__fault_pending() & ~(R & ~K);
    npl__fault_set_view(R & ~K); /* a signal sent while blocked and let through now: delivered */
    if (waiting) {               /* here, so the suspension is over before it began */
        npl__fault_set_view(vold);
        errno = EINTR;
        return -1;
    }
    rc = real_suspend(&m);
    int e = errno;
    npl__fault_set_view(vold);
    errno = e;
    return rc;
}
EXPORT int __sigsuspend(const sigset_t *mask) { return sigsuspend(mask); }

/* __sigpause(sig_or_mask, is_sig): libc's common form of sigpause (BSD mask) and __xpg_sigpause */
EXPORT int __sigpause(int sig_or_mask, int is_sig)
{
    sigset_t s;
    if (is_sig) {
        if (sigprocmask(SIG_BLOCK, NULL, &s) < 0 || sigdelset(&s, sig_or_mask) < 0)
            return -1;
    } else {
        from_bsd(&s, sig_or_mask);
    }
    return sigsuspend(&s);
}
/* the BSD sigpause(mask) (with XPG, <signal.h> names __xpg_sigpause sigpause) */
EXPORT int bsd_sigpause(int mask) __asm__("sigpause");
EXPORT int bsd_sigpause(int mask) { return __sigpause(mask, 0); }
EXPORT int __xpg_sigpause(int sig) { return __sigpause(sig, 1); }

EXPORT int sigpending(sigset_t *set)
{
    resolve_signals();
    if (real_pending(set) < 0)
        return -1;
    unsigned p = npl__fault_pending();
    if (p & 1)
        sigaddset(set, SIGSEGV);
    if (p & 2)
        sigaddset(set, SIGBUS);
    return 0;
}

/* sigset: libc's System V semantics on the program's action and view */
EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    resolve_signals();
    if (!fault_sig(sig))
        return real_sigset(sig, disp);
    sigset_t one, old;
    struct sigaction o;
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &one, &old) < 0)
            return SIG_ERR;
        if (sigismember(&old, sig) == 1)
            return SIG_HOLD;
        return sigaction(sig, NULL, &o) < 0 ? SIG_ERR : o.sa_handler;
    }
    sighandler_t prev = set_handler(sig, disp, 0, 0);
    if (prev == SIG_ERR || sigprocmask(SIG_UNBLOCK, &one, &old) < 0)
        return SIG_ERR;
    return sigismember(&old, sig) == 1 ? SIG_HOLD : prev;
}

/* ---- threads: a new thread starts with its creator's mask, so with its view too ---- */
struct carry {
    void *(*start)(void *);
    void *arg;
    unsigned view;
};
static void *start_with_view(void *p)
{
    struct carry c = *(struct carry *)p;
    free(p);
    npl__fault_set_view(c.view);
    return c.start(c.arg);
}

void *npl__preload_signals_wrap(void *(**start)(void *), void **arg)
{
    unsigned v = npl__fault_view();
    if (!v)
        return NULL;
    npl__preload_enter();
    struct carry *c = malloc(sizeof *c);
    npl__preload_leave();
    if (!c)
        return NULL; /* the thread starts with its view clear: numaplace's faults still resolve */
    c->start = *start;
    c->arg = *arg;
    c->view = v;
    *start = start_with_view;
    *arg = c;
    return c;
}
