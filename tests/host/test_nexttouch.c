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
#include <stdio.h>
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
        printf("SKIP: vm.max_map_count could not be reached with 70000 mappings\n");
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
    return check_summary("test_nexttouch");
}
