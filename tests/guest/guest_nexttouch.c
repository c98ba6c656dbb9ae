/* guest_nexttouch - migrate-on-next-touch, page-exact, in the multi-node guest:
 *   guest_nexttouch --nodes N --cpus-per-node K
 * An array first placed on node 0 (serial init); T threads pinned round-robin over the nodes
 * each touch their static block once; afterwards every page of block t sits on thread t's node,
 * and every value written survives. Then the same with never-touched memory, a second pass
 * after re-arming with the blocks shifted, and page-sized chunks. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int N, K, T;
static long PSZ;

struct job {
    unsigned char *a;
    size_t block, shift;
    int t;
};

static void *toucher(void *arg)
{
    struct job *j = arg;
    npl_pin_self("scatter", j->t); /* thread t on node t mod N */
    size_t b = (size_t)(j->t + j->shift) % (size_t)T;
    unsigned char *p = j->a + b * j->block;
    for (size_t i = 0; i < j->block; i++)
        p[i] = (unsigned char)(p[i] + j->t + 1);
    return NULL;
}

/* returns the number of pages of block b not on the node of the thread that touched it */
static size_t check_blocks(unsigned char *a, size_t block, size_t shift)
{
    size_t pages = block / PSZ, bad = 0;
    int *v = malloc(pages * sizeof *v);
    for (int t = 0; t < T; t++) {
        size_t b = (size_t)(t + shift) % (size_t)T;
        int want = npl_topo_cpu_node(npl_topo_self(), npl_pin_cpu(NULL, "scatter", t));
        npl_query_pages(a + b * block, block, v, pages);
        for (size_t i = 0; i < pages; i++)
            bad += v[i] != want;
    }
    free(v);
    return bad;
}

static void run(unsigned char *a, size_t block, size_t shift)
{
    pthread_t th[64];
    struct job j[64];
    for (int t = 0; t < T; t++) {
        j[t] = (struct job){a, block, shift, t};
        pthread_create(&th[t], NULL, toucher, &j[t]);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    if (N < 2 || K < 1) {
        printf("usage: guest_nexttouch --nodes N (>= 2) --cpus-per-node K\n");
        return 120;
    }
    T = N * K > 16 ? 16 : N * K;
    size_t block = 1 << 20, bytes = block * (size_t)T; /* 1 MiB per thread: 16 chunks */

    /* serial init on node 0, then next-touch */
    npl_policy *p;
    npl_policy_parse(&p, "bind_all:0");
    unsigned char *a = npl_alloc(bytes, p);
    for (size_t i = 0; i < bytes; i++)
        a[i] = (unsigned char)(i * 3);
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "arm %zu MiB: %s", bytes >> 20, npl_last_error());
    run(a, block, 0);
    size_t bad = check_blocks(a, block, 0);
    CHECK(bad == 0, "serial init + next-touch: every page of each block on its toucher's node "
                    "(%zu wrong of %zu)", bad, bytes / PSZ);
    size_t lost = 0;
    for (size_t i = 0; i < bytes; i++)
        lost += a[i] != (unsigned char)(i * 3 + (i / block) + 1);
    CHECK(lost == 0, "every value written survives (%zu wrong)", lost);
    /* the pattern changes: re-arm, blocks shift by one thread */
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "re-arm");
    run(a, block, 1);
    bad = check_blocks(a, block, 1);
    CHECK(bad == 0, "after re-arm, shifted blocks follow their new touchers (%zu wrong)", bad);
    struct npl_next_touch_stats s;
    npl_next_touch_get_stats(&s);
    printf("  next-touch: %llu chunks, %llu pages moved, %llu failed, %llu waits\n",
           (unsigned long long)s.chunks, (unsigned long long)s.pages_moved,
           (unsigned long long)s.pages_failed, (unsigned long long)s.waits);
    npl_next_touch_disarm(a);
    npl_free(a);
    npl_policy_free(p);

    /* never-touched memory, one-page chunks: pages land on the toucher's node */
    unsigned char *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(b, bytes, MADV_NOHUGEPAGE);
    CHECK(npl_next_touch_arm(b, bytes, (size_t)PSZ) == 0, "arm untouched memory, 4 KiB chunks");
    run(b, block, 0);
    bad = check_blocks(b, block, 0);
    CHECK(bad == 0, "never-touched pages land on their toucher's node (%zu wrong)", bad);
    npl_next_touch_disarm(b);
    munmap(b, bytes);
    return check_summary("guest_nexttouch") ? 1 : 0;
}
