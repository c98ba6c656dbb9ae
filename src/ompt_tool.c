/* ompt_tool.c - libnumaplace_ompt.so: the papers' transparent migrate-on-next-touch for
 * unmodified OpenMP programs.
 *
 *   NUMAPLACE_NEXT_TOUCH=1 LD_PRELOAD="libnumaplace_ompt.so /usr/lib/llvm-14/lib/libomp.so.5" ./app
 *
 * - Large allocations (>= NUMAPLACE_NEXT_TOUCH_THRESHOLD bytes, default 1 MiB) made through
 *   malloc/calloc/realloc/posix_memalign/aligned_alloc/memalign are served by mmap and registered.
 * - An OMPT tool (OpenMP 5 tools interface) watches parallel regions. Rule: when a parallel region
 *   starts from a code address (codeptr_ra) never seen before, every registered block is armed
 *   (or re-armed) for next-touch, so the threads of that region pull the chunks they touch first
 *   to their own nodes, and so is every range the program armed or registered itself
 *   (npl_next_touch_arm*, npl_next_touch_register*: library arrays too). Regions seen before (the
 *   iterations of a solver) re-arm nothing. Up to 1024 distinct regions are remembered; later
 *   new ones re-arm when they differ from the last.
 * - NUMAPLACE_NEXT_TOUCH=1 uses 64 KiB chunks; a number >= 4096 is the chunk size in bytes.
 * - GCC's libgomp has no OMPT: the tool would never start. This library then fails loudly: a
 *   message on stderr and exit status 97, at start-up when no LLVM OpenMP runtime is loaded, at
 *   exit when one was loaded but never started the tool (e.g. OMP_TOOL=disabled).
 * This is a tool, not the library: it may print and exit, the library (libnumaplace) never does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "numaplace.h"
#include "numaplace/migrate.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

#define MAX_BLOCKS 4096
#define EXIT_NO_OMPT 97

static int enabled = -1; /* -1: not read yet */
static size_t threshold = 1 << 20, chunk;
static int tool_started;
static const void *last_region;
#define MAX_REGIONS 1024
static const void *seen[MAX_REGIONS];
static int nseen;

struct block {
    char *base;
    size_t len;
    int armed; /* armed once: npl_next_touch_rearm_all() re-arms it from then on */
};
static struct block blocks[MAX_BLOCKS];
static int nblocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void read_env(void)
{
    const char *e = getenv("NUMAPLACE_NEXT_TOUCH");
    enabled = e && *e && strcmp(e, "0") != 0;
    if (enabled) {
        unsigned long v = strtoul(e, NULL, 10);
        chunk = v >= 4096 ? v : 0;
        const char *t = getenv("NUMAPLACE_NEXT_TOUCH_THRESHOLD");
        if (t && *t)
            threshold = strtoul(t, NULL, 10);
        if (threshold < 4096)
            threshold = 4096;
    }
}

static int is_on(void)
{
    if (enabled < 0)
        read_env();
    return enabled;
}

static void *big_alloc(size_t size)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), len = (size + ps - 1) / ps * ps;
    /* born MADV_NOHUGEPAGE, like the library's arrays (src/internal.h, npl__map_nohuge): next
     * touch moves 64 KiB chunks, and no THP may straddle the block and a neighbour */
    void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, len, MADV_NOHUGEPAGE);
    if (mprotect(p, len, PROT_READ | PROT_WRITE) < 0) {
        munmap(p, len);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (nblocks < MAX_BLOCKS) {
        blocks[nblocks].base = p;
        blocks[nblocks].len = len;
        blocks[nblocks].armed = 0;
        nblocks++;
        pthread_mutex_unlock(&lock);
        return p;
    }
    pthread_mutex_unlock(&lock);
    munmap(p, len);
    return NULL; /* table full: the caller falls back to glibc */
}

/* our block's length, or 0 */
static size_t owned(void *p)
{
    size_t len = 0;
    if (!p || (uintptr_t)p % 4096)
        return 0; /* ours are page-aligned */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nblocks; i++)
        if (blocks[i].base == p)
            len = blocks[i].len;
    pthread_mutex_unlock(&lock);
    return len;
}

static int release_block(void *p)
{
    size_t len = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nblocks; i++)
        if (blocks[i].base == p) {
            len = blocks[i].len;
            blocks[i] = blocks[--nblocks];
            break;
        }
    pthread_mutex_unlock(&lock);
    if (!len)
        return 0;
    npl_next_touch_disarm(p); /* ENOENT when it was never armed: fine */
    munmap(p, len);
    return 1;
}

void *malloc(size_t size)
{
    void *p = is_on() && size >= threshold ? big_alloc(size) : NULL;
    return p ? p : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = is_on() && total >= threshold ? big_alloc(total) : NULL; /* mmap is zeroed */
    return p ? p : __libc_calloc(n, size);
}

void free(void *p)
{
    if (!release_block(p))
        __libc_free(p);
}

void *realloc(void *p, size_t size)
{
    size_t old = owned(p);
    if (!old) {
        if (!p || !is_on() || size < threshold)
            return p ? __libc_realloc(p, size) : malloc(size);
        size_t have = malloc_usable_size(p);
        void *q = big_alloc(size);
        if (!q)
            return __libc_realloc(p, size);
        memcpy(q, p, have < size ? have : size);
        __libc_free(p);
        return q;
    }
    if (size == 0) {
        free(p);
        return NULL;
    }
    void *q = malloc(size);
    if (!q)
        return NULL;
    npl_next_touch_prepare(p, old); /* reading an armed block resolves it anyway */
    memcpy(q, p, old < size ? old : size);
    free(p);
    return q;
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (is_on() && size >= threshold && align <= 4096) {
        void *p = big_alloc(size);
        if (p) {
            *out = p;
            return 0;
        }
    }
    void *p = __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
    void *p = NULL;
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

void *memalign(size_t align, size_t size) { return aligned_alloc(align, size); }

/* ---- OMPT ---- */
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par,
                              unsigned int requested, int flags, const void *codeptr_ra)
{
    (void)task, (void)frame, (void)par, (void)requested, (void)flags;
    static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER; /* nested regions */
    pthread_mutex_lock(&region_lock);
    int new_region = codeptr_ra != last_region;
    last_region = codeptr_ra;
    for (int i = 0; new_region && i < nseen; i++)
        if (seen[i] == codeptr_ra)
            new_region = 0;
    if (!new_region) {
        pthread_mutex_unlock(&region_lock);
        return;
    }
    if (nseen < MAX_REGIONS)
        seen[nseen++] = codeptr_ra;
    /* everything armed before (our blocks, the program's own armed ranges) and the ranges the
     * program registered (npl_next_touch_register*): re-armed */
    if (npl_next_touch_rearm_all() < 0)
        fprintf(stderr, "numaplace-ompt: cannot re-arm: %s\n", npl_last_error());
    /* blocks never armed: armed now. Copy the list: arming may call malloc/free (which take
     * the lock) */
    static struct block todo[MAX_BLOCKS];
    pthread_mutex_lock(&lock);
    int n = 0;
    for (int i = 0; i < nblocks; i++)
        if (!blocks[i].armed) {
            blocks[i].armed = 1;
            todo[n++] = blocks[i];
        }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        if (npl_next_touch_arm(todo[i].base, todo[i].len, chunk) < 0 && errno != EINVAL)
            fprintf(stderr, "numaplace-ompt: cannot arm %p: %s\n", (void *)todo[i].base,
                    npl_last_error());
    pthread_mutex_unlock(&region_lock);
}

static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set || set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin) == ompt_set_never) {
        fprintf(stderr, "numaplace-ompt: the OpenMP runtime refuses the parallel-begin callback\n");
        _exit(EXIT_NO_OMPT);
    }
    npl_get_support(); /* probe now, outside any callback */
    tool_started = 1;
    return 1;
}

static void tool_fini(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    static ompt_start_tool_result_t result = {tool_init, tool_fini, {0}};
    (void)omp_version, (void)runtime_version;
    return is_on() ? &result : NULL;
}

__attribute__((constructor)) static void check_runtime(void)
{
    if (!is_on())
        return;
    if (!dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) {
        fprintf(stderr,
                "numaplace-ompt: NUMAPLACE_NEXT_TOUCH is set but no LLVM OpenMP runtime (libomp) "
                "is loaded, so the transparent next-touch tool can never start (GCC's libgomp has "
                "no OMPT). Run with LD_PRELOAD=\"libnumaplace_ompt.so "
                "/usr/lib/llvm-14/lib/libomp.so.5\" or link with -fopenmp=libomp.\n");
        _exit(EXIT_NO_OMPT);
    }
}

__attribute__((destructor)) static void check_started(void)
{
    if (is_on() && !tool_started) {
        fprintf(stderr, "numaplace-ompt: NUMAPLACE_NEXT_TOUCH is set but the OpenMP runtime never "
                        "started the tool (OMP_TOOL=disabled? no parallel region?): nothing was "
                        "migrated.\n");
        _exit(EXIT_NO_OMPT);
    }
}
