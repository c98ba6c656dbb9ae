/* SPDX-License-Identifier: BSD-3-Clause */
/* test_sampler.c - the portable sampler (src/profile/sampler.c) driven through the library itself,
 * without the interposer, so that the sanitizer builds run it too (ASan, TSan: its fault handler's
 * lock-free slots, the sampler thread against the writers): a raw profile file as `numaplace
 * profile` makes it, npl__sampler_init, an array tracked with its first touch trapped, two threads
 * that each write their half many times. Checked, exactly: the first touch of every chunk is its
 * writer's; every sampled row is of this array, in its thread's half, written; the array's
 * sample count is the rows' sum; on one node every access whose page is known is local; every
 * write kept; after npl__sampler_stop no first-touch unit is left protected. */
#define _GNU_SOURCE
#include "check.h"

#include "profile/profile.h"
#include <numaplace.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define BYTES (1u << 20)
#define PASSES_MAX 200000 /* a bound, not a time: the loop ends once enough was sampled */

static char *arr;
static struct npl_raw *R;
static int idx = -1;
static _Atomic int enough;
static int passes[3]; /* passes[t]: the passes thread t made */

static struct npl_raw *raw_create(char *path)
{
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, (off_t)sizeof(struct npl_raw)) < 0)
        return NULL;
    struct npl_raw *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (r == MAP_FAILED)
        return NULL;
    r->version = NPL_RAW_VERSION;
    r->size = sizeof *r;
    r->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    __atomic_store_n(&r->magic, NPL_RAW_MAGIC, __ATOMIC_RELEASE);
    return r;
}

/* thread t (1 or 2) writes half t-1, pass after pass, until 200 samples (or PASSES_MAX) */
static void *writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    npl__sampler_set_thread(t);
    size_t lo = (size_t)(t - 1) * BYTES / 2, hi = lo + BYTES / 2;
    int pass = 0;
    for (; pass < PASSES_MAX && !enough; pass++) {
        for (size_t k = lo; k < hi; k += 256)
            ((volatile unsigned char *)arr)[k] += 1;
        if (t == 1 && atomic_load(&R->arrays[idx].samples) >= 200)
            enough = pass + 1;
    }
    passes[t] = pass;
    return NULL;
}

int main(void)
{
    char path[] = "/tmp/npl_test_sampler.XXXXXX";
    R = raw_create(path);
    CHECK(R != NULL, "a raw profile file");
    if (!R)
        return check_summary("sampler");
    struct npl_sampler_cfg cfg = {path, 20000, 0};
    CHECK(npl__sampler_init(&cfg) == 0, "npl__sampler_init: %s", npl_last_error());
    arr = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(arr != MAP_FAILED, "a fresh 1 MiB array");
    if (arr == MAP_FAILED)
        return check_summary("sampler");
    idx = npl__sampler_track(arr, BYTES, BYTES, NPL_RAW_KIND_HEAP, (const void *)main, 0, NULL, 0,
                             1);
    CHECK(idx >= 0, "npl__sampler_track: %d (%s)", idx, npl_last_error());
    if (idx < 0)
        return check_summary("sampler");
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, writer, (void *)(intptr_t)(t + 1));
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    npl__sampler_untrack(arr);
    npl__sampler_stop();
    /* every write kept (read after the untrack: the main thread's reads are not sampled) */
    size_t lost = 0;
    for (size_t k = 0; k < BYTES; k += 256)
        lost += (unsigned char)arr[k] != (unsigned char)passes[k < BYTES / 2 ? 1 : 2];
    CHECK(lost == 0, "every written byte holds its thread's %d / %d passes (%zu do not)", passes[1],
          passes[2], lost);

    struct npl_raw_array *a = &R->arrays[idx];
    uint64_t half = a->nchunks / 2, samples = atomic_load(&a->samples);
    printf("sampler: %llu samples (%llu rounds), %llu chunks of %llu bytes, %d passes\n",
           (unsigned long long)samples, (unsigned long long)R->rounds,
           (unsigned long long)a->nchunks, (unsigned long long)a->chunk_bytes, enough);
    CHECK(samples >= 200, "at least 200 sampled accesses (%llu)", (unsigned long long)samples);
    /* first touch: each chunk's first toucher is its half's thread */
    size_t wrong_ft = 0;
    for (uint64_t c = 0; a->ft != UINT64_MAX && c < a->nchunks; c++)
        wrong_ft += R->ft[a->ft + c] != (int32_t)(c < half ? 1 : 2);
    CHECK(a->ft != UINT64_MAX && wrong_ft == 0 && atomic_load(&a->ft_left) == 0,
          "first touch: every chunk by its half's thread, no unit left protected (%zu wrong, "
          "%llu left)", wrong_ft, (unsigned long long)atomic_load(&a->ft_left));
    /* the rows: this array's are all in their thread's half, written; they sum to its samples */
    uint64_t in_rows = 0, wrong_rows = 0, reads = 0;
    for (uint64_t i = 0; i < atomic_load(&R->rows_used) && i < NPL_RAW_ROWS; i++) {
        uint64_t k = atomic_load(&R->rows[i].key);
        if (!k || NPL_RAW_KEY_ARRAY(k) != (uint32_t)idx)
            continue;
        uint32_t t = NPL_RAW_KEY_THREAD(k), c = NPL_RAW_KEY_CHUNK(k);
        uint32_t n = atomic_load(&R->rows[i].reads) + atomic_load(&R->rows[i].writes);
        in_rows += n;
        reads += atomic_load(&R->rows[i].reads);
        wrong_rows += (t != (c < half ? 1u : 2u)) * n;
    }
    CHECK(in_rows == samples && wrong_rows == 0,
          "sampled rows: %llu accesses (the array counts %llu), %llu by a thread outside its "
          "half", (unsigned long long)in_rows, (unsigned long long)samples,
          (unsigned long long)wrong_rows);
    /* an increment reads, then writes: the sampler sees the read first (a read-protected page
     * faults again on the write), so both kinds are recorded */
    CHECK(reads > 0 && reads < in_rows, "reads and writes both recorded (%llu of %llu reads)",
          (unsigned long long)reads, (unsigned long long)in_rows);
    const npl_topo *topo = npl_topo_self();
    uint64_t loc = atomic_load(&a->local), rem = atomic_load(&a->remote);
    if (topo && npl_topo_node_count(topo, 1) == 1)
        CHECK(rem == 0 && loc > 0, "one node: the measured accesses are all local (%llu local, "
              "%llu remote, %llu unknown)", (unsigned long long)loc, (unsigned long long)rem,
              (unsigned long long)atomic_load(&a->unknown));
    else
        printf("INFO %d nodes: %llu local, %llu remote (locality: guest_profile_locality)\n",
               topo ? npl_topo_node_count(topo, 1) : -1, (unsigned long long)loc,
               (unsigned long long)rem);
    munmap(arr, BYTES);
    unlink(path);
    return check_summary("sampler");
}
