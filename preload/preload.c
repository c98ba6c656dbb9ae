/* preload.c - libnumaplace_preload.so: numaplace policies for unmodified, dynamically linked
 * programs (`numaplace run` puts it in LD_PRELOAD).
 *
 *  - Allocations of at least NUMAPLACE_THRESHOLD bytes (default 1 MiB; suffixes K, M, G) made
 *    through malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign and valloc become
 *    library arrays placed under NUMAPLACE_POLICY (any policy string; first_touch or unset: not
 *    intercepted). NUMAPLACE_FIRST=N: only the first N such allocations. NUMAPLACE_HUGE=thp|2M:
 *    NPL_F_THP / NPL_F_HUGETLB. Everything else goes to the next allocator (dlsym RTLD_NEXT).
 *    Our allocations are tracked in a table of their own (page-aligned base -> size): free() of
 *    one of them releases it with npl_free(); any other pointer goes to the real free().
 *  - NUMAPLACE_PIN=compact|scatter|LIST: the main thread is pinned as thread 0 when the library
 *    loads, and every thread the program creates with pthread_create as thread n, n counting
 *    creation order from 1 (the library's numbering). CPUs come from the affinity mask the process
 *    had when it was loaded (taskset, cgroups): never widened. When LLVM's libomp is loaded the
 *    main thread is NOT pinned here: libomp builds its places from the mask it sees at start-up
 *    and would copy a pinned main thread's single CPU to every worker. Its threads are placed by
 *    KMP_AFFINITY=explicit,proclist=[the same order] instead (numaplace run sets it; the preload
 *    sets it itself when neither KMP_AFFINITY nor OMP_PLACES is set).
 *  - NUMAPLACE_NEXT_TOUCH=1 (or a chunk size >= 4096): the transparent next-touch mode. Large
 *    allocations are still placed under NUMAPLACE_POLICY (or first touch) AND registered for
 *    next-touch; the OMPT tool in preload/ompt.c (same library) re-arms every registered range at
 *    each OpenMP parallel region from a new code address. Without an OMPT runtime (libgomp) the
 *    ranges are simply never armed: the program runs unchanged (a warning under NUMAPLACE_DEBUG).
 *  - Static arrays: the page-aligned inside of the executable's writable PT_LOAD segments (.data,
 *    .bss; RELRO excluded), when at least NUMAPLACE_THRESHOLD bytes, is placed under the policy
 *    before main (npl_place_range) and registered for next-touch in that mode.
 *
 * The library is linked in (objects, all symbols local but the interposed ones: see preload.map),
 * so a program that links libnumaplace itself keeps its own, separate copy. Threads and
 * allocations made by the library itself (placement workers, hwloc) are never intercepted: a
 * thread-local flag marks "inside the library".
 *
 * Messages: one line on stderr when the environment is wrong (the interposer then stays out of
 * the way); NUMAPLACE_DEBUG=1 logs each intercepted allocation. */
#define _GNU_SOURCE
#include "topology/topology.h"
#include "sys/sys.h"
#include "profile/profile.h"

#include "preload.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>

#include "numaplace/migrate.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TLS _Thread_local __attribute__((tls_model("initial-exec")))
#define EXPORT __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static size_t (*real_usable)(void *);
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static TLS int in_lib;   /* > 0: the library (or dlsym) is running on this thread */
void npl__preload_enter(void) { in_lib++; }
void npl__preload_leave(void) { in_lib--; }
int npl__preload_inside(void) { return in_lib > 0; }
static int resolving;     /* dlsym in progress: serve from the bootstrap buffer */

/* ---- bootstrap buffer: dlsym may call calloc/malloc before the real ones are known ---- */
static _Alignas(16) char boot[64 * 1024];
static size_t boot_used;
static int in_boot(const void *p) { return (const char *)p >= boot && (const char *)p < boot + sizeof boot; }
static void *boot_alloc(size_t n)
{
    size_t need = ((n + 15) & ~(size_t)15) + 16;
    size_t off = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
    if (off + need > sizeof boot)
        return NULL;
    *(size_t *)(boot + off) = n;
    return boot + off + 16; /* zero: static storage, never reused */
}
static size_t boot_size(const void *p) { return *(const size_t *)((const char *)p - 16); }

static void resolve(void)
{
    if (real_malloc || resolving)
        return;
    resolving = 1;
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    real_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
    real_usable = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    real_pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                   void *))dlsym(RTLD_NEXT, "pthread_create");
    void *m = dlsym(RTLD_NEXT, "malloc");
    __atomic_store_n(&real_malloc, (void *(*)(size_t))m, __ATOMIC_RELEASE);
    resolving = 0;
}

/* ---- configuration (read once, in the constructor) ---- */
static struct {
    int active;           /* allocations are intercepted */
    npl_policy *pol;
    size_t threshold;
    long first;           /* 0: every large allocation */
    unsigned flags;
    char *pin;            /* NULL = threads left alone */
    int verbose;          /* NUMAPLACE_VERBOSE: 1 text, 2 JSON lines (numaplace run --verbose/--json) */
    char policy[256];     /* the policy's text, for those lines */
    int next_touch;       /* NUMAPLACE_NEXT_TOUCH: register large blocks for next-touch */
    size_t nt_chunk;      /* 0: the library's default chunk */
} cfg = {0, NULL, (size_t)1 << 20, 0, 0, NULL, 0, "first_touch", 0, 0};
int npl__preload_next_touch(void) { return cfg.next_touch; }
static long nlarge;       /* large allocations seen (for NUMAPLACE_FIRST) */
static int next_thread = 1;

/* Our lines go to fd 2 only while it is still the stderr the program started with: a program
 * that closes its descriptors and opens files may get fd 2 for one of its own outputs, which
 * must not receive our lines (nor must a program started with fd 2 closed). */
static struct { int ok; dev_t dev; ino_t ino; } err_fd;
static void remember_stderr(void)
{
    struct stat st;
    err_fd.ok = fstat(2, &st) == 0;
    err_fd.dev = err_fd.ok ? st.st_dev : 0;
    err_fd.ino = err_fd.ok ? st.st_ino : 0;
}
static void to_stderr(const char *buf, int n, size_t size)
{
    struct stat st;
    if (n <= 0 || !err_fd.ok || fstat(2, &st) < 0 || st.st_dev != err_fd.dev ||
        st.st_ino != err_fd.ino)
        return;
    if (write(2, buf, (size_t)n < size ? (size_t)n : size - 1) < 0)
        return;
}

static void say(const char *fmt, const char *a, const char *b)
{
    char buf[512];
    to_stderr(buf, snprintf(buf, sizeof buf, fmt, a, b), sizeof buf);
}
void npl__preload_say(const char *fmt, const char *a) { say(fmt, a, ""); }

/* numaplace run --verbose / --json: one line per large allocation on stderr (no allocation:
 * this runs inside malloc) */
static void tell_alloc(const char *what, const void *p, size_t n, int placed, int nt)
{
    char buf[512];
    int len;
    if (cfg.verbose == 2)
        len = snprintf(buf, sizeof buf, "{\"event\": \"%s\", \"address\": \"%p\", "
                       "\"size_bytes\": %zu, \"placed\": %s, \"policy\": \"%s\", "
                       "\"next_touch\": %s}\n", what, p, n, placed ? "true" : "false",
                       cfg.policy, nt ? "true" : "false");
    else if (placed)
        len = snprintf(buf, sizeof buf, "numaplace run: %s %p, %zu bytes: placed under %s%s\n",
                       what, p, n, cfg.policy, nt ? ", armed for next-touch" : "");
    else
        len = snprintf(buf, sizeof buf, "numaplace run: %s of %zu bytes not placed (%s): the "
                       "system allocator serves it\n", what, n, npl_last_error());
    to_stderr(buf, len, sizeof buf);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end == 'i' && shift) end++;
    if (*end == 'B' && shift) end++;
    if (*end || (shift && v > (~0ULL >> shift)))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* ---- static arrays: the executable's writable segments ---- */
struct seg { uintptr_t lo, hi; };
static int exe_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct seg *out = data; /* [0..7] writable parts, then the RELRO range in out[8] */
    int n = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            out[8].lo = info->dlpi_addr + ph->p_vaddr;
            out[8].hi = out[8].lo + ph->p_memsz;
        }
    }
    for (int i = 0; i < info->dlpi_phnum && n < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (out[8].hi > lo && out[8].hi < hi) /* RELRO becomes read-only after relocation */
            lo = out[8].hi;
        out[n].lo = lo;
        out[n].hi = hi;
        n++;
    }
    return 1; /* the first object is the executable: stop */
}

/* The page-aligned inside [lo, hi) of each writable segment of the executable, at least
 * cfg.threshold bytes: partial first/last pages are shared with other variables (and the heap
 * follows .bss), so they are left out. Returns how many (<= 8). */
int npl__preload_static_ranges(uintptr_t *lo, uintptr_t *hi, size_t threshold)
{
    struct seg s[9];
    memset(s, 0, sizeof s);
    dl_iterate_phdr(exe_segments, s);
    uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
    int n = 0;
    for (int i = 0; i < 8 && s[i].hi; i++) {
        uintptr_t a = (s[i].lo + ps - 1) / ps * ps, b = s[i].hi / ps * ps;
        if (b > a && b - a >= threshold) {
            lo[n] = a;
            hi[n] = b;
            n++;
        }
    }
    return n;
}

static int register_piece(uintptr_t s, uintptr_t e, const struct npl_maps_entry *m, void *ctx)
{
    (void)m, (void)ctx;
    if (npl_next_touch_register((void *)s, e - s, cfg.nt_chunk) < 0)
        npl__debug("preload: static data %p+%zu not registered for next-touch: %s", (void *)s,
                   (size_t)(e - s), npl_last_error());
    else
        npl__debug("preload: static data %p+%zu registered for next-touch", (void *)s,
                   (size_t)(e - s));
    return 0;
}

static void place_static(void)
{
    if (npl__preload_profiling())
        return; /* profile.c tracks them, symbol by symbol */
    if (npl__preload_apply_active())
        npl__preload_apply_statics(cfg.threshold, cfg.pol, cfg.flags);
    uintptr_t lo[8], hi[8];
    int n = npl__preload_static_ranges(lo, hi, cfg.threshold);
    int placing = cfg.pol && npl_policy_get_kind(cfg.pol) != NPL_FIRST_TOUCH;
    for (int i = 0; i < n; i++) {
        size_t len = hi[i] - lo[i];
        /* base pages, like the library's arrays: a 2 MiB THP (the guest's THP is "always") would
         * take a whole 2 MiB to one node and cannot follow page-granular next-touch chunks */
        if (!(cfg.flags & NPL_F_THP))
            madvise((void *)lo[i], len, MADV_NOHUGEPAGE);
        if (placing && npl_place_range((void *)lo[i], len, cfg.pol, NULL, 0) < 0)
            say("numaplace preload: static data not placed: %s%s\n", npl_last_error(), "");
        else if (placing)
            npl__debug("preload: static data %p+%zu placed", (void *)lo[i], len);
        if (cfg.verbose && (placing || cfg.next_touch))
            tell_alloc("static data", (void *)lo[i], len, 1, cfg.next_touch);
        /* one range per mapping: .data (a private file mapping) and .bss (anonymous) are
         * mappings of different kinds, and next-touch arms one kind of mapping at a time */
        if (cfg.next_touch)
            npl__maps_ranges(lo[i], hi[i], register_piece, NULL);
    }
}

/* ---- fork: the child must not inherit the table lock held by another thread ---- */
static int table_lock;
static void lock(void) { while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE)) sched_yield(); }
static void unlock(void) { __atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE); }
/* A fork also waits until no thread is inside the library through the interposer (allocating
 * or freeing a placed block): the library's own locks (the array registry, next-touch ranges)
 * are then free too, and the child can allocate and free. New entries wait for the fork. */
static int forking, inside;
static void gate_enter(void)
{
    for (;;) {
        while (__atomic_load_n(&forking, __ATOMIC_ACQUIRE))
            sched_yield();
        __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&forking, __ATOMIC_SEQ_CST))
            return;
        __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    }
}
static void gate_leave(void) { __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST); }
static void fork_prepare(void)
{
    while (__atomic_exchange_n(&forking, 1, __ATOMIC_SEQ_CST)) /* another thread forks */
        sched_yield();
    while (__atomic_load_n(&inside, __ATOMIC_SEQ_CST))
        sched_yield();
    lock();
}
static void fork_parent(void)
{
    unlock();
    __atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}
/* ---- children of a pinned process start on the process's CPUs ----
 * With NUMAPLACE_PIN, a thread runs on one CPU, and a child inherits the mask of the thread that
 * made it: a shell script's programs, system(), popen() or a launcher's exec would all run on
 * that one CPU (and an OpenMP runtime would start one thread). So the calling thread goes back
 * to the CPUs the process was loaded with (never wider) in a forked child, and around exec and
 * spawn (restored if the call returns). The child's own interposer then pins its threads. */
#define MASK_WORDS (2048 / sizeof(unsigned long)) /* 16384 CPUs */
static unsigned long base_cpus[MASK_WORDS];
static int have_base;

static void save_base_cpus(void)
{
    have_base = sched_getaffinity(0, sizeof base_cpus, (cpu_set_t *)base_cpus) == 0;
}

/* the calling thread onto the loaded-with CPUs; saved (if not NULL) gets its mask. 1: changed */
static int widen_self(unsigned long *saved)
{
    if (!cfg.pin || !have_base)
        return 0;
    int e = errno;
    if (saved && sched_getaffinity(0, sizeof base_cpus, (cpu_set_t *)saved) < 0)
        return 0;
    int changed = sched_setaffinity(0, sizeof base_cpus, (const cpu_set_t *)base_cpus) == 0;
    errno = e;
    return changed;
}

static void narrow_back(const unsigned long *saved, int changed)
{
    int e = errno;
    if (changed)
        sched_setaffinity(0, sizeof base_cpus, (const cpu_set_t *)saved);
    errno = e;
}

static void fork_child(void)
{
    widen_self(NULL);
    unlock();
    __atomic_store_n(&inside, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}

static void resolve_spawn(void);

static int libomp_loaded(void) { return dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != NULL; }

/* libomp places its threads itself: give it the pin order as an explicit proclist */
static void set_kmp_affinity(void)
{
    if (getenv("KMP_AFFINITY") || getenv("OMP_PLACES") || getenv("OMP_PROC_BIND"))
        return; /* the user's (numaplace run has already decided the precedence) */
    int n = npl_pin_order(NULL, cfg.pin, NULL, 0); /* any number of CPUs */
    int *cpus = n > 0 ? malloc((size_t)n * sizeof *cpus) : NULL;
    size_t size = (size_t)n * 12 + 64;
    char *buf = cpus ? malloc(size) : NULL;
    if (buf && npl_pin_order(NULL, cfg.pin, cpus, n) == n) {
        size_t off = (size_t)snprintf(buf, size, "granularity=fine,explicit,proclist=[");
        for (int k = 0; k < n; k++)
            off += (size_t)snprintf(buf + off, size - off, "%s%d", k ? "," : "", cpus[k]);
        snprintf(buf + off, size - off, "]");
        setenv("KMP_AFFINITY", buf, 0);
    }
    free(cpus);
    free(buf);
}

__attribute__((constructor)) static void preload_init(void)
{
    resolve();
    in_lib++;
    remember_stderr();
    resolve_spawn();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    const char *e;
    if ((e = getenv("NUMAPLACE_THRESHOLD")) && *e && parse_size(e, &cfg.threshold) < 0)
        say("numaplace preload: NUMAPLACE_THRESHOLD=%s is not a size%s; using 1 MiB\n", e, "");
    if (cfg.threshold < 1)
        cfg.threshold = 1;
    if ((e = getenv("NUMAPLACE_FIRST")) && *e) {
        size_t f;
        if (parse_size(e, &f) < 0 || f == 0 || f > (size_t)LONG_MAX)
            say("numaplace preload: NUMAPLACE_FIRST=%s is not a count >= 1%s; ignored\n", e, "");
        else
            cfg.first = (long)f;
    }
    if ((e = getenv("NUMAPLACE_HUGE")) && *e) {
        if (!strcmp(e, "thp"))
            cfg.flags |= NPL_F_THP;
        else if (!strcmp(e, "2M") || !strcmp(e, "2m"))
            cfg.flags |= NPL_F_HUGETLB;
        else
            say("numaplace preload: NUMAPLACE_HUGE=%s: use thp or 2M%s; ignored\n", e, "");
    }
    if ((e = getenv("NUMAPLACE_NEXT_TOUCH")) && *e && strcmp(e, "0")) {
        unsigned long v = strtoul(e, NULL, 10);
        cfg.next_touch = 1;
        cfg.nt_chunk = v >= 4096 ? v : 0;
    }
    if ((e = getenv("NUMAPLACE_VERBOSE")) && *e && strcmp(e, "0"))
        cfg.verbose = !strcmp(e, "json") ? 2 : 1;
    if ((e = getenv("NUMAPLACE_POLICY")) && *e) {
        snprintf(cfg.policy, sizeof cfg.policy, "%s", e);
        for (char *q = cfg.policy; *q; q++) /* printed inside JSON strings */
            if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20)
                *q = '?';
        if (npl_policy_parse(&cfg.pol, e) < 0) {
            say("numaplace preload: NUMAPLACE_POLICY=%s: %s; allocations not placed\n", e,
                npl_last_error());
            cfg.pol = NULL;
        } else if (npl_policy_get_kind(cfg.pol) != NPL_FIRST_TOUCH || cfg.flags) {
            cfg.active = 1;
        }
    }
    if (!cfg.pol && (cfg.flags || cfg.next_touch) &&
        npl_policy_create(&cfg.pol, NPL_FIRST_TOUCH, NULL, 0) == 0)
        cfg.active = 1;
    if (cfg.next_touch && cfg.pol)
        cfg.active = 1;
    if ((e = getenv("NUMAPLACE_PIN")) && *e) {
        save_base_cpus(); /* before the main thread is pinned */
        cfg.pin = strdup(e); /* in_lib: the real allocator */
        int ok = cfg.pin && npl_pin_cpu(NULL, cfg.pin, 0) >= 0;
        if (ok && libomp_loaded()) /* libomp pins the main thread through its places */
            set_kmp_affinity();
        else if (ok)
            ok = npl_pin_self(cfg.pin, 0) >= 0; /* the main thread is thread 0 */
        if (!ok) {
            say("numaplace preload: NUMAPLACE_PIN=%s: %s; threads not pinned\n", e,
                npl_last_error());
            free(cfg.pin);
            cfg.pin = NULL;
        }
    }
    npl__preload_io_resolve();
    if (npl__preload_profile_init(cfg.threshold) || npl__preload_apply_init(cfg.threshold)) {
        if (!cfg.pol && npl_policy_create(&cfg.pol, NPL_FIRST_TOUCH, NULL, 0) < 0)
            cfg.pol = NULL;
        cfg.active = cfg.pol != NULL;
    }
    if (cfg.active && !npl__preload_profiling() &&
        !npl_topo_self()) /* load hwloc now, not inside the first malloc */
        cfg.active = 0;
    if (cfg.active)
        place_static();
    in_lib--;
}

/* ---- our allocations: open addressing, page-aligned base -> size ---- */
#define SLOTS 65536
static struct slot { uintptr_t key; size_t size; } table[SLOTS]; /* key 1 = deleted */
static size_t h(uintptr_t k) { return (size_t)((k >> 12) * 0x9E3779B97F4A7C15ull >> 48) % SLOTS; }
static long table_count;

static int table_put(void *p, size_t n)
{
    uintptr_t k = (uintptr_t)p;
    int ok = 0;
    lock();
    if (table_count < SLOTS / 2) {
        for (size_t i = h(k);; i = (i + 1) % SLOTS)
            if (table[i].key <= 1) {
                table[i].key = k;
                table[i].size = n;
                table_count++;
                ok = 1;
                break;
            }
    }
    unlock();
    return ok;
}

/* size of our allocation at p (0: not ours), NT_BIT set when it is registered for next-touch;
 * remove=1 drops it from the table */
#define NT_BIT ((size_t)1 << (8 * sizeof(size_t) - 1))
/* a block of `numaplace profile`: a plain mapping (profile.c), not a library array */
#define PLAIN_BIT ((size_t)1 << (8 * sizeof(size_t) - 2))
static size_t table_get_raw(const void *p, int remove)
{
    uintptr_t k = (uintptr_t)p;
    if (!p || (k & 4095) || !__atomic_load_n(&table_count, __ATOMIC_RELAXED))
        return 0;
    size_t n = 0;
    lock();
    for (size_t i = h(k), probes = 0; table[i].key && probes < SLOTS; i = (i + 1) % SLOTS, probes++)
        if (table[i].key == k) {
            n = table[i].size;
            if (remove) {
                table[i].key = 1;
                table_count--;
            }
            break;
        }
    unlock();
    return n;
}
static size_t table_get(const void *p, int remove)
{
    return table_get_raw(p, remove) & ~(NT_BIT | PLAIN_BIT);
}

/* MemAvailable of /proc/meminfo in bytes (read without allocating; under NUMAPLACE_FSROOT, as
 * the library reads /proc), SIZE_MAX if unknown */
static size_t mem_available(void)
{
    char buf[4096];
    int fd = npl__fs_open_fd("/proc/meminfo", O_RDONLY);
    ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[len > 0 ? len : 0] = 0;
    const char *m = strstr(buf, "MemAvailable:");
    unsigned long long kib = m ? strtoull(m + 13, NULL, 10) : 0;
    return kib ? (size_t)kib << 10 : SIZE_MAX;
}

/* A placed block is populated at once (each page faulted on its node), unlike the system
 * allocator's, which only takes the pages the program touches: a program that reserves more than
 * the memory available and uses a little would be killed for memory. Such blocks are not placed. */
#define BIG_CHECK ((size_t)64 << 20)
static int too_big(size_t n) { return n >= BIG_CHECK && n > mem_available(); }

/* A placed allocation, or NULL: the caller then uses the real allocator. */
static void *big_alloc(size_t n, size_t align, const void *ra)
{
    if (!cfg.active || in_lib || n < cfg.threshold || align > 4096)
        return NULL;
    if (cfg.first && __atomic_fetch_add(&nlarge, 1, __ATOMIC_RELAXED) >= cfg.first)
        return NULL;
    in_lib++;
    int saved = errno;
    if (npl__preload_profiling()) { /* tracked as the system allocator would map it */
        void *q = npl__preload_profile_map(n, ra);
        if (q && !table_put(q, n | PLAIN_BIT)) {
            npl__preload_profile_unmap(q, n);
            q = NULL;
        }
        errno = saved;
        in_lib--;
        return q;
    }
    if (too_big(n)) {
        npl__fail(ENOMEM, "larger than the memory available now: placing populates every page");
        if (cfg.verbose)
            tell_alloc("allocation", NULL, n, 0, 0);
        errno = saved;
        in_lib--;
        return NULL;
    }
    gate_enter();
    npl_shape sh = {1, 1, {n, 0, 0}, NPL_ROW_MAJOR};
    void *p = npl__preload_apply_active() ? npl__preload_apply_alloc(n, ra, cfg.pol, cfg.flags)
                                          : npl_alloc_array(&sh, cfg.pol, cfg.flags);
    size_t nt = 0;
    if (p && cfg.next_touch) {
        if (npl_next_touch_register(p, n, cfg.nt_chunk) == 0)
            nt = NT_BIT;
        else
            npl__debug("preload: %p not registered for next-touch: %s", p, npl_last_error());
    }
    if (p && !table_put(p, n | nt)) {
        npl_free(p); /* forgets its next-touch registration too */
        p = NULL;
    }
    if (!p)
        npl__debug("preload: %zu bytes not placed (%s): real allocator", n, npl_last_error());
    else
        npl__debug("preload: %zu bytes placed at %p", n, p);
    if (cfg.verbose && !npl__preload_apply_active()) /* apply.c says which policy it took */
        tell_alloc("allocation", p, n, p != NULL, nt != 0);
    errno = saved;
    gate_leave();
    in_lib--;
    return p;
}

static void big_free(void *p, size_t raw)
{
    in_lib++;
    if (raw & PLAIN_BIT) {
        npl__preload_profile_unmap(p, raw & ~(NT_BIT | PLAIN_BIT));
        in_lib--;
        return;
    }
    gate_enter();
    npl__preload_apply_free(p);
    npl_free(p); /* the array's next-touch state goes with it, quietly */
    gate_leave();
    in_lib--;
}

EXPORT void *malloc(size_t n)
{
    if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)) {
        if (resolving)
            return boot_alloc(n);
        resolve();
    }
    void *p = big_alloc(n, 0, __builtin_return_address(0));
    return p ? p : real_malloc(n);
}

EXPORT void *calloc(size_t a, size_t b)
{
    if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)) {
        if (resolving)
            return b && a > SIZE_MAX / b ? NULL : boot_alloc(a * b);
        resolve();
    }
    if (b && a > SIZE_MAX / b) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = big_alloc(a * b, 0, __builtin_return_address(0)); /* library arrays are zero-filled */
    return p ? p : real_calloc(a, b);
}

EXPORT void free(void *p)
{
    if (!p || in_boot(p))
        return;
    size_t raw = table_get_raw(p, 1);
    if (raw) {
        big_free(p, raw);
        return;
    }
    if (!real_free)
        resolve();
    real_free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (!real_malloc) {
        if (resolving)
            return boot_alloc(n);
        resolve();
    }
    if (!p)
        return malloc(n);
    size_t old = in_boot(p) ? boot_size(p) : table_get(p, 0);
    if (!old && !(n >= cfg.threshold && cfg.active && !in_lib))
        return real_realloc(p, n); /* theirs, and stays theirs */
    if (old && n == 0) {
        free(p);
        return NULL;
    }
    if (!old)
        old = real_usable ? real_usable(p) : 0;
    if (old && n <= old && !in_boot(p) && table_get(p, 0)) /* ours, shrinking: keep it */
        return p;
    void *q = malloc(n);
    if (!q)
        return NULL;
    if (!in_boot(p) && (table_get_raw(p, 0) & NT_BIT)) { /* armed: resolve it, not fault on it */
        in_lib++;
        npl_next_touch_prepare(p, old);
        in_lib--;
    }
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!real_malloc)
        resolve();
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = big_alloc(n, align, __builtin_return_address(0));
    if (p) {
        *out = p;
        return 0;
    }
    return real_posix_memalign(out, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!real_malloc)
        resolve();
    void *p = big_alloc(n, align, __builtin_return_address(0));
    return p ? p : real_aligned_alloc(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    if (!real_malloc)
        resolve();
    void *p = big_alloc(n, align, __builtin_return_address(0));
    return p ? p : real_memalign(align, n);
}

EXPORT void *valloc(size_t n)
{
    if (!real_malloc)
        resolve();
    void *p = big_alloc(n, 4096, __builtin_return_address(0));
    return p ? p : real_valloc(n);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p || in_boot(p))
        return p ? boot_size(p) : 0;
    size_t n = table_get(p, 0);
    if (n)
        return n;
    if (!real_usable)
        resolve();
    return real_usable ? real_usable(p) : 0;
}

/* ---- threads: thread n of the program on the n-th CPU of the strategy ---- */
/* profiling: each thread knows its number (the sampler records it with every access) */
struct numbered {
    void *(*start)(void *);
    void *arg;
    int n;
};
static void *numbered_start(void *p)
{
    struct numbered c = *(struct numbered *)p;
    free(p);
    npl__sampler_set_thread(c.n);
    return c.start(c.arg);
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *),
                          void *arg)
{
    if (!real_pthread_create)
        resolve();
    int profiling = !in_lib && npl__preload_profiling();
    if (in_lib || (!cfg.pin && !profiling))
        return real_pthread_create(th, attr, start, arg);
    int n = profiling ? npl__sampler_next_thread()
                      : __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
    struct numbered *c = profiling ? malloc(sizeof *c) : NULL;
    if (c) {
        *c = (struct numbered){start, arg, n};
        start = numbered_start;
        arg = c;
    }
    /* the library's one trampoline (src/topology/threads.c) */
    int rc = cfg.pin ? npl__pthread_create_pinned(real_pthread_create, th, attr, start, arg,
                                                  cfg.pin, n)
                     : real_pthread_create(th, attr, start, arg);
    if (rc && c)
        free(c);
    return rc;
}

/* ---- exec and spawn: the new program starts on the process's CPUs (see widen_self) ---- */
extern char **environ;
static void *next_fn(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        in_lib++;
        f = dlsym(RTLD_NEXT, name);
        in_lib--;
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}
/* resolved in the constructor: a vfork child must not run dlsym (it allocates) */
enum { F_EXECVE, F_EXECVP, F_EXECVPE, F_FEXECVE, F_POSIX_SPAWN, F_POSIX_SPAWNP, F_SYSTEM, F_POPEN,
       F_COUNT };
static const char *const spawn_names[F_COUNT] = {"execve", "execvp", "execvpe", "fexecve",
                                                 "posix_spawn", "posix_spawnp", "system", "popen"};
static void *spawn_fns[F_COUNT];
static void resolve_spawn(void)
{
    for (int i = 0; i < F_COUNT; i++)
        next_fn(&spawn_fns[i], spawn_names[i]);
}
#define cache_execve spawn_fns[F_EXECVE]
#define cache_execvp spawn_fns[F_EXECVP]
#define cache_execvpe spawn_fns[F_EXECVPE]
#define cache_fexecve spawn_fns[F_FEXECVE]
#define cache_posix_spawn spawn_fns[F_POSIX_SPAWN]
#define cache_posix_spawnp spawn_fns[F_POSIX_SPAWNP]
#define cache_system spawn_fns[F_SYSTEM]
#define cache_popen spawn_fns[F_POPEN]
#define NEXT(type, name)                                                                           \
    type real = (type)next_fn(&cache_##name, #name);                                               \
    if (!real) {                                                                                   \
        errno = ENOSYS;                                                                            \
        return fail;                                                                               \
    }
/* run CALL with the calling thread widened, keep its result and errno, narrow back */
#define WIDENED(rtype, call)                                                                       \
    unsigned long saved[MASK_WORDS];                                                               \
    int changed = widen_self(saved);                                                               \
    rtype r = call;                                                                                \
    narrow_back(saved, changed);                                                                   \
    return r;
/* the same for the exec family: a profiling image that recorded nothing hands the profile to the
 * program it becomes (kept if the exec fails) */
#define EXEC_WIDENED(call)                                                                         \
    npl__preload_profile_exec(0);                                                                  \
    unsigned long saved[MASK_WORDS];                                                               \
    int changed = widen_self(saved);                                                               \
    int r = call;                                                                                  \
    narrow_back(saved, changed);                                                                   \
    npl__preload_profile_exec(1);                                                                  \
    return r;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    const int fail = -1;
    NEXT(execve_fn, execve)
    EXEC_WIDENED(real(path, argv, envp))
}

EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    const int fail = -1;
    NEXT(execvpe_fn, execvpe)
    EXEC_WIDENED(real(file, argv, envp))
}

EXPORT int execvp(const char *file, char *const argv[])
{
    const int fail = -1;
    NEXT(execvp_fn, execvp)
    EXEC_WIDENED(real(file, argv))
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    const int fail = -1;
    NEXT(fexecve_fn, fexecve)
    EXEC_WIDENED(real(fd, argv, envp))
}

/* execl, execlp, execle: the arguments into an array on the stack (no malloc: vfork children).
 * count_args: how many there are, arg0 included (0 when arg0 is NULL); take_args fills argv
 * (n + 1 slots) and leaves *ap after the terminating NULL (execle's envp comes next). */
static size_t count_args(const char *arg0, va_list ap)
{
    size_t n = 0;
    if (arg0)
        for (n = 1; va_arg(ap, char *); n++)
            ;
    return n;
}

static void take_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
    argv[0] = (char *)arg0;
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(*ap, char *);
    if (arg0)
        (void)va_arg(*ap, char *);
    argv[n] = NULL;
}

#define ARGV_FROM_VA(arg0)                                                                         \
    va_list ap, cp;                                                                                \
    va_start(ap, arg0);                                                                            \
    va_copy(cp, ap);                                                                               \
    size_t n = count_args(arg0, cp);                                                               \
    va_end(cp);                                                                                    \
    char *argv[n + 1];                                                                             \
    take_args(argv, n, arg0, &ap);

EXPORT int execl(const char *path, const char *arg, ...)
{
    ARGV_FROM_VA(arg)
    va_end(ap);
    return execve(path, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    ARGV_FROM_VA(arg)
    va_end(ap);
    return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    ARGV_FROM_VA(arg)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    const int fail = ENOSYS;
    NEXT(spawn_fn, posix_spawn)
    WIDENED(int, real(pid, path, fa, at, argv, envp))
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    const int fail = ENOSYS;
    NEXT(spawn_fn, posix_spawnp)
    WIDENED(int, real(pid, file, fa, at, argv, envp))
}

typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);

/* system and popen spawn inside the C library (no call through exec or posix_spawn above) */
EXPORT int system(const char *cmd)
{
    const int fail = -1;
    NEXT(system_fn, system)
    WIDENED(int, real(cmd))
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
    FILE *const fail = NULL;
    NEXT(popen_fn, popen)
    WIDENED(FILE *, real(cmd, mode))
}
