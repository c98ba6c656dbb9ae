/* Host tests of user-space next-touch (one node here: placement is trivial, but the mechanism —
 * protection, the signal handler, concurrency, chaining, EFAULT, mappings, fork — is all real).
 * Page placement by the toucher is checked in the guest (tests/guest/guest_nexttouch.c). */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
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
    npl_free(a);
    npl_policy_free(p);
    return check_summary("test_nexttouch");
}
