/* SPDX-License-Identifier: BSD-3-Clause */
/* contract_calls.c - calls into large blocks numaplace tracks (tests/contract/test_contract.sh):
 * every class of call that hands the kernel a buffer, and the program's own protections. It
 * prints one line per case (return value, errno, a checksum of the bytes, faults seen); the run
 * under `numaplace profile`, `run --next-touch` and `run --profile` must print the same lines as
 * the plain run. Built with -O2 -D_FORTIFY_SOURCE=2 and =3 (read, pread, recv, fread become
 * __read_chk etc.) and by clang. Each buffer is a fresh malloc (numaplace protects it whole
 * before its first touch); a case that needs time for sampling rounds sleeps in a loop. Under
 * next-touch (run --next-touch, run --profile: their variables are set) a buffer is first
 * written, then a new OpenMP region arms it (ARM: each use is a region of its own), so the call
 * meets armed chunks; the bytes it prints are the call's either way. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MIB (1u << 20)
#define BLOCK (8 * MIB)
#define PAGE 4096u

static char dir[64];
static char datafile[96];

static uint32_t crc(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* one line: name, return value, errno when it failed, checksum */
static void say(const char *name, long ret, const void *p, size_t n)
{
    printf("%-22s ret %ld errno %d crc %08x\n", name, ret, ret < 0 ? errno : 0,
           p && ret > 0 ? crc(p, n) : 0);
}

static int nt; /* under next-touch: buffers are written, then armed by a new region */
static volatile int sink;
#ifdef _OPENMP
#define ARM()                                                                                      \
    do {                                                                                           \
        _Pragma("omp parallel num_threads(2)") sink++;                                             \
    } while (0)
#else
#define ARM() (void)0
#endif
/* b (BLOCK bytes) ready for a call: untouched, or written and armed */
#define READY(b)                                                                                   \
    do {                                                                                           \
        if (nt) {                                                                                  \
            memset((b), 0x5a, BLOCK);                                                              \
            ARM();                                                                                 \
        }                                                                                          \
    } while (0)

static char *fresh(void)
{
    char *b = malloc(BLOCK);
    if (!b)
        exit(3);
    return b;
}

static void make_data(void)
{
    static unsigned char chunk[64 * 1024]; /* small: not tracked */
    snprintf(dir, sizeof dir, "/tmp/npl_contract.XXXXXX");
    if (!mkdtemp(dir))
        exit(3);
    snprintf(datafile, sizeof datafile, "%s/data", dir);
    int fd = open(datafile, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    for (unsigned k = 0; k < BLOCK / sizeof chunk; k++) {
        for (unsigned i = 0; i < sizeof chunk; i++)
            chunk[i] = (unsigned char)(i * 7 + k * 13);
        if (fd < 0 || write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            exit(3);
    }
    close(fd);
}

static void fortified(void)
{
    volatile size_t n = BLOCK;
    int fd = open(datafile, O_RDONLY);
    char *b = malloc(BLOCK);
    ssize_t r = read(fd, b, n);
    say("read", r, b, BLOCK);
    free(b);
    b = malloc(BLOCK);
    READY(b);
    r = pread(fd, b, n / 2, 4096);
    say("pread", r, b, BLOCK / 2);
    free(b);
    b = malloc(BLOCK);
    READY(b);
    FILE *f = fopen(datafile, "rb");
    size_t k = fread(b, 1, n, f);
    say("fread", (long)k, b, BLOCK);
    fclose(f);
    free(b);
    close(fd);
    /* recv of a message sent from a small buffer */
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    static char msg[32768];
    memset(msg, 'r', sizeof msg);
    (void)!write(sv[0], msg, sizeof msg);
    b = malloc(BLOCK);
    READY(b);
    volatile size_t m = sizeof msg;
    r = recv(sv[1], b, m, MSG_WAITALL);
    say("recv", r, b, sizeof msg);
    free(b);
    close(sv[0]);
    close(sv[1]);
}

/* 4 messages of len bytes, one a MiB from at */
static void messages(struct mmsghdr *m, struct iovec *v, char *at, size_t len)
{
    for (int i = 0; i < 4; i++) {
        v[i].iov_base = at + (size_t)i * MIB;
        v[i].iov_len = len;
        memset(&m[i].msg_hdr, 0, sizeof m[i].msg_hdr);
        m[i].msg_hdr.msg_iov = &v[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
}

static void vectors(void)
{
    int fd = open(datafile, O_RDONLY);
    char *b = fresh();
    READY(b);
    struct iovec v[2] = {{b, BLOCK / 2}, {b + BLOCK / 2 + 100, BLOCK / 4}};
    ssize_t r = preadv2(fd, v, 2, 0, 0);
    printf("%-22s ret %ld errno %d crc %08x %08x\n", "preadv2", (long)r, r < 0 ? errno : 0,
           crc(b, BLOCK / 2), crc(b + BLOCK / 2 + 100, BLOCK / 4));
    close(fd);
    char out[128];
    snprintf(out, sizeof out, "%s/out", dir);
    fd = open(out, O_CREAT | O_TRUNC | O_RDWR, 0600);
    char *w = fresh(); /* written by the program, then handed to pwritev2 */
    for (size_t i = 0; i < BLOCK; i++)
        w[i] = (char)(i >> 9);
    struct timespec ts = {0, 50 * 1000 * 1000}; /* sampling rounds protect some of it again */
    nanosleep(&ts, NULL);
    ARM();
    struct iovec wv[1] = {{w, BLOCK}};
    r = pwritev2(fd, wv, 1, 0, 0);
    char *back = fresh();
    READY(back);
    ssize_t got = pread(fd, back, BLOCK, 0);
    printf("%-22s ret %ld back %ld crc %08x\n", "pwritev2", (long)r, (long)got, crc(back, BLOCK));
    close(fd);
    free(back);
    /* recvmmsg / sendmmsg on datagrams, from and into the blocks */
    int sv[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    struct mmsghdr *mm = (struct mmsghdr *)(w + 6 * MIB); /* the headers in a block too */
    struct iovec *iv = (struct iovec *)(w + 7 * MIB);
    messages(mm, iv, w + 77, 1000);
    nanosleep(&ts, NULL);
    ARM();
    int s = sendmmsg(sv[0], mm, 4, 0);
    char *rb = fresh();
    READY(rb);
    struct mmsghdr rm[4];
    struct iovec rv[4];
    messages(rm, rv, rb + 5, 2000);
    int g = recvmmsg(sv[1], rm, 4, MSG_DONTWAIT, NULL);
    uint32_t c = 0;
    for (int i = 0; i < 4 && g > 0; i++)
        c ^= crc(rb + (size_t)i * MIB + 5, 1000) + rm[i].msg_len;
    printf("%-22s sent %d got %d errno %d crc %08x\n", "sendmmsg/recvmmsg", s, g,
           g < 0 ? errno : 0, c);
    close(sv[0]);
    close(sv[1]);
    free(rb);
    free(w);
    free(b);
}

static void *late_writer(void *fd)
{
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    (void)!write(*(int *)fd, "x", 1);
    return NULL;
}

/* poll and select with their arrays in a block, in a loop while sampling rounds go on; the last
 * of each sleeps until another thread writes */
static void events(void)
{
    char *b = fresh();
    READY(b);
    int p[2];
    if (pipe(p))
        exit(3);
    (void)!write(p[1], "abc", 3);
    struct pollfd *fds = (struct pollfd *)(b + 2 * MIB + 100);
    fd_set *rs = (fd_set *)(b + 6 * MIB + 200);
    int okp = 0, oks = 0, errp = 0, errs = 0;
    for (int i = 0; i < 40; i++) {
        fds[0].fd = p[0];
        fds[0].events = POLLIN;
        fds[1].fd = p[1];
        fds[1].events = POLLOUT;
        int r = poll(fds, 2, 0);
        r == 2 &&fds[0].revents == POLLIN ? okp++ : errp++;
        FD_ZERO(rs);
        FD_SET(p[0], rs);
        struct timeval tv = {0, 0};
        r = select(p[0] + 1, rs, NULL, NULL, &tv);
        r == 1 &&FD_ISSET(p[0], rs) ? oks++ : errs++;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (i % 8 == 0)
            ARM();
    }
    printf("%-22s ok %d bad %d\n", "poll loop", okp, errp);
    printf("%-22s ok %d bad %d\n", "select loop", oks, errs);
    int q[2];
    if (pipe(q))
        exit(3);
    pthread_t t;
    pthread_create(&t, NULL, late_writer, &q[1]);
    fds[0].fd = q[0];
    fds[0].events = POLLIN;
    ARM();
    int r = poll(fds, 1, 5000);
    printf("%-22s ret %d revents %d\n", "poll sleeping", r, fds[0].revents);
    pthread_join(t, NULL);
    char c;
    (void)!read(q[0], &c, 1);
    pthread_create(&t, NULL, late_writer, &q[1]);
    FD_ZERO(rs);
    FD_SET(q[0], rs);
    ARM();
    r = select(q[0] + 1, rs, NULL, NULL, NULL);
    printf("%-22s ret %d set %d\n", "select sleeping", r, FD_ISSET(q[0], rs) != 0);
    pthread_join(t, NULL);
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
    free(b);
}

/* getrandom, the stat family, getdents64 and vmsplice into fresh blocks */
static void structs(void)
{
    char *b = fresh();
    READY(b);
    READY(b);
    ssize_t r = getrandom(b + MIB, 4096, 0);
    say("getrandom", r, NULL, 0);
    struct stat *st = (struct stat *)(b + 2 * MIB);
    int fd = open(datafile, O_RDONLY);
    int k = fstat(fd, st);
    printf("%-22s ret %d size %lld\n", "fstat", k, k ? -1LL : (long long)st->st_size);
    free(b);
    b = fresh();
    READY(b);
    st = (struct stat *)(b + 3 * MIB);
    k = stat(datafile, st);
    printf("%-22s ret %d size %lld\n", "stat", k, k ? -1LL : (long long)st->st_size);
    free(b);
    b = fresh();
    READY(b);
    struct statx *sx = (struct statx *)(b + 4 * MIB);
    k = statx(AT_FDCWD, datafile, 0, STATX_SIZE, sx);
    printf("%-22s ret %d size %lld\n", "statx", k, k ? -1LL : (long long)sx->stx_size);
    free(b);
    b = fresh();
    READY(b);
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    ssize_t n = getdents64(d, b + MIB, 65536);
    int entries = 0;
    for (ssize_t o = 0; o < n;) {
        struct dirent64 *e = (struct dirent64 *)(b + MIB + o);
        entries++;
        o += e->d_reclen;
    }
    printf("%-22s ret>0 %d entries %d\n", "getdents64", n > 0, entries);
    close(d);
    free(b);
    b = fresh();
    READY(b);
    r = pread(fd, b, BLOCK, 0); /* written by the kernel, then spliced to a pipe */
    ARM();
    int p[2];
    if (pipe2(p, O_NONBLOCK)) /* a failed vmsplice leaves it empty: no wait */
        exit(3);
    struct iovec v = {b + MIB, 16384};
    ssize_t s = vmsplice(p[1], &v, 1, 0);
    static char out[16384];
    ssize_t g = read(p[0], out, sizeof out);
    printf("%-22s ret %ld read %ld crc %08x\n", "vmsplice", (long)s, (long)g, crc(out, sizeof out));
    close(p[0]);
    close(p[1]);
    close(fd);
    free(b);
}

/* the program's own protections */
static sigjmp_buf jb;
static volatile int faults;
static char *dirty_lo;
static volatile size_t dirty;
static void on_guard(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)ctx;
    faults++;
    if (dirty_lo) { /* dirty tracking: record the page, make it writable, retry */
        char *pg = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(PAGE - 1));
        dirty++;
        mprotect(pg, PAGE, PROT_READ | PROT_WRITE);
        return;
    }
    siglongjmp(jb, 1);
}

static void protections(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_guard;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    struct timespec ts = {0, 5 * 1000 * 1000};
    /* a guard page inside a block: every write faults */
    char *b = fresh();
    char *pg = (char *)(((uintptr_t)b + 3 * MIB) & ~(uintptr_t)(PAGE - 1));
    memset(b, 1, BLOCK);
    mprotect(pg, PAGE, PROT_NONE);
    faults = 0;
    for (volatile int i = 0; i < 50; i++) {
        if (!sigsetjmp(jb, 1))
            pg[(i * 97) % PAGE] = 2;
        nanosleep(&ts, NULL);
        if (i % 10 == 0)
            ARM();
    }
    printf("%-22s faults %d of 50\n", "guard page", faults);
    mprotect(pg, PAGE, PROT_READ | PROT_WRITE); /* (kept: a jump target's neighbour) */
    /* dirty tracking: a read-only block, the first write to each page recorded */
    char *d = fresh();
    char *lo = (char *)(((uintptr_t)d + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
    size_t pages = (BLOCK - PAGE) / PAGE;
    memset(d, 0, BLOCK);
    mprotect(lo, pages * PAGE, PROT_READ);
    faults = 0;
    dirty = 0;
    dirty_lo = lo;
    for (int round = 0; round < 4; round++) {
        for (size_t i = (size_t)round; i < pages; i += 7)
            lo[i * PAGE + 8] = 1;
        nanosleep(&ts, NULL);
        ARM();
    }
    dirty_lo = NULL;
    size_t written = 0;
    for (size_t i = 0; i < pages; i++)
        written += lo[i * PAGE + 8];
    printf("%-22s dirty %zu written %zu\n", "dirty tracking", (size_t)dirty, written);
    mprotect(lo, pages * PAGE, PROT_READ | PROT_WRITE);
    free(d);
    /* a read-only file mapped MAP_FIXED over part of a block stays read-only */
    char *m = fresh();
    char *at = (char *)(((uintptr_t)m + 2 * MIB) & ~(uintptr_t)(PAGE - 1));
    int fd = open(datafile, O_RDONLY);
    memset(m, 1, BLOCK);
    ARM();
    void *f = mmap(at, 4 * PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
    faults = 0;
    for (volatile int i = 0; i < 20; i++) {
        if (!sigsetjmp(jb, 1))
            at[(size_t)i * 811 % (4 * PAGE)] = 9;
        nanosleep(&ts, NULL);
        if (i % 5 == 0)
            ARM();
    }
    printf("%-22s mapped %d faults %d of 20 crc %08x\n", "MAP_FIXED read-only", f == at, faults,
           crc(at, 4 * PAGE));
    close(fd);
    /* the block is not given back: part of it is a file mapping now */
    signal(SIGSEGV, SIG_DFL);
}

/* this thread's number in its team, and the team's size (1, 1 without OpenMP) */
static void team(int *t, int *n)
{
    *t = 0;
    *n = 1;
#ifdef _OPENMP
    *t = omp_get_thread_num();
    *n = omp_get_num_threads();
#endif
}

/* A phase-changing array, the case run --profile re-arms (run the program with two threads on
 * two nodes: --pin scatter), as guest_profile_locality's phase case: written by the main thread,
 * then ROUNDS times region A (each thread reads its half PASSES times) and region B (each thread
 * the pages of one parity, twice as many times: in the guest B got a third of A's samples at
 * PASSES, and 1 profile of 10 advised the array blocked), then region A once more, where each thread's first touch of its half
 * is a pread of the data file into it. Profiled, the array is advised phase-changing, next-touch
 * at A and B; under run --profile of that profile next-touch arms it at each A, so the preads
 * meet armed pages. */
static void phase_changing(void)
{
    enum { PH = 2 * MIB, ROUNDS = 3, PASSES = 20 };
    const size_t n = PH / sizeof(double), per_page = PAGE / sizeof(double);
    double *a = malloc(PH), sum = 0;
    int fd = open(datafile, O_RDONLY);
    if (!a || fd < 0)
        exit(3);
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 17);
    ssize_t got[2] = {0, 0};
    for (int k = 0; k <= ROUNDS; k++) {
#ifdef _OPENMP
#pragma omp parallel num_threads(2) reduction(+ : sum)
#endif
        {
            int t, nt2;
            team(&t, &nt2);
            for (int u = t; u < 2; u += nt2) { /* alone: both halves */
                size_t lo = (size_t)u * (n / 2);
                if (k == ROUNDS)
                    got[u] = pread(fd, (char *)(a + lo), PH / 2, (off_t)(lo * sizeof *a));
                else
                    for (int p = 0; p < PASSES; p++)
                        for (size_t i = lo; i < lo + n / 2; i++)
                            sum += a[i];
            }
        }
        if (k == ROUNDS)
            break;
#ifdef _OPENMP
#pragma omp parallel num_threads(2) reduction(+ : sum)
#endif
        {
            int t, nt2;
            team(&t, &nt2);
            for (int p = 0; p < 2 * PASSES; p++) /* (its page loop runs faster: as many samples) */
                for (size_t pg = nt2 == 2 ? (size_t)(1 - t) : 0; pg < n / per_page; pg += (size_t)nt2)
                    for (size_t i = pg * per_page; i < (pg + 1) * per_page; i++)
                        sum += a[i];
        }
    }
    say("phase passes", (long)sum, NULL, 0);
    say("phase pread halves", got[0] + got[1], a, PH);
    close(fd);
    free(a);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *e = getenv("NUMAPLACE_NEXT_TOUCH"), *apply = getenv("NUMAPLACE_PROFILE_APPLY");
    nt = (e && *e && strcmp(e, "0")) || (apply && *apply);
    make_data();
    phase_changing(); /* first: the only large array then, so the sampler's rounds are its own */
    fortified();
    vectors();
    events();
    structs();
    protections();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) != 0;
}
