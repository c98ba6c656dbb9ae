/* SPDX-License-Identifier: BSD-3-Clause */
/* faults.c - the library's one SIGSEGV/SIGBUS handler, shared with the program (signal chaining,
 * the design of OpenJDK's libjsig).
 *
 * numaplace takes faults for itself: next-touch (migrate/) protects ranges and resolves their
 * first touch; a profiling sampler will protect sampled pages. Each such user registers a
 * claimer. Installed once, the handler asks every claimer; a fault none of them takes goes to
 * the program's own disposition for that signal, with the program's flags, as the kernel would
 * have delivered it without numaplace:
 *   - SA_SIGINFO and plain handlers (a plain one gets the same three arguments the kernel passes);
 *   - SIG_DFL, and SIG_IGN for a fault the kernel raised (the kernel forces those): the default
 *     action is restored and the signal raised again with its siginfo, so the program dies of
 *     it, with a core, at the faulting instruction; SIG_IGN ignores a signal sent by kill(2);
 *   - SA_RESETHAND: the program's handler is reset to SIG_DFL before its one call (one thread
 *     wins, as in the kernel);
 *   - SA_NODEFER, the program's sa_mask, SA_ONSTACK, SA_RESTART: our handler is registered with
 *     the program's own mask and flags, so the kernel blocks, stacks and restarts exactly as it
 *     would for the program's handler.
 * The program's action is the one it installed: in the interposer (preload/signals.c) every
 * sigaction/signal of the program for SIGSEGV/SIGBUS is recorded here and numaplace's handler
 * stays registered; a library without the interposer records what the kernel had when it
 * installed (again at each install call: a program that replaced it is put behind it again),
 * and a program's handler installed later calls npl_fault_handle() first.
 *
 * Masks (interposer only): a synchronous fault with its signal blocked kills the process in
 * Linux, so while the handler is installed the interposer keeps SIGSEGV/SIGBUS unblocked in the
 * kernel and records here, per thread, that the program blocked them (the "view"). A fault no
 * claimer takes while the view blocks its signal dies as the kernel would make it; a signal
 * sent by kill(2) then waits here and is raised again when the program unblocks it.
 *
 * Another copy of the library in the same process (the program links libnumaplace and runs
 * under the interposer, which has its own copy) does not install a handler: it links its claimers
 * to the interposer's dispatcher (npl__preload_fault_link, found with dlsym), so there is one
 * handler per process.
 *
 * Everything the handler does is async-signal-safe: atomics, raw system calls, a seqlock on the
 * program's recorded actions (written with every signal blocked). */
#define _GNU_SOURCE
#include "sys/sys.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "numaplace/migrate.h"

#define MAX_CLAIMERS 8
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define KSIGSET 8 /* the kernel's sigset_t: 64 signals */

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static _Atomic(npl_fault_claimer) claimers[MAX_CLAIMERS];
static pthread_mutex_t claim_lock = PTHREAD_MUTEX_INITIALIZER;
static sigaction_fn real_sigaction = sigaction; /* the interposer gives libc's */
static int interposer;                          /* this copy is the process's outer dispatcher */
static _Atomic int installed;                   /* interposer: ours is registered for both */
static int linked;                              /* library copy: claimers linked to the interposer */

/* The program's action for SIGSEGV (0) and SIGBUS (1): a seqlock, written with all signals blocked
 * under act_lock (a spin lock: sigaction may be called from a signal handler). */
static struct {
    _Atomic unsigned seq;
    struct sigaction sa;
} prog[2];
static atomic_flag act_lock = ATOMIC_FLAG_INIT;

/* per thread: the program's mask for the two signals (bit 0 SEGV, bit 1 BUS) where the kernel's
 * does not block them; signals sent while blocked there, waiting; the siginfo of the fault whose
 * program handler runs now, and the frame that called it: a call of ours with that siginfo from
 * deeper on the stack is the program's handler chaining back to ours (a handler left with
 * siglongjmp leaves both behind, and the kernel's next frame is not deeper) */
static TLS unsigned char view, pending;
static TLS struct { int code; pid_t pid; uid_t uid; union sigval value; } deferred[2];
static TLS siginfo_t *forwarding;
static TLS char *forward_frame; /* the frame that called the program's handler */

static int idx(int sig) { return sig == SIGBUS; }
static unsigned bit(int sig) { return sig == SIGSEGV ? 1u : sig == SIGBUS ? 2u : 0u; }
static const int sigs[2] = {SIGSEGV, SIGBUS};

static void on_fault(int sig, siginfo_t *si, void *uctx);

/* ---- raw masks: the handler and the interposer's wrappers never go through interposed calls */
static void raw_mask(int how, const sigset_t *set, sigset_t *old)
{
    syscall(SYS_rt_sigprocmask, how, set, old, KSIGSET);
}
static void block_all(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    raw_mask(SIG_SETMASK, &all, old);
}
static void lock_acts(sigset_t *old)
{
    block_all(old);
    while (atomic_flag_test_and_set_explicit(&act_lock, memory_order_acquire))
        sched_yield();
}
static void unlock_acts(const sigset_t *old)
{
    atomic_flag_clear_explicit(&act_lock, memory_order_release);
    raw_mask(SIG_SETMASK, old, NULL);
}

/* word-wise atomic copies: a reader may race with a writer (the seqlock then retries) */
static void copy_words(void *dst, const void *src, size_t n)
{
    unsigned long *d = dst;
    const unsigned long *s = src;
    for (size_t i = 0; i < n / sizeof *d; i++)
        __atomic_store_n(&d[i], __atomic_load_n(&s[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
static unsigned read_prog(int i, struct sigaction *out)
{
    for (;;) {
        unsigned s = atomic_load(&prog[i].seq);
        if (s & 1) {
            sched_yield();
            continue;
        }
        copy_words(out, &prog[i].sa, sizeof *out);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(&prog[i].seq) == s)
            return s;
    }
}
static void write_prog(int i, const struct sigaction *sa) /* under act_lock */
{
    atomic_fetch_add(&prog[i].seq, 1);
    copy_words(&prog[i].sa, sa, sizeof *sa);
    atomic_fetch_add(&prog[i].seq, 1);
}

/* the handler word is SIG_DFL or SIG_IGN whatever the flags say */
static int is_dfl_or_ign(const struct sigaction *sa)
{
    return sa->sa_handler == SIG_DFL || sa->sa_handler == SIG_IGN;
}

/* our registration for a program action: its mask and the flags that change how the kernel
 * delivers (stack, restart, nodefer); for SIG_DFL/SIG_IGN, the alternate stack if there is one */
static void ours_for(const struct sigaction *p, struct sigaction *o)
{
    memset(o, 0, sizeof *o);
    o->sa_sigaction = on_fault;
    o->sa_flags = SA_SIGINFO;
    sigemptyset(&o->sa_mask);
    if (is_dfl_or_ign(p)) {
        o->sa_flags |= SA_ONSTACK;
    } else {
        o->sa_flags |= p->sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER);
        memcpy(&o->sa_mask, &p->sa_mask, KSIGSET); /* the kernel keeps 64 signals */
    }
}

static int is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fault;
}

/* ---- dying as the kernel makes a program die ---- */
static pid_t tid(void) { return (pid_t)syscall(SYS_gettid); }

/* NUMAPLACE_DEBUG (read when the handler is installed): a fault that kills says so on stderr,
 * with raw writes (async-signal-safe): its address, code and instruction, and the object and
 * symbol of that instruction (dladdr: the process is dying) */
static int debug_faults;
static char *put_hex(char *o, uintptr_t v)
{
    char d[2 * sizeof v];
    int n = 0;
    do
        d[n++] = "0123456789abcdef"[v & 15];
    while ((v >>= 4) && n < (int)sizeof d);
    *o++ = '0', *o++ = 'x';
    while (n)
        *o++ = d[--n];
    return o;
}
static char *put_str(char *o, const char *s, const char *end)
{
    while (s && *s && o < end)
        *o++ = *s++;
    return o;
}
static void say_death(int sig, const siginfo_t *si, const void *uctx)
{
    char line[512] = "", *o = line, *end = line + sizeof line - 80;
    uintptr_t ip = 0;
#if defined(__x86_64__) && defined(REG_RIP)
    if (uctx)
        ip = (uintptr_t)((const ucontext_t *)uctx)->uc_mcontext.gregs[REG_RIP];
#else
    (void)uctx;
#endif
    o = put_str(o, sig == SIGSEGV ? "numaplace: SIGSEGV" : "numaplace: SIGBUS", end);
    int prot = sig == SIGSEGV && si->si_code == SEGV_ACCERR;
    o = put_str(o, prot ? " (protection)" : " (code ", end);
    if (!prot) {
        *o++ = (char)('0' + (si->si_code & 7));
        *o++ = ')';
    }
    o = put_hex(put_str(o, " at ", end), (uintptr_t)si->si_addr);
    o = put_hex(put_str(o, ", instruction ", end), ip);
    Dl_info info;
    if (ip && dladdr((void *)ip, &info) && info.dli_fname) {
        o = put_str(o, " in ", end);
        o = put_hex(put_str(put_str(o, info.dli_fname, end), "+", end),
                    ip - (uintptr_t)info.dli_fbase);
        o = put_str(put_str(o, " (", end), info.dli_sname ? info.dli_sname : "?", end);
        *o++ = ')';
    }
    o = put_str(o, ": no claimer took it, the program's disposition kills\n", line + sizeof line);
    ssize_t w = write(2, line, (size_t)(o - line));
    (void)w;
}

/* The default action, now, at the interrupted instruction: SIG_DFL in the kernel and the same
 * signal queued with its siginfo, blocked until this handler returns (the context's mask lets it
 * through), so the program ends as it would have: with this signal, and a core. */
static void die(int sig, siginfo_t *si, void *uctx)
{
    if (debug_faults && si->si_code > 0)
        say_death(sig, si, uctx);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raw_mask(SIG_BLOCK, &one, NULL);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    real_sigaction(sig, &dfl, NULL);
    if (uctx)
        sigdelset(&((ucontext_t *)uctx)->uc_sigmask, sig);
    if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tid(), sig, si) < 0)
        syscall(SYS_tgkill, getpid(), tid(), sig);
}

/* a signal sent (not a fault) while the program's view blocks it: it waits for the unblock */
static void defer(int sig, const siginfo_t *si)
{
    int i = idx(sig);
    deferred[i].code = si->si_code;
    deferred[i].pid = si->si_pid;
    deferred[i].uid = si->si_uid;
    deferred[i].value = si->si_value;
    pending |= bit(sig);
}

static void raise_deferred(unsigned which)
{
    for (int i = 0; i < 2; i++) {
        if (!(which & bit(sigs[i])))
            continue;
        pending &= ~bit(sigs[i]);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = sigs[i];
        si.si_code = deferred[i].code;
        si.si_pid = deferred[i].pid;
        si.si_uid = deferred[i].uid;
        si.si_value = deferred[i].value;
        if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tid(), sigs[i], &si) < 0)
            syscall(SYS_tgkill, getpid(), tid(), sigs[i]);
    }
}

/* SA_RESETHAND: the first thread to get here with the record it read (seq) resets it to SIG_DFL
 * and calls the handler; 0: the record changed meanwhile (read it again) */
static int take_oneshot(int i, unsigned seq)
{
    sigset_t old;
    int took = 0;
    lock_acts(&old);
    if (atomic_load(&prog[i].seq) == seq) {
        struct sigaction sa;
        copy_words(&sa, &prog[i].sa, sizeof sa);
        sa.sa_handler = SIG_DFL; /* Linux keeps the flags, resets the handler */
        write_prog(i, &sa);
        took = 1;
    }
    unlock_acts(&old);
    return took;
}

/* a fault no claimer took: the program's disposition, with the program's flags */
static __attribute__((noinline)) void forward(int sig, siginfo_t *si, void *uctx, int chained)
{
    int i = idx(sig), fault = si->si_code > 0; /* raised by the kernel: it forces delivery */
    if ((view & bit(sig)) || chained) {
        /* blocked in the program's mask, or its handler chained back to ours: a fault dies as
         * the kernel makes it die; a signal sent waits for the unblock (a chained one: the
         * default action) */
        if (fault || chained)
            die(sig, si, uctx);
        else
            defer(sig, si);
        return;
    }
    struct sigaction pa;
    for (;;) {
        unsigned seq = read_prog(i, &pa);
        if (!(pa.sa_flags & SA_RESETHAND) || is_dfl_or_ign(&pa) || take_oneshot(i, seq))
            break;
    }
    if (is_dfl_or_ign(&pa)) {
        if (pa.sa_handler == SIG_DFL || fault) /* the kernel ignores no fault */
            die(sig, si, uctx);
        return;
    }
    unsigned char saved_view = view;
    siginfo_t *saved_fwd = forwarding;
    char *saved_frame = forward_frame;
    forwarding = si;
    forward_frame = __builtin_frame_address(0);
    if (pa.sa_flags & SA_SIGINFO)
        pa.sa_sigaction(sig, si, uctx);
    else /* the kernel passes the same three arguments to a plain handler */
        ((void (*)(int, siginfo_t *, void *))(void (*)(void))pa.sa_handler)(sig, si, uctx);
    forwarding = saved_fwd;
    forward_frame = saved_frame;
    view = saved_view; /* returning restores the interrupted context's mask: and its view */
    if (pending & ~view)
        raise_deferred(pending & ~view);
}

int npl__fault_dispatch(int sig, siginfo_t *si, void *uctx)
{
    if ((sig != SIGSEGV && sig != SIGBUS) || !si || si->si_code <= 0) /* sent, not a fault */
        return 0;
    for (int k = 0; k < MAX_CLAIMERS; k++) {
        npl_fault_claimer c = atomic_load_explicit(&claimers[k], memory_order_acquire);
        if (c && c(sig, si, uctx))
            return 1;
    }
    return 0;
}

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
    int saved = errno;
    /* deeper: the stack grows down (x86-64, arm64) */
    int chained = si && si == forwarding && (char *)__builtin_frame_address(0) < forward_frame;
    if (!npl__fault_dispatch(sig, si, uctx))
        forward(sig, si, uctx, chained);
    errno = saved;
}

int npl_fault_handle(int sig, void *info, void *uctx)
{
    int saved = errno, r = npl__fault_dispatch(sig, info, uctx);
    errno = saved;
    return r;
}

/* ---- installing ---- */

/* interposer: once; what the kernel has now is the program's */
static int install_interposer(void)
{
    if (atomic_load(&installed))
        return 0;
    debug_faults = npl__debug_enabled();
    sigset_t old;
    int rc = 0;
    lock_acts(&old);
    if (!atomic_load(&installed)) {
        struct sigaction cur[2], o;
        for (int i = 0; i < 2 && rc == 0; i++)
            rc = real_sigaction(sigs[i], NULL, &cur[i]);
        for (int i = 0; i < 2 && rc == 0; i++) {
            write_prog(i, &cur[i]);
            ours_for(&cur[i], &o);
            rc = real_sigaction(sigs[i], &o, NULL);
        }
        if (rc == 0) {
            atomic_store(&installed, 1);
            /* this thread blocked them: that is now its view (other threads: at their next
             * mask call) */
            for (int i = 0; i < 2; i++)
                if (sigismember(&old, sigs[i])) {
                    view |= (unsigned char)bit(sigs[i]);
                    sigdelset(&old, sigs[i]);
                }
        }
    }
    int e = errno;
    unlock_acts(&old);
    errno = e;
    return rc < 0 ? npl__fail(e, "cannot install the SIGSEGV/SIGBUS handler") : 0;
}

/* library without the interposer: put ours first unless it is already the kernel's; what was
 * there is the program's. Under install_lock. */
static int install_library(void)
{
    debug_faults = npl__debug_enabled();
    for (int i = 0; i < 2; i++) {
        struct sigaction cur, o;
        sigset_t old;
        int rc = 0, e = 0;
        lock_acts(&old);
        if (real_sigaction(sigs[i], NULL, &cur) < 0) {
            rc = -1, e = errno;
        } else if (!is_ours(&cur)) {
            write_prog(i, &cur);
            ours_for(&cur, &o);
            rc = real_sigaction(sigs[i], &o, NULL);
            e = errno;
        }
        unlock_acts(&old);
        if (rc < 0)
            return npl__fail(e, "cannot install the SIGSEGV/SIGBUS handler");
    }
    return 0;
}

typedef int (*link_fn)(int (*dispatch)(int, siginfo_t *, void *));

/* fork: the child must not inherit act_lock held by another thread. Taken last (prepare
 * handlers run in the reverse order of registration): a thread holding a user's lock (next-touch's
 * arm lock) may be waiting for act_lock, so users register their handlers after this one
 * (npl__fault_atfork first). */
static sigset_t fork_mask; /* written under act_lock */
static void fork_prepare(void)
{
    sigset_t m;
    lock_acts(&m);
    fork_mask = m;
}
static void fork_done(void)
{
    sigset_t m = fork_mask;
    unlock_acts(&m);
}
static void register_atfork(void) { pthread_atfork(fork_prepare, fork_done, fork_done); }
void npl__fault_atfork(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_atfork);
}

int npl__fault_install(void)
{
    static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
    npl__fault_atfork();
    if (interposer)
        return install_interposer();
    pthread_mutex_lock(&install_lock);
    int rc = 0;
    if (!linked) {
        /* another copy of the library in this process owns the handler: the interposer's */
        link_fn link = (link_fn)dlsym(RTLD_DEFAULT, "npl__preload_fault_link");
        if (link && link(npl__fault_dispatch) == 0)
            linked = 1;
        else
            rc = install_library();
    }
    pthread_mutex_unlock(&install_lock);
    return rc;
}

int npl__fault_claim(npl_fault_claimer fn)
{
    pthread_mutex_lock(&claim_lock);
    int k, free_k = -1;
    for (k = 0; k < MAX_CLAIMERS; k++) {
        npl_fault_claimer c = atomic_load(&claimers[k]);
        if (c == fn)
            break;
        if (!c && free_k < 0)
            free_k = k;
    }
    int rc = 0;
    if (k == MAX_CLAIMERS) {
        if (free_k < 0)
            rc = npl__fail(ENOSPC, "%d fault claimers registered already", MAX_CLAIMERS);
        else
            atomic_store_explicit(&claimers[free_k], fn, memory_order_release);
    }
    pthread_mutex_unlock(&claim_lock);
    return rc < 0 ? rc : npl__fault_install();
}

/* ---- the interposer's side ---- */

void npl__fault_interposer(int (*real)(int, const struct sigaction *, struct sigaction *))
{
    real_sigaction = real;
    interposer = 1;
}

int npl__fault_installed(void) { return atomic_load(&installed); }

/* what the kernel would report for an action the program gave: the flags it keeps, what libc
 * adds (x86: SA_RESTORER and its restorer, as libc registered ours), 64 signals of mask less
 * SIGKILL/SIGSTOP */
static void as_kernel_reports(struct sigaction *sa)
{
    const int posix = SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART |
                      SA_NODEFER | SA_RESETHAND;
    struct sigaction ref;
    sa->sa_flags &= posix | 0x800 /* SA_EXPOSE_TAGBITS */;
    if (real_sigaction(SIGSEGV, NULL, &ref) == 0 && (ref.sa_flags & ~posix)) {
        sa->sa_flags |= ref.sa_flags & ~posix;
        sa->sa_restorer = ref.sa_restorer;
    }
    sigset_t m;
    sigemptyset(&m);
    memcpy(&m, &sa->sa_mask, KSIGSET);
    sigdelset(&m, SIGKILL);
    sigdelset(&m, SIGSTOP);
    sa->sa_mask = m;
}

int npl__fault_program_sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
    if (sig != SIGSEGV && sig != SIGBUS)
        return real_sigaction(sig, act, oact);
    struct sigaction want, o, prev;
    if (act) {
        want = *act; /* read before the lock: a bad pointer faults here, as in libc */
        as_kernel_reports(&want);
    }
    int i = idx(sig), rc = 0, e = 0;
    sigset_t old;
    lock_acts(&old);
    if (!atomic_load(&installed)) { /* the kernel's, as without numaplace (under the lock: an
                                     * install meanwhile would take the program's old action) */
        rc = real_sigaction(sig, act, oact);
        e = errno;
        unlock_acts(&old);
        errno = e;
        return rc;
    }
    copy_words(&prev, &prog[i].sa, sizeof prev);
    if (act) {
        write_prog(i, &want);
        ours_for(&want, &o);
        rc = real_sigaction(sig, &o, NULL);
        e = errno;
    }
    unlock_acts(&old);
    if (rc < 0) {
        errno = e;
        return -1;
    }
    if (oact) { /* the kernel's form: 64 signals of mask, the rest of the caller's left */
        oact->sa_sigaction = prev.sa_sigaction;
        oact->sa_flags = prev.sa_flags;
        oact->sa_restorer = prev.sa_restorer;
        memcpy(&oact->sa_mask, &prev.sa_mask, KSIGSET);
    }
    return 0;
}

unsigned npl__fault_view(void) { return view; }
unsigned npl__fault_pending(void) { return pending; }

void npl__fault_set_view(unsigned v)
{
    view = (unsigned char)(v & 3u);
    if (pending & ~view)
        raise_deferred(pending & ~view);
}
