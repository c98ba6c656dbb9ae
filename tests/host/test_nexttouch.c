/* SPDX-License-Identifier: BSD-3-Clause */
/* Host tests of user-space next-touch (one node here: placement is trivial, but the mechanism —
 * protection, the signal handler, concurrency, chaining, EFAULT, mappings, fork — is all real).
 * Page placement by the toucher is checked in the guest (tests/guest/guest_nexttouch.c). */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include "migration/migration.h" /* npl__next_touch_forget, npl__next_touch_disarm_quiet */
#include "rearm_race.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1024 * 1024)

static sigjmp_buf jump;
static volatile int user_handler_calls;
static void user_handler(int sig)
{
    (void)sig;
    user_handler_calls++;
    siglongjmp(jump, 1);
}

struct hammer {
    unsigned char *a;
    size_t bytes;
    int id, nthreads;
};
/* every thread writes its own bytes (id mod nthreads) of EVERY page: same chunks, all threads */
static void *hammer(void *arg)
{
    struct hammer *h = arg;
    for (size_t i = (size_t)h->id; i < h->bytes; i += 64 * (size_t)h->nthreads)
        h->a[i] = (unsigned char)(h->id + 1 + (i >> 12));
    return NULL;
}

static void *counter_thread(void *arg)
{
    _Atomic uint64_t *c = arg;
    for (int k = 0; k < 1000; k++)
        atomic_fetch_add(c + (k % 64) * 512, 1); /* 64 pages, 16 chunks */
    return NULL;
}


/* ---- regression helpers (re-arm races, protections, stale ranges, fork) ---- */

/* the permissions ("rw-p") of the mapping holding addr, "" if none (lines of any length) */
static void perms_at(const void *addr, char out[5])
{
    FILE *f = fopen("/proc/self/maps", "re");
    char *line = NULL;
    size_t cap = 0;
    out[0] = 0;
    while (f && getline(&line, &cap, f) > 0) {
        unsigned long s, e;
        char p[5];
        if (sscanf(line, "%lx-%lx %4s", &s, &e, p) == 3 && (uintptr_t)addr >= s &&
            (uintptr_t)addr < e) {
            memcpy(out, p, 5);
            break;
        }
    }
    free(line);
    if (f)
        fclose(f);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define RACE_PAGES 64
struct racer {
    uint64_t *buf; /* RACE_PAGES pages */
    int id;
    _Atomic int *stop;
    uint64_t done; /* increments made */
    int arm_fail;
    int disarm;    /* a re-armer that also disarms between arms */
};
/* a toucher: increments its own word of every page, round after round */
static void *race_toucher(void *arg)
{
    struct racer *r = arg;
    while (!atomic_load(r->stop))
        for (int p = 0; p < RACE_PAGES; p++) {
            r->buf[(size_t)p * 512 + (size_t)r->id * 8]++;
            r->done++;
        }
    return NULL;
}
/* a re-armer: arms the same range again and again */
static void *race_armer(void *arg)
{
    struct racer *r = arg;
    while (!atomic_load(r->stop)) {
        if (npl_next_touch_arm(r->buf, RACE_PAGES * 4096, 4096) < 0)
            r->arm_fail++;
        if (r->disarm && npl_next_touch_disarm(r->buf) < 0)
            r->arm_fail++;
        r->done++;
    }
    return NULL;
}

/* nt touchers + na re-armers on one range for `secs`, in a child (a crash is a failure, not the
 * end of the test): exit 0 if every increment is in memory */
static int race_child(int nt, int na, double secs, int disarm)
{
    uint64_t *buf = mmap(NULL, RACE_PAGES * 4096, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED || npl_next_touch_arm(buf, RACE_PAGES * 4096, 4096) < 0)
        return 2;
    _Atomic int stop = 0;
    struct racer r[16];
    pthread_t th[16];
    for (int i = 0; i < nt + na; i++) {
        r[i] = (struct racer){buf, i, &stop, 0, 0, disarm};
        pthread_create(&th[i], NULL, i < nt ? race_toucher : race_armer, &r[i]);
    }
    double t0 = now_s();
    while (now_s() - t0 < secs)
        usleep(10000);
    atomic_store(&stop, 1);
    for (int i = 0; i < nt + na; i++)
        pthread_join(th[i], NULL);
    int rc = 0;
    uint64_t arms = 0;
    for (int i = nt; i < nt + na; i++) {
        arms += r[i].done;
        if (r[i].arm_fail)
            rc = 3;
    }
    for (int i = 0; i < nt; i++) {
        uint64_t sum = 0;
        for (int p = 0; p < RACE_PAGES; p++)
            sum += buf[(size_t)p * 512 + (size_t)i * 8];
        if (sum != r[i].done) {
            printf("toucher %d: %llu increments in memory, %llu made\n", i,
                   (unsigned long long)sum, (unsigned long long)r[i].done);
            rc = 4;
        }
    }
    printf("race %d touchers + %d re-armers: %llu arms\n", nt, na, (unsigned long long)arms);
    fflush(stdout);
    if (!disarm && npl_next_touch_disarm(buf) < 0)
        rc = 5;
    return rc;
}

static int run_child(int (*fn)(void *), void *arg, int timeout)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm((unsigned)timeout); /* a deadlock ends as SIGALRM */
        _exit(fn(arg));
    }
    int st;
    waitpid(pid, &st, 0);
    return st;
}

static int race_7_1(void *arg) { (void)arg; return race_child(7, 1, 3.0, 0); }
static int race_8_armers(void *arg) { (void)arg; return race_child(2, 8, 2.0, 0); }
static int race_disarm(void *arg) { (void)arg; return race_child(4, 1, 2.0, 1); }

/* fork while another thread holds (almost always) arm_lock: the child can arm and disarm */
static void *lock_holder(void *arg)
{
    struct racer *r = arg;
    while (!atomic_load(r->stop))
        npl_next_touch_arm(r->buf, RACE_PAGES * 4096, 4096);
    return NULL;
}
static int fork_child_arms(void *arg)
{
    (void)arg;
    char *m = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (npl_next_touch_arm(m, 16 * 4096, 0) < 0)
        return 2;
    m[5] = 1;
    return npl_next_touch_disarm(m) == 0 && m[5] == 1 ? 0 : 3;
}

/* a write into a range that was read-only before arming: a real fault */
static char *ro_target;
static int write_readonly(void *arg)
{
    (void)arg;
    ro_target[0] = 1;
    return 0;
}

/* Re-arming an array while 7 threads write to it must finish, and every write must survive:
 * each writer makes a known number of passes and one thread re-arms until they are done (in a
 * child with a watchdog). The old protocol could not finish: handlers that found an arm in
 * progress faulted again at once and kept the arm's wait for them from ever ending. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RACES 3 /* each race is 5-10 times slower under a sanitizer */
#define RACE_WATCHDOG 300
#else
#define RACES 10
#define RACE_WATCHDOG 60
#endif
static void test_rearm_liveness(void)
{
    const size_t chunks[2] = {4096, 64 * 1024};
    for (int c = 0; c < 2; c++) {
        int ok = 0, runs = RACES;
        for (int i = 0; i < runs; i++) {
            int st = rearm_race(64, chunks[c], 7, 100, 50, 0, RACE_WATCHDOG);
            ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
                printf("  re-arm race %d: status %#x (%s)\n", i, st,
                       WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? "hung: watchdog"
                                                                  : "failed");
        }
        CHECK(ok == runs, "re-arm in a loop while 7 threads write, %zu-byte chunks: %d of %d "
              "races finished with every write kept", chunks[c], ok, runs);
    }
}

static void test_regressions(void)
{
    int st;
    test_rearm_liveness();
    /* 1. re-arming while 7 threads touch; 8 threads re-arming one range */
    st = run_child(race_7_1, NULL, 60);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "re-arm in a loop while 7 threads increment their words: no crash, every increment "
          "kept (status %#x)", st);
    st = run_child(race_disarm, NULL, 60);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "arm + disarm in a loop while 4 threads increment: no crash, nothing lost (status %#x)",
          st);
    st = run_child(race_8_armers, NULL, 60);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "8 threads re-arming one range while 2 touch it: no crash, nothing lost (status %#x)",
          st);

    /* 2. the protection found is the one restored */
    size_t ps = 4096;
    char perms[5];
    char *ro = mmap(NULL, 16 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(npl_next_touch_arm(ro, 16 * ps, 0) == 0, "arm a PROT_READ range: %s", npl_last_error());
    CHECK(((volatile char *)ro)[5 * ps] == 0, "read an armed read-only range");
    perms_at(ro + 5 * ps, perms);
    CHECK(strcmp(perms, "r--p") == 0, "resolved read-only chunk stays r--p (%s)", perms);
    ro_target = ro + 6 * ps;
    st = run_child(write_readonly, NULL, 10);
    CHECK(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0),
          "a write into the armed read-only range is still a real fault (status %#x)", st);
    CHECK(npl_next_touch_disarm(ro) == 0, "disarm the read-only range");
    perms_at(ro + 9 * ps, perms);
    CHECK(strcmp(perms, "r--p") == 0, "disarmed read-only range is r--p again (%s)", perms);
    munmap(ro, 16 * ps);

    char path[] = "/tmp/npl_nt_XXXXXX";
    int fd = mkstemp(path);
    char blk[4096];
    memset(blk, 'z', sizeof blk);
    for (int i = 0; i < 16; i++)
        CHECK(write(fd, blk, sizeof blk) == (ssize_t)sizeof blk, "write the file");
    int rfd = open(path, O_RDONLY);
    char *sh = mmap(NULL, 16 * ps, PROT_READ, MAP_SHARED, rfd, 0);
    CHECK(npl_next_touch_arm(sh, 16 * ps, 0) == 0, "arm a read-only shared file mapping: %s",
          npl_last_error());
    CHECK(((volatile char *)sh)[3 * ps] == 'z', "a plain read of it works");
    perms_at(sh + 3 * ps, perms);
    CHECK(strcmp(perms, "r--s") == 0, "and it stays r--s (%s)", perms);
    CHECK(npl_next_touch_disarm(sh) == 0, "disarm it");
    perms_at(sh + 12 * ps, perms);
    CHECK(strcmp(perms, "r--s") == 0, "disarmed: r--s (%s)", perms);
    munmap(sh, 16 * ps);
    char *big = mmap(NULL, 64 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ftruncate(fd, (off_t)ps); /* 64 pages over a 1-page file */
    CHECK(npl_next_touch_arm(big, 64 * ps, 0) == -1 && errno == EFAULT,
          "a shared file mapping past the end of its file: EFAULT (%d: %s)", errno,
          npl_last_error());
    munmap(big, 64 * ps);
    close(rfd);
    close(fd);
    unlink(path);

    char *mix = mmap(NULL, 16 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(mix + 8 * ps, 8 * ps, PROT_READ);
    CHECK(npl_next_touch_arm(mix, 16 * ps, 0) == -1 && errno == EINVAL,
          "mixed protections: EINVAL (%s)", npl_last_error());
    mprotect(mix, 16 * ps, PROT_NONE);
    CHECK(npl_next_touch_arm(mix, 16 * ps, 0) == -1 && errno == EACCES,
          "PROT_NONE: EACCES (%s)", npl_last_error());
    munmap(mix, 16 * ps);

    /* 3. size arithmetic that overflows */
    char *e = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(npl_next_touch_arm(e, MIB, SIZE_MAX) == -1 && (errno == EOVERFLOW || errno == EINVAL),
          "chunk SIZE_MAX: EOVERFLOW (%d)", errno);
    CHECK(npl_next_touch_arm(e, MIB, SIZE_MAX - 4094) == -1 &&
              (errno == EOVERFLOW || errno == EINVAL),
          "chunk SIZE_MAX-4094: EOVERFLOW (%d)", errno);
    struct npl_next_touch_stats s0, s1;
    npl_next_touch_get_stats(&s0);
    CHECK(npl_next_touch_arm(e, MIB, SIZE_MAX - 4095) == 0, "chunk SIZE_MAX-4095: one chunk");
    e[MIB - 1] = 1;
    e[0] = 2;
    npl_next_touch_get_stats(&s1);
    CHECK(s1.chunks - s0.chunks == 1 && e[MIB - 1] == 1, "the whole range was one chunk (%llu)",
          (unsigned long long)(s1.chunks - s0.chunks));
    npl_next_touch_disarm(e);
    CHECK(npl_next_touch_arm(e, SIZE_MAX, 0) == -1 && (errno == EOVERFLOW || errno == EINVAL),
          "len SIZE_MAX: EOVERFLOW (%d)", errno);
    CHECK(npl_next_touch_arm(e, SIZE_MAX - 4095, 0) == -1 &&
              (errno == EOVERFLOW || errno == EINVAL),
          "len SIZE_MAX-4095: EOVERFLOW (%d)", errno);
    size_t to_top = (size_t)(UINTPTR_MAX - (uintptr_t)e); /* e + to_top is the last byte */
    CHECK(npl_next_touch_arm(e, to_top, 0) == -1 &&
              (errno == EOVERFLOW || errno == EINVAL || errno == EFAULT),
          "len up to the last address (rounding wraps): refused (%d)", errno);
    CHECK(npl_next_touch_arm(e, (size_t)1 << 46, 0) == -1 && errno == EFAULT,
          "64 TiB mostly unmapped: EFAULT (%d)", errno);

    /* 4. ranges that outlive their memory */
    npl_policy *p;
    npl_policy_parse(&p, "first_touch");
    char *arr = npl_alloc(MIB, p);
    CHECK(arr && npl_next_touch_arm_array(arr, 0) == 0, "arm an array");
    struct npl_array_info info;
    npl_array_info(arr, &info);
    char *abase = info.base;
    size_t abytes = info.bytes;
    npl_free(arr); /* array.c does not forget the range yet: the stale slot is found below */
    char *again = mmap(abase, abytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (again == abase) {
        CHECK(npl_next_touch_arm(again, abytes, 0) == 0,
              "arm new memory where a freed armed array was: %s", npl_last_error());
        again[7] = 7;
        CHECK(npl_next_touch_disarm(again) == 0 && again[7] == 7, "and use it");
        munmap(again, abytes);
    } else {
        SKIP("nexttouch-address-taken", "arm where a freed armed array was: its address was "
             "taken meanwhile");
        if (again != MAP_FAILED)
            munmap(again, abytes);
    }
    char *gone = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(npl_next_touch_register(gone, MIB, 0) == 0, "register a range");
    munmap(gone, MIB); /* without disarming */
    char *ro2 = mmap(gone, MIB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(ro2 == gone && npl_next_touch_rearm_all() == 0, "rearm_all after the munmap");
    perms_at(ro2 + 4096, perms);
    CHECK(strcmp(perms, "r--p") == 0,
          "an unrelated read-only mapping at the old address is left alone (%s)", perms);
    errno = 0;
    CHECK(npl_next_touch_disarm(ro2) == -1 && errno == ENOENT, "the stale range was dropped");
    munmap(ro2, MIB);
    /* the internal entry points for frees */
    char *q = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    npl_next_touch_arm(q, MIB, 0);
    npl_next_touch_disarm(e + 12345); /* sets an error message */
    char msg[256];
    snprintf(msg, sizeof msg, "%s", npl_last_error());
    CHECK(npl__next_touch_disarm_quiet(q + 4096) == 0 && strcmp(msg, npl_last_error()) == 0,
          "quiet disarm of memory that is not armed: 0, no new message");
    CHECK(npl__next_touch_disarm_quiet(q) == 1 && q[9] == 0, "quiet disarm of an armed range: 1");
    npl_next_touch_arm(q, MIB, 0);
    npl__next_touch_forget(q + 4096, 4096); /* any overlap */
    CHECK(npl_next_touch_disarm(q) == -1 && errno == ENOENT, "forget drops the range");
    munmap(q, MIB);
    munmap(e, 2 * MIB);
    npl_policy_free(p);

    /* 5. fork while another thread holds arm_lock */
    uint64_t *buf = mmap(NULL, RACE_PAGES * 4096, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    _Atomic int stop = 0;
    struct racer r = {buf, 0, &stop, 0, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, lock_holder, &r);
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        st = run_child(fork_child_arms, NULL, 10);
        bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    CHECK(bad == 0, "fork while another thread arms: %d of 20 children stuck or failed", bad);
    npl_next_touch_disarm(buf);
    munmap(buf, RACE_PAGES * 4096);
}

/* the transparent mode's re-arm entry points (preload/rearm.c): only chunks with pages in memory,
 * samples, and what each arm taught (pages resolved since) */
static struct npl__nt_range *range_of(void *base)
{
    static struct npl__nt_range r[256];
    int n = npl__next_touch_ranges(r, 256);
    for (int i = 0; i < n; i++)
        if (r[i].base == base)
            return &r[i];
    return NULL;
}

static void test_rearm_range(void)
{
    size_t bytes = 8 * MIB, chunk = NPL_NEXT_TOUCH_DEFAULT_CHUNK, nchunks = bytes / chunk;
    unsigned char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                            0);
    madvise(a, bytes, MADV_NOHUGEPAGE);
    CHECK(a != MAP_FAILED && npl_next_touch_register(a, bytes, 0) == 0, "register 8 MiB");
    struct npl__nt_range *r = range_of(a);
    CHECK(r && r->arms == 0 && r->id > 0 && r->len == bytes && r->chunk == chunk,
          "a registered range is listed, never armed");
    uint64_t id = r ? r->id : 0;
    memset(a, 1, bytes / 4); /* the first quarter in memory: 32 chunks */
    CHECK(npl__next_touch_rearm_range(id, 1, 0, 0) == 0, "re-arm the chunks in memory");
    r = range_of(a);
    CHECK(r && r->arms == 1 && !r->sampled && r->armed_pages == bytes / 4 / 4096 &&
              r->got_pages == 0,
          "only the 32 chunks in memory are armed (%llu pages)",
          r ? (unsigned long long)r->armed_pages : 0);
    struct npl_next_touch_stats s0, s1;
    npl_next_touch_get_stats(&s0);
    for (size_t i = 0; i < bytes; i += 4096)
        a[i] += 1;
    npl_next_touch_get_stats(&s1);
    r = range_of(a);
    CHECK(s1.chunks - s0.chunks == nchunks / 4 && r && r->got_pages == bytes / 4 / 4096 &&
              r->got_moved == 0,
          "touching everything resolves the 32 armed chunks only (%llu), their %llu pages seen, "
          "none moved (one node)", (unsigned long long)(s1.chunks - s0.chunks),
          r ? (unsigned long long)r->got_pages : 0);
    CHECK(npl__next_touch_rearm_range(id, 1, 8, 3) == 0, "a sample of 8 chunks");
    r = range_of(a);
    CHECK(r && r->sampled && r->armed_pages == 8 * chunk / 4096 && r->got_pages == 0,
          "the sample arms 8 chunks (%llu pages)", r ? (unsigned long long)r->armed_pages : 0);
    CHECK(maps_in(a, bytes) == 3, "one run of chunks protected: 3 mappings (%d)",
          maps_in(a, bytes));
    npl_next_touch_get_stats(&s0);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; i += 4096)
        bad += a[i] != 2 - (i >= bytes / 4), a[i] += 1;
    npl_next_touch_get_stats(&s1);
    CHECK(bad == 0 && s1.chunks - s0.chunks == 8 && maps_in(a, bytes) == 1,
          "touching everything resolves the 8 sampled chunks, data kept, mappings merged (%llu "
          "chunks, %zu bytes wrong)", (unsigned long long)(s1.chunks - s0.chunks), bad);
    CHECK(npl__next_touch_rearm_range(id + 1000, 1, 0, 0) == 1, "an unknown id: 1");
    CHECK(npl_next_touch_disarm(a) == 0 && !range_of(a), "disarm: not listed any more");
    munmap(a, bytes);
}

/* System calls' holds (the interposer's io.c): a held buffer's armed chunks are resolved, and no
 * arm protects a chunk of it until its release; more holds than the table has: nothing armed */
static size_t armed_chunks(const unsigned char *a, size_t nchunks, size_t chunk)
{
    size_t n = 0;
    for (size_t c = 0; c < nchunks; c++)
        n += (size_t)npl__next_touch_armed(a + c * chunk);
    return n;
}

static void test_holds(void)
{
    size_t chunk = NPL_NEXT_TOUCH_DEFAULT_CHUNK, nchunks = 16, bytes = nchunks * chunk;
    unsigned char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                            0);
    if (a == MAP_FAILED) {
        CHECK(0, "map 1 MiB for the holds");
        return;
    }
    memset(a, 3, bytes);
    CHECK(npl_next_touch_arm(a, bytes, 0) == 0 && armed_chunks(a, nchunks, chunk) == nchunks,
          "armed: all 16 chunks (%zu)", armed_chunks(a, nchunks, chunk));
    int t = npl__next_touch_hold(a + 5 * chunk + 100, 10);
    CHECK(t >= 0 && !npl__next_touch_armed(a + 5 * chunk) &&
              armed_chunks(a, nchunks, chunk) == nchunks - 1,
          "a hold resolves the armed chunk under its buffer, only that one (token %d, %zu armed)",
          t, armed_chunks(a, nchunks, chunk));
    npl__next_touch_release(t);
    for (size_t i = 0; i < bytes; i += 4096)
        a[i] += 1; /* every chunk resolved */
    t = npl__next_touch_hold(a + 2 * chunk + 100, chunk); /* chunks 2 and 3 */
    CHECK(npl_next_touch_arm(a, bytes, 0) == 0 && armed_chunks(a, nchunks, chunk) == nchunks - 2 &&
              !npl__next_touch_armed(a + 2 * chunk) && !npl__next_touch_armed(a + 3 * chunk),
          "an arm during a hold leaves its two chunks out (%zu armed)",
          armed_chunks(a, nchunks, chunk));
    npl__next_touch_release(t);
    CHECK(npl_next_touch_arm(a, bytes, 0) == 0 && armed_chunks(a, nchunks, chunk) == nchunks,
          "released: the next arm arms all 16 (%zu)", armed_chunks(a, nchunks, chunk));
    int tokens[80], over = 0;
    for (int i = 0; i < 80; i++)
        tokens[i] = npl__next_touch_hold(a + (size_t)i, 1);
    for (int i = 0; i < 80; i++)
        over += tokens[i] == tokens[79];
    CHECK(npl_next_touch_arm(a, bytes, 0) == 0 && armed_chunks(a, nchunks, chunk) == 0 &&
              over > 1,
          "80 holds, more than the table holds (%d share the overflow token): an arm arms no "
          "chunk (%zu)", over, armed_chunks(a, nchunks, chunk));
    for (int i = 0; i < 80; i++)
        npl__next_touch_release(tokens[i]);
    CHECK(npl_next_touch_arm(a, bytes, 0) == 0 && armed_chunks(a, nchunks, chunk) == nchunks,
          "all released: all 16 armed again (%zu)", armed_chunks(a, nchunks, chunk));
    size_t bad = 0;
    for (size_t i = 0; i < bytes; i++)
        bad += a[i] != (i % 4096 ? 3 : 4);
    CHECK(bad == 0, "the data kept through holds and arms (%zu bytes wrong)", bad);
    CHECK(npl__next_touch_hold((void *)4096, 10) == -1, "a buffer below every registered range: "
          "nothing held");
    CHECK(npl_next_touch_disarm(a) == 0, "disarm after the holds");
    munmap(a, bytes);
}

int main(void)
{
    /* 1. many threads fault the same and different chunks at once: no write lost */
    size_t bytes = 64 * MIB;
    npl_policy *p;
    npl_policy_parse(&p, "bind_all");
    unsigned char *a = npl_alloc(bytes, p);
    CHECK(a && npl_next_touch_arm_array(a, 0) == 0, "arm a 64 MiB array: %s", npl_last_error());
    enum { T = 8 };
    pthread_t th[T];
    struct hammer h[T];
    for (int i = 0; i < T; i++) {
        h[i] = (struct hammer){a, bytes, i, T};
        pthread_create(&th[i], NULL, hammer, &h[i]);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; i++) {
        int id = (int)(i % (64 * T));
        unsigned char want = id < T ? (unsigned char)(id + 1 + (i >> 12)) : 0;
        bad += a[i] != want;
    }
    struct npl_next_touch_stats s;
    npl_next_touch_get_stats(&s);
    CHECK(bad == 0, "8 threads, every chunk touched by all: %zu bytes wrong", bad);
    CHECK(s.chunks == bytes / NPL_NEXT_TOUCH_DEFAULT_CHUNK,
          "every 64 KiB chunk resolved exactly once (%llu chunks, %llu faults, %llu waits)",
          (unsigned long long)s.chunks, (unsigned long long)s.faults,
          (unsigned long long)s.waits);
    /* atomic counters from several threads over re-armed chunks */
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "re-arm");
    memset(a, 0, 64 * 4096); /* resolves 4 chunks */
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "re-arm again");
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, counter_thread, a);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    uint64_t total = 0;
    for (int k = 0; k < 64; k++)
        total += ((uint64_t *)a)[k * 512];
    CHECK(total == T * 1000, "atomic increments across faults: %llu (want %d)",
          (unsigned long long)total, T * 1000);
    CHECK(npl_next_touch_disarm(a) == 0, "disarm");
    a[bytes - 1] = 7;
    CHECK(a[bytes - 1] == 7, "disarmed memory accessible");
    CHECK(npl_next_touch_disarm(a) == -1 && errno == ENOENT, "disarm twice: ENOENT");

    /* 2. read(2) into an armed buffer: EFAULT without prepare, works with it */
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "arm for read(2)");
    int fd = open("/proc/self/exe", O_RDONLY);
    errno = 0;
    ssize_t r = read(fd, a + 3 * MIB, 4096);
    CHECK(r == -1 && errno == EFAULT, "read(2) into an armed chunk: EFAULT (%zd, %d)", r, errno);
    CHECK(npl_next_touch_prepare(a + 3 * MIB, 4096) == 0, "prepare the buffer");
    lseek(fd, 0, SEEK_SET);
    r = read(fd, a + 3 * MIB, 4096);
    CHECK(r == 4096 && memcmp(a + 3 * MIB, "\177ELF", 4) == 0, "read(2) after prepare: %zd", r);
    close(fd);
    npl_next_touch_disarm(a);

    /* 3. a handler the program installed before arming still gets its own faults */
    struct sigaction sa = {0}, old;
    sa.sa_handler = user_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
    pid_t pid = fork();
    if (pid == 0) { /* in a child: the library installs its handler once per process */
        char *mine = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *arm = mmap(NULL, 8 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        int ok = npl_next_touch_arm(arm, 8 * MIB, 0) == 0;
        arm[5 * MIB] = 3; /* numaplace's fault */
        ok &= arm[5 * MIB] == 3 && user_handler_calls == 0;
        if (sigsetjmp(jump, 1) == 0)
            mine[0] = 1; /* the program's own fault */
        ok &= user_handler_calls == 1;
        _exit(ok ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "earlier SIGSEGV handler chained (status %d)", st);
    sigaction(SIGSEGV, &old, NULL);

    /* 3b. npl_fault_handle, the call a handler installed after arming makes first: 1 for an
     * armed chunk (resolved: its page is accessible again), 0 for anything else */
    pid = fork();
    if (pid == 0) {
        char *arm = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *mine = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        int ok = npl_next_touch_arm(arm, MIB, 4096) == 0, bits = 0;
        char perm[5];
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGSEGV;
        si.si_code = SEGV_ACCERR;
        si.si_addr = arm + 8192;
        perms_at(arm + 8192, perm);
        bits |= (perm[0] == '-') << 0;                         /* armed: PROT_NONE */
        bits |= (npl_fault_handle(SIGSEGV, &si, NULL) == 1) << 1; /* numaplace's: resolved */
        perms_at(arm + 8192, perm);
        bits |= (perm[0] == 'r' && perm[1] == 'w') << 2;       /* ... and accessible */
        si.si_addr = mine; /* the program's own: 0 (at the latest the second time: once after a
                            * disarm anywhere, a miss is "retry", the access may have raced) */
        npl_fault_handle(SIGSEGV, &si, NULL);
        bits |= (npl_fault_handle(SIGSEGV, &si, NULL) == 0) << 3;
        si.si_addr = arm + 3 * 4096;
        si.si_code = SI_USER;
        bits |= (npl_fault_handle(SIGSEGV, &si, NULL) == 0) << 4; /* sent by kill: never ours */
        si.si_code = SEGV_ACCERR;
        bits |= (npl_fault_handle(SIGUSR1, &si, NULL) == 0) << 5; /* another signal */
        bits |= (npl_fault_handle(SIGSEGV, &si, NULL) == 1) << 6; /* that one, now */
        _exit(ok && bits == 127 ? 0 : 100 + bits % 100);
    }
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "npl_fault_handle claims armed chunks only "
          "(status %d: 0, else 100 + the checks that passed, as bits)", WEXITSTATUS(st));

    /* 4. a real segfault outside armed ranges still kills */
    pid = fork();
    if (pid == 0) {
        char *arm = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        npl_next_touch_arm(arm, MIB, 0);
        arm[0] = 1;
        volatile int *volatile bad_ptr = (int *)(uintptr_t)16;
        *bad_ptr = 1; /* a NULL-ish dereference */
        _exit(0);
    }
    waitpid(pid, &st, 0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) /* the sanitizer's own SIGSEGV handler was there first: chained, it reports */
    CHECK((WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGABRT)) ||
              (WIFEXITED(st) && WEXITSTATUS(st) != 0),
          "a real segfault still ends the program (the sanitizer's handler, chained)");
#else
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "a real segfault still dies with SIGSEGV");
#endif

    /* 5. fork with an armed range: the child inherits protection and handler and can touch */
    char *f = mmap(NULL, 4 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(f, 9, 4 * MIB);
    npl_next_touch_arm(f, 4 * MIB, 0);
    pid = fork();
    if (pid == 0)
        _exit(f[MIB] == 9 && (f[2 * MIB] = 4) == 4 ? 0 : 1);
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child of fork touches an armed range");
    CHECK(f[2 * MIB] == 9, "the parent's copy is unchanged (copy-on-write)");
    npl_next_touch_disarm(f);
    munmap(f, 4 * MIB);

    /* 6. a 1 GiB range: arming adds no mapping; touching it all in order merges back */
    size_t big = 1024 * (size_t)MIB;
    char *g = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int m0 = count_maps();
    CHECK(npl_next_touch_arm(g, big, 0) == 0, "arm 1 GiB");
    int m1 = count_maps();
    for (size_t i = 0; i < big; i += NPL_NEXT_TOUCH_DEFAULT_CHUNK)
        (void)((volatile char *)g)[i]; /* reads: the zero page, no memory used */
    int m2 = count_maps();
    CHECK(m1 - m0 <= 2 && m2 - m0 <= 2, "1 GiB armed: +%d maps; all touched: +%d maps", m1 - m0,
          m2 - m0);
    /* worst case: every other chunk touched -> bounded by the chunk limit (< vm.max_map_count) */
    npl_next_touch_arm(g, big, 0);
    for (size_t i = 0; i < big; i += 2 * NPL_NEXT_TOUCH_DEFAULT_CHUNK)
        (void)((volatile char *)g)[i];
    int m3 = count_maps();
    CHECK(m3 - m0 <= 2 * 16384 + 2, "every other chunk touched: +%d maps (< 65530)", m3 - m0);
    npl_next_touch_disarm(g);
    munmap(g, big);

    /* 6b. vm.max_map_count reached while chunks are resolved: no crash, no write lost (a
     * child fills the process's mappings, then touches every other chunk of an armed range) */
    pid = fork();
    if (pid == 0) {
        size_t nb = 8 * MIB, cpg = 4096;
        unsigned char *r = mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (size_t i = 0; i < nb; i++)
            r[i] = (unsigned char)(i * 7);
        if (npl_next_touch_arm(r, nb, cpg) < 0)
            _exit(2);
        size_t fill = 70000;
        char *q = mmap(NULL, 2 * fill * 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        size_t used = 0;
        while (used < fill && mprotect(q + 2 * used * 4096, 4096, PROT_READ) == 0)
            used++;
        if (used == fill)
            _exit(3); /* vm.max_map_count not reached: the test cannot run */
        for (size_t k = 0; k < 5; k++) /* room for a few splits: the first touches work */
            mprotect(q + 2 * k * 4096, 4096, PROT_READ | PROT_WRITE);
        for (size_t i = 0; i < nb; i += 2 * cpg)
            r[i + 1] = (unsigned char)(r[i + 1] + 1);
        for (size_t i = cpg; i < nb; i += 2 * cpg)
            r[i + 1] = (unsigned char)(r[i + 1] + 1);
        size_t wrong = 0;
        for (size_t i = 0; i < nb; i++)
            wrong += r[i] != (unsigned char)(i * 7 + (i % cpg == 1));
        struct npl_next_touch_stats ws;
        npl_next_touch_get_stats(&ws);
        _exit(wrong ? 4 : ws.widened == 0 ? 5 : 0);
    }
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
        SKIP("max-map-count", "next-touch at vm.max_map_count: it could not be reached with 70000 "
             "mappings (the limit is higher here)");
    else
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "vm.max_map_count reached during next-touch: chunks widened, all bytes right "
              "(status %d)", st);

    /* 6c. registered, not armed: accessible without faults until npl_next_touch_rearm_all() */
    char *rg = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct npl_next_touch_stats r0, r1, r2;
    npl_next_touch_get_stats(&r0);
    CHECK(npl_next_touch_register(rg, MIB, 0) == 0 && npl_next_touch_register(rg, MIB, 0) == 0,
          "register (twice)");
    memset(rg, 5, MIB);
    npl_next_touch_get_stats(&r1);
    CHECK(r1.faults == r0.faults, "a registered range is accessible: %llu faults",
          (unsigned long long)(r1.faults - r0.faults));
    CHECK(npl_next_touch_rearm_all() == 0, "rearm_all arms it");
    memset(rg, 6, MIB);
    npl_next_touch_get_stats(&r2);
    CHECK(r2.chunks - r1.chunks == MIB / NPL_NEXT_TOUCH_DEFAULT_CHUNK && rg[MIB - 1] == 6,
          "after rearm_all every chunk of the registered range resolves once (%llu)",
          (unsigned long long)(r2.chunks - r1.chunks));
    CHECK(npl_next_touch_disarm(rg) == 0, "disarm forgets a registered range");
    munmap(rg, MIB);
    int y;
    CHECK(npl_next_touch_register_array(&y, 0) == -1 && errno == ENOENT,
          "register an unknown array: ENOENT");

    /* 7. errors */
    char *e = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(npl_next_touch_arm(e + 1, 4096, 0) == -1 && errno == EINVAL, "unaligned: EINVAL");
    CHECK(npl_next_touch_arm(e, 0, 0) == -1 && errno == EINVAL, "empty: EINVAL");
    CHECK(npl_next_touch_arm(e, MIB, 0) == 0 && npl_next_touch_arm(e + 4096, MIB, 0) == -1 &&
              errno == EINVAL,
          "overlapping ranges refused");
    CHECK(npl_next_touch_arm(e, 2 * MIB, 0) == -1 && errno == EINVAL, "re-arm with another length");
    npl_next_touch_disarm(e);
    int x;
    CHECK(npl_next_touch_arm_array(&x, 0) == -1 && errno == ENOENT, "unknown array: ENOENT");
    /* 8. explicit migration: error paths (page placement itself is checked in the guest) */
    struct npl_migrate_result mr;
    CHECK(npl_migrate_range(e, 0, 0, &mr) == -1 && errno == EINVAL, "migrate 0 bytes: EINVAL");
    CHECK(npl_migrate_range(NULL, 4096, 0, &mr) == -1 && errno == EINVAL, "migrate NULL: EINVAL");
    CHECK(npl_migrate_range(e + 100, 4096, 0, &mr) == -1 && errno == EINVAL, "unaligned: EINVAL");
    CHECK(npl_migrate_range(e, 4096, 9999, &mr) == -1 && (errno == EINVAL || errno == EXDEV),
          "node 9999: EINVAL/EXDEV (%d)", errno);
    CHECK(npl_migrate_range(e, 4096, -3, &mr) == -1 && errno == EINVAL, "node -3: EINVAL");
    CHECK(npl_migrate_range(e, SIZE_MAX - 4095, 0, &mr) == -1 &&
              (errno == EOVERFLOW || errno == EINVAL),
          "range wrapping around: EOVERFLOW (%d)", errno);
    CHECK(npl_migrate_range_policy(e, 4096, NULL, NULL, &mr) == -1 && errno == EINVAL,
          "NULL policy: EINVAL");
    CHECK(npl_migrate_array(&x, 0, &mr) == -1 && errno == ENOENT, "unknown array: ENOENT");
    CHECK(npl_migrate_units(&x, 0, 1, 0, &mr) == -1 && errno == ENOENT, "unknown array units: ENOENT");
    CHECK(npl_migrate_units(a, 0, 0, 0, &mr) == -1 && errno == EINVAL, "zero units: EINVAL (%d)",
          errno);
    CHECK(npl_migrate_units(a, 0, 1, 9999, &mr) == -1 && (errno == EINVAL || errno == EXDEV),
          "units to node 9999: EINVAL/EXDEV");
    struct npl_node_info ni;
    npl_topo_node_info(npl_topo_self(), 0, &ni);
    int node0 = ni.os_id;
    memset(e, 1, 2 * MIB);
    CHECK(npl_migrate_range(e, 2 * MIB, node0, &mr) == 0 && mr.pages == 512 &&
              mr.moved + mr.already + mr.absent == 512 && mr.failed == 0,
          "migrate 2 MiB to the one node: %zu already, %zu moved", mr.already, mr.moved);
    munmap(e, 2 * MIB);
    npl_free(a);
    npl_policy_free(p);
    test_regressions();
    test_holds();
    test_rearm_range(); /* last: the process-wide counts above start from zero */
    return check_summary("test_nexttouch");
}
