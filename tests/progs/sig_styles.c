/* SPDX-License-Identifier: BSD-3-Clause */
/* sig_styles - an OpenMP program with its own SIGSEGV/SIGBUS handling, the way runtimes, crash
 * reporters and guard-page code do it; tests/host/test_hostile_signals.sh runs every mode alone
 * and under `numaplace run --next-touch` and requires the same exit status and the same stdout.
 *
 * A 4 MiB array (a large malloc: under --next-touch it is placed and registered, and armed at
 * each parallel region from a new code address) is touched by parallel regions between the
 * program's own signal actions. stderr gets one line per region saying whether the array was
 * armed (PROT_NONE) when the region began (the test checks that next-touch really ran), and
 * "placement: L/T pages local" after a region where each thread touched its own block (the
 * guest checks L == T).
 *
 *   sig_styles MODE      modes: before after plain_after guard report resethand nodefer defer
 *                        onstack ign dfl bus bus_dfl blocked blocked_fault blocked_kill suspend
 * Built by gcc (libgomp) and by clang (LLVM libomp). */
#define _GNU_SOURCE
/* sigset, siginterrupt, sigignore: old interfaces that programs still use */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N ((4u << 20) / sizeof(double))
static double *arr;
static long psz;
static char *guard; /* two PROT_NONE pages of the program's own */
static volatile sig_atomic_t calls, depth, max_depth, bus_calls;
static sigjmp_buf jb;
static __thread sigjmp_buf *tjb; /* where this thread's handler jumps to */

/* ---- the array and its regions ---- */
static int armed_now(void)
{
    /* the protection of the array's last page, from /proc/self/maps */
    uintptr_t a = ((uintptr_t)(arr + N - 1)) & ~(uintptr_t)(psz - 1);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int armed = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && a >= lo && a < hi)
            armed = perms[0] == '-' && perms[1] == '-';
    }
    if (f)
        fclose(f);
    return armed;
}

/* pages of each thread's block on the node of the CPU that thread runs on (move_pages query) */
static void placement(const int *cpu_of)
{
    int nt = omp_get_max_threads(), local = 0, total = 0;
    size_t per = N / (size_t)nt;
    for (int t = 0; t < nt; t++) {
        unsigned cpu = (unsigned)cpu_of[t];
        int node = -1;
        char path[64];
        for (int n = 0; n < 64 && node < 0; n++) { /* the node of cpu, from sysfs */
            snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpu%u", n, cpu);
            if (access(path, F_OK) == 0)
                node = n;
        }
        char *lo = (char *)(((uintptr_t)(arr + t * per) + psz - 1) & ~(uintptr_t)(psz - 1));
        char *hi = (char *)((uintptr_t)(arr + (t + 1) * per) & ~(uintptr_t)(psz - 1));
        for (char *p = lo; p < hi; p += psz) {
            void *pg = p;
            int st = -1;
            if (syscall(SYS_move_pages, 0, 1, &pg, NULL, &st, 0) == 0) {
                total++;
                local += st == node || node < 0;
            }
        }
    }
    fprintf(stderr, "placement: %d/%d pages local\n", local, total);
}

/* Each region is its own code address: OMPT re-arms at new ones. */
static void region_init(void)
{
    int armed = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            armed = armed_now();
            /* a serial initialization: every page on one node, so that run --next-touch's re-arm
             * rule arms the whole array at the next region (a parallel first touch that spread
             * the pages gets sample arms only, and the array might never be armed where the
             * test looks) */
            for (size_t i = 0; i < N; i++)
                arr[i] = (double)(i % 1000);
        }
    }
    fprintf(stderr, "region init: armed %d\n", armed);
}
static void region_b(void)
{
    int armed = 0, cpu_of[256] = {0};
#pragma omp parallel
    {
#pragma omp single
        armed = armed_now();
#pragma omp for schedule(static)
        for (size_t i = 0; i < N; i++)
            arr[i] += 1.0;
        if (omp_get_thread_num() < 256)
            cpu_of[omp_get_thread_num()] = sched_getcpu();
    }
    fprintf(stderr, "region b: armed %d\n", armed);
    placement(cpu_of);
}
static void region_c(void)
{
    int armed = 0;
#pragma omp parallel
    {
#pragma omp single
        armed = armed_now();
#pragma omp for schedule(static)
        for (size_t i = 0; i < N; i++)
            arr[i] *= 2.0;
    }
    fprintf(stderr, "region c: armed %d\n", armed);
}
/* a region that only re-arms (under --next-touch): the array is left armed, untouched */
static void region_rearm(void)
{
    int armed = 0;
#pragma omp parallel
    {
#pragma omp single
        armed = armed_now();
    }
    fprintf(stderr, "region rearm: armed %d\n", armed);
}
static double sum(void)
{
    double s = 0;
    for (size_t i = 0; i < N; i++)
        s += arr[i];
    return s;
}

/* ---- handlers ---- */
static void jump_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    calls++;
    if (sig == SIGBUS)
        bus_calls++;
    if (si->si_addr != guard && si->si_addr != guard + psz && sig == SIGSEGV)
        _exit(90); /* a fault the program never caused: what issue 2 saw */
    siglongjmp(tjb ? *tjb : jb, 1);
}
static void plain_jump(int sig)
{
    (void)sig;
    calls++;
    siglongjmp(jb, 1);
}
static void install(int sig, void (*h)(int, siginfo_t *, void *), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) < 0)
        perror("sigaction"), exit(3);
}
/* one fault of the program's own on its guard page, caught: 1 when the handler ran */
static int own_fault(int page)
{
    if (sigsetjmp(jb, 1) == 0) {
        *(volatile char *)(guard + page * psz) = 1;
        return 0;
    }
    return 1;
}

/* ---- modes ---- */
static int m_before(void)
{
    install(SIGSEGV, jump_handler, 0);
    region_init();
    int caught = own_fault(0) + own_fault(1);
    region_b();
    caught += own_fault(0);
    printf("before: caught %d, calls %d, sum %.0f\n", caught, (int)calls, sum());
    return 0;
}
static int m_after(void)
{
    region_init();
    install(SIGSEGV, jump_handler, 0); /* after the array was armed once */
    region_b();
    int caught = own_fault(0) + own_fault(1);
    region_c();
    printf("after: caught %d, calls %d, sum %.0f\n", caught, (int)calls, sum());
    return 0;
}
static int m_plain_after(void)
{
    region_init();
    signal(SIGSEGV, plain_jump); /* BSD signal(): a plain handler */
    region_b();
    int caught = 0;
    for (int k = 0; k < 3; k++)
        caught += own_fault(k & 1);
    region_c();
    printf("plain_after: caught %d, calls %d, sum %.0f\n", caught, (int)calls, sum());
    return 0;
}
/* a program that relies on its own guard-page faults, many times, between armed regions */
static int m_guard(void)
{
    install(SIGSEGV, jump_handler, 0);
    int caught = 0;
    region_init();
    for (int k = 0; k < 500; k++)
        caught += own_fault(k & 1);
    region_b();
    for (int k = 0; k < 500; k++)
        caught += own_fault(k & 1);
    region_c();
    printf("guard: caught %d, calls %d, sum %.0f\n", caught, (int)calls, sum());
    return 0;
}

static void h1(int s, siginfo_t *i, void *u) { (void)s, (void)i, (void)u; }
static void h2(int s) { (void)s; }
static void h3(int s) { (void)s; }
static void show(const char *what, int sig)
{
    struct sigaction q;
    memset(&q, 0, sizeof q);
    sigaction(sig, NULL, &q);
    const char *name = q.sa_handler == SIG_DFL ? "DFL" : q.sa_handler == SIG_IGN ? "IGN"
                       : (void *)q.sa_sigaction == (void *)h1 ? "h1"
                       : q.sa_handler == h2 ? "h2" : q.sa_handler == h3 ? "h3" : "OTHER";
    printf("%s: %s flags %#x usr1 %d\n", what, name, (unsigned)q.sa_flags,
           sigismember(&q.sa_mask, SIGUSR1));
}
/* what sigaction/signal/sigset/sysv_signal return is what the program installed */
static int m_report(void)
{
    region_init();
    for (int k = 0; k < 2; k++) {
        int sig = k ? SIGBUS : SIGSEGV;
        show("initial", sig);
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = h1;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGUSR1);
        sigaction(sig, &sa, &old);
        printf("old was %s\n", old.sa_handler == SIG_DFL ? "DFL" : "OTHER");
        region_b();
        show("sigaction h1", sig);
        printf("signal returned h1: %d\n", (void *)signal(sig, h2) == (void *)h1);
        show("signal h2", sig);
        printf("sysv_signal returned h2: %d\n", sysv_signal(sig, h3) == h2);
        show("sysv_signal h3", sig);
        printf("sigset returned h3: %d\n", sigset(sig, h2) == h3);
        show("sigset h2", sig);
        printf("sigset hold returned h2: %d\n", sigset(sig, SIG_HOLD) == h2);
        sigset_t m;
        pthread_sigmask(SIG_BLOCK, NULL, &m);
        printf("held: %d\n", sigismember(&m, sig));
        printf("sigset returned hold: %d\n", sigset(sig, h3) == SIG_HOLD);
        pthread_sigmask(SIG_BLOCK, NULL, &m);
        printf("held after: %d\n", sigismember(&m, sig));
        siginterrupt(sig, 1);
        show("siginterrupt 1", sig);
        printf("signal after siginterrupt returned h3: %d\n", signal(sig, h2) == h3);
        show("signal h2 interrupting", sig);
        siginterrupt(sig, 0);
        sigignore(sig);
        show("sigignore", sig);
        region_c();
        signal(sig, SIG_DFL);
        show("default again", sig);
    }
    printf("report: sum %.0f\n", sum());
    return 0;
}

static void fix_and_return(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    calls++;
    mprotect((void *)((uintptr_t)si->si_addr & ~(uintptr_t)(psz - 1)), psz, PROT_READ | PROT_WRITE);
}
/* SA_RESETHAND: one call, then the default action; numaplace's faults in between use none */
static int m_resethand(void)
{
    install(SIGSEGV, fix_and_return, SA_RESETHAND);
    region_init();
    region_b();
    guard[0] = 1; /* caught: the page is made writable and the access retried */
    printf("resethand: after the first fault, calls %d\n", (int)calls);
    region_c();
    printf("resethand: sum %.0f; now the second fault\n", sum());
    fflush(stdout);
    guard[psz] = 1; /* the handler is SIG_DFL now: dies of SIGSEGV */
    printf("resethand: survived (wrong)\n");
    return 0;
}

/* SA_NODEFER: the handler faults again inside itself, and touches the armed array */
static void nested(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    calls++;
    depth++;
    if (depth > max_depth)
        max_depth = depth;
    char *page = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(psz - 1));
    if (page == guard) {
        arr[N / 2] += 0.5;  /* armed memory, touched inside the program's handler */
        guard[psz] = 1;     /* a second fault of its own, inside the handler */
    }
    mprotect(page, psz, PROT_READ | PROT_WRITE);
    depth--;
}
static int m_nodefer(void)
{
    install(SIGSEGV, nested, SA_NODEFER);
    region_init();
    region_rearm(); /* the array is armed and untouched: the handler's touch is the first */
    guard[0] = 1;
    printf("nodefer: calls %d, max depth %d, sum %.1f\n", (int)calls, (int)max_depth, sum());
    return 0;
}
/* without SA_NODEFER, a fault inside the handler has its signal blocked: the kernel kills */
static int m_defer(void)
{
    install(SIGSEGV, nested, 0);
    region_init();
    region_b();
    printf("defer: about to fault twice\n");
    fflush(stdout);
    guard[0] = 1;
    printf("defer: survived (wrong)\n");
    return 0;
}

/* SA_ONSTACK + sigaltstack: a stack overflow caught in a thread, recovered with siglongjmp */
static volatile int sink, forever = 1;
static int recurse(int n)
{
    volatile char pad[1024];
    pad[0] = (char)n;
    pad[1023] = pad[0];
    return forever ? recurse(n + 1) + pad[1023] : n; /* until the stack overflows */
}
static void overflow_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    calls++;
    siglongjmp(*tjb, 1);
}
static void *overflow_thread(void *p)
{
    (void)p;
    stack_t ss;
    ss.ss_size = 16384;
    ss.ss_sp = malloc(ss.ss_size);
    ss.ss_flags = 0;
    if (!ss.ss_sp || sigaltstack(&ss, NULL) < 0)
        return (void *)1;
    for (size_t i = 0; i < N; i += 512) /* numaplace's faults, on this thread */
        arr[i] += 1.0;
    sigjmp_buf here;
    tjb = &here;
    int recovered = 0;
    if (sigsetjmp(here, 1) == 0)
        sink = recurse(0);
    else
        recovered = 1;
    return (void *)(intptr_t)(recovered ? 0 : 2);
}
static int m_onstack(void)
{
    install(SIGSEGV, overflow_handler, SA_ONSTACK);
    region_init();
    region_rearm();
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 1 << 20);
    pthread_t t;
    void *r = (void *)3;
    if (pthread_create(&t, &at, overflow_thread, NULL) == 0)
        pthread_join(t, &r);
    printf("onstack: thread %d, calls %d, sum %.0f\n", (int)(intptr_t)r, (int)calls, sum());
    return 0;
}

/* SIG_IGN: signals sent are ignored; a fault is not (the kernel forces it): death */
static int m_ign(void)
{
    signal(SIGSEGV, SIG_IGN);
    region_init();
    kill(getpid(), SIGSEGV);
    raise(SIGSEGV);
    region_b();
    printf("ign: alive after two sent SIGSEGVs, sum %.0f\n", sum());
    fflush(stdout);
    guard[0] = 1;
    printf("ign: survived (wrong)\n");
    return 0;
}
/* SIG_DFL installed over a handler: a fault dies with SIGSEGV */
static int m_dfl(void)
{
    install(SIGSEGV, jump_handler, 0);
    region_init();
    int caught = own_fault(0);
    signal(SIGSEGV, SIG_DFL);
    region_b();
    printf("dfl: caught %d, sum %.0f\n", caught, sum());
    fflush(stdout);
    guard[0] = 1;
    printf("dfl: survived (wrong)\n");
    return 0;
}

/* SIGBUS: touching a page of a file mapping past the end of the (truncated) file */
static char *bus_page(void)
{
    char path[] = "/tmp/sig_styles.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    unlink(path);
    if (ftruncate(fd, 2 * psz) < 0)
        return NULL;
    char *m = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED || ftruncate(fd, psz) < 0)
        return NULL;
    close(fd);
    m[0] = 1;
    return m + psz; /* beyond the end of the file now */
}
static int m_bus(void)
{
    char *b = bus_page();
    if (!b)
        return 4;
    install(SIGBUS, jump_handler, 0);
    region_init();
    volatile int caught = 0;
    for (volatile int k = 0; k < 3; k++) {
        if (sigsetjmp(jb, 1) == 0)
            *(volatile char *)b = 1;
        else
            caught++;
    }
    region_b();
    printf("bus: caught %d, bus calls %d, sum %.0f\n", caught, (int)bus_calls, sum());
    return 0;
}
static int m_bus_dfl(void)
{
    char *b = bus_page();
    if (!b)
        return 4;
    region_init();
    region_b();
    printf("bus_dfl: sum %.0f\n", sum());
    fflush(stdout);
    *(volatile char *)b = 1;
    printf("bus_dfl: survived (wrong)\n");
    return 0;
}

/* a thread that blocks SIGSEGV and SIGBUS touches the armed array (numaplace's faults must
 * still resolve), sees its mask as it set it, and a thread it creates inherits that mask */
static void *blocked_child(void *p)
{
    (void)p;
    sigset_t m;
    pthread_sigmask(SIG_BLOCK, NULL, &m);
    for (size_t i = 0; i < N; i += 512)
        arr[i] += 1.0;
    return (void *)(intptr_t)(sigismember(&m, SIGSEGV) * 10 + sigismember(&m, SIGBUS));
}
static int m_blocked(void)
{
    region_init();
    install(SIGSEGV, jump_handler, 0);
    int inherited = -1, in_region = 1, armed = 0;
#pragma omp parallel
    {
#pragma omp single
        armed = armed_now();
        sigset_t b, old, now;
        sigemptyset(&b);
        sigaddset(&b, SIGSEGV);
        sigaddset(&b, SIGBUS);
        pthread_sigmask(SIG_BLOCK, &b, &old);
#pragma omp for schedule(static)
        for (size_t i = 0; i < N; i++)
            arr[i] += 1.0;
        pthread_sigmask(SIG_BLOCK, NULL, &now);
        int ok = sigismember(&now, SIGSEGV) == 1 && sigismember(&now, SIGBUS) == 1 &&
                 sigismember(&old, SIGSEGV) == 0;
#pragma omp atomic
        in_region &= ok;
#pragma omp master
        {
            pthread_t t;
            void *r = (void *)-1;
            if (pthread_create(&t, NULL, blocked_child, NULL) == 0)
                pthread_join(t, &r);
            inherited = (int)(intptr_t)r;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    fprintf(stderr, "region blocked: armed %d\n", armed);
    int caught = own_fault(0); /* unblocked again: the handler gets its own fault */
    printf("blocked: masks seen %d, child inherited %d, caught %d, sum %.0f\n", in_region,
           inherited, caught, sum());
    return 0;
}
/* a fault of its own while it blocks SIGSEGV: the kernel kills it, handler or not */
static int m_blocked_fault(void)
{
    install(SIGSEGV, jump_handler, 0);
    region_init();
    sigset_t b;
    sigemptyset(&b);
    sigaddset(&b, SIGSEGV);
    sigprocmask(SIG_BLOCK, &b, NULL);
    region_b();
    printf("blocked_fault: sum %.0f\n", sum());
    fflush(stdout);
    guard[0] = 1;
    printf("blocked_fault: survived (wrong)\n");
    return 0;
}
/* a SIGSEGV sent while blocked waits, and is delivered once when unblocked */
static void count_sent(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    calls += si->si_code == SI_TKILL ? 1 : 100;
}
static int m_blocked_kill(void)
{
    install(SIGSEGV, count_sent, 0);
    region_init();
    sigset_t b, p;
    sigemptyset(&b);
    sigaddset(&b, SIGSEGV);
    pthread_sigmask(SIG_BLOCK, &b, NULL);
    region_b();
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGSEGV);
    sigpending(&p);
    printf("blocked_kill: pending %d, calls %d\n", sigismember(&p, SIGSEGV), (int)calls);
    region_c();
    pthread_sigmask(SIG_UNBLOCK, &b, NULL);
    sigpending(&p);
    printf("blocked_kill: pending %d, calls %d, sum %.0f\n", sigismember(&p, SIGSEGV),
           (int)calls, sum());
    return 0;
}
/* sigsuspend with a mask that lets the waiting SIGSEGV through returns at once */
static int m_suspend(void)
{
    install(SIGSEGV, count_sent, 0);
    region_init();
    sigset_t b, none;
    sigemptyset(&b);
    sigaddset(&b, SIGSEGV);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &b, NULL);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGSEGV);
    region_b();
    int rc = sigsuspend(&none), e = errno;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("suspend: rc %d errno %s, calls %d, still blocked %d, sum %.0f\n", rc,
           e == EINTR ? "EINTR" : "other", (int)calls, sigismember(&now, SIGSEGV), sum());
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    psz = sysconf(_SC_PAGESIZE);
    arr = malloc(N * sizeof *arr);
    guard = mmap(NULL, 2 * (size_t)psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!arr || guard == MAP_FAILED)
        return 5;
    const char *m = argc > 1 ? argv[1] : "";
    static const struct {
        const char *name;
        int (*fn)(void);
    } modes[] = {{"before", m_before}, {"after", m_after}, {"plain_after", m_plain_after},
                 {"guard", m_guard}, {"report", m_report}, {"resethand", m_resethand},
                 {"nodefer", m_nodefer}, {"defer", m_defer}, {"onstack", m_onstack},
                 {"ign", m_ign}, {"dfl", m_dfl}, {"bus", m_bus}, {"bus_dfl", m_bus_dfl},
                 {"blocked", m_blocked}, {"blocked_fault", m_blocked_fault},
                 {"blocked_kill", m_blocked_kill}, {"suspend", m_suspend}};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        if (!strcmp(m, modes[i].name))
            return modes[i].fn();
    fprintf(stderr, "usage: sig_styles MODE (before after plain_after guard report resethand "
                    "nodefer defer onstack ign dfl bus bus_dfl blocked blocked_fault "
                    "blocked_kill suspend)\n");
    return 2;
}
