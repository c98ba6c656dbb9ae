/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_alloc.c - OpenMP allocators whose omp_atk_partition trait places memory
 * (include/numaplace/omp.h; under `numaplace run` the interposer's preload/omp_alloc.c sends the
 * program's omp_* calls here). No OpenMP runtime honours the trait (libgomp accepts `blocked`
 * and ignores it, `interleaved` and libomp's partitions need memkind): numaplace keeps the
 * runtime's allocator for everything but the partition, and serves that allocator's
 * allocations itself as library arrays placed as the trait says:
 *   blocked      cyclic_block:pages=ceil(pages/K)@local  K equal blocks, block k on the k-th
 *                node of the CPUs this process may use (the team's nodes)
 *   interleaved  cyclic@local                           page by page over those nodes;
 *                cyclic_block:pages=P@local with OpenMP 6.0's omp_atk_part_size (key 14): parts
 *                of part_size bytes rounded up to whole pages, round-robin (P pages each)
 *   nearest      bind_all:NODE                          the allocating thread's node
 *   environment  numaplace's own choice (npl_alloc_auto: the profile's advice where run
 *                --profile applies one, else NUMAPLACE_POLICY / the config file's default)
 * The other traits are kept: alignment (library arrays are page-aligned; a larger alignment is
 * cut from a larger array), fallback (default_mem_fb: the runtime's default allocator, null_fb:
 * NULL, abort_fb: abort(), allocator_fb: fb_data), pinned (mlock; failing it is an allocation
 * failure), and the runtime validates them all. pool_size is not enforced for placed arrays.
 * The runtime's functions are looked up in the runtime itself (its own handle, not the global
 * scope, where the interposer's functions of the same names come first). */
#define _GNU_SOURCE
#include "defaults/defaults.h"

#include "numaplace/profile.h"

#include <dlfcn.h>
#include <hwloc.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the OpenMP runtime's own functions ---- */
struct runtime {
    uintptr_t (*init)(uintptr_t, int, const npl_omp_trait *);
    void (*destroy)(uintptr_t);
    void *(*alloc)(size_t, uintptr_t);
    void *(*aligned_alloc)(size_t, size_t, uintptr_t);
    void *(*calloc)(size_t, size_t, uintptr_t);
    void *(*realloc)(void *, size_t, uintptr_t, uintptr_t);
    void (*free)(void *, uintptr_t);
    uintptr_t (*get_default)(void);
    int (*num_places)(void);
    int (*place_num_procs)(int);
    void (*place_proc_ids)(int, int *);
};
static struct runtime rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static int find_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    static const char *const names[] = {"libgomp.so", "libomp.so", "libiomp5.so"};
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strncmp(base, names[i], strlen(names[i]))) {
            *(void **)data = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
            return *(void **)data != NULL;
        }
    return 0;
}

static void load_runtime(void)
{
    void *h = NULL;
    dl_iterate_phdr(find_runtime, &h);
    if (!h)
        return;
#define LOOK(field, name) *(void **)&rt.field = dlsym(h, name)
    LOOK(init, "omp_init_allocator");
    LOOK(destroy, "omp_destroy_allocator");
    LOOK(alloc, "omp_alloc");
    LOOK(aligned_alloc, "omp_aligned_alloc");
    LOOK(calloc, "omp_calloc");
    LOOK(realloc, "omp_realloc");
    LOOK(free, "omp_free");
    LOOK(get_default, "omp_get_default_allocator");
    LOOK(num_places, "omp_get_num_places");
    LOOK(place_num_procs, "omp_get_place_num_procs");
    LOOK(place_proc_ids, "omp_get_place_proc_ids");
#undef LOOK
    /* the handle stays open: the runtime is loaded for as long as the program runs */
}

static const struct runtime *runtime(void)
{
    pthread_once(&rt_once, load_runtime);
    return rt.init && rt.alloc && rt.free ? &rt : NULL;
}

/* ---- the allocators numaplace places for ---- */
#define MAX_ALLOCATORS 256
struct allocator {
    uintptr_t handle; /* the runtime's; 0: a free entry */
    int partition;    /* NPL_OMP_BLOCKED ... */
    size_t alignment;
    uintptr_t fallback, fb_data;
    int pinned;
    size_t part_size; /* OpenMP 6.0's omp_atk_part_size in bytes (0: not given) */
};
static struct allocator allocators[MAX_ALLOCATORS];
static int nallocators; /* entries in use at the front (free ones have handle 0) */
static _Atomic int placing; /* a placing allocator was ever made: else every call is the runtime's */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int lookup(uintptr_t handle, struct allocator *out)
{
    int found = 0;
    if (!atomic_load_explicit(&placing, memory_order_acquire))
        return 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nallocators && !found; i++)
        if (allocators[i].handle == handle) {
            *out = allocators[i];
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

/* arrays whose start is not the pointer given out (an alignment above the page size) */
struct moved {
    void *ptr, *array;
};
static struct moved *moved;
static size_t nmoved, capmoved;

int npl__omp_partition_of(uintptr_t memspace, int ntraits, const npl_omp_trait *traits)
{
    if (memspace > NPL_OMP_CONST_MEM_SPACE || ntraits < 0 || (ntraits && !traits))
        return 0; /* high bandwidth, low latency, a device's: the runtime's business */
    int part = 0, part_size = 0, given = 0;
    for (int i = 0; i < ntraits; i++)
        if (traits[i].key == NPL_OMP_ATK_PARTITION) {
            given = 1;
            part = traits[i].value >= NPL_OMP_ENVIRONMENT && traits[i].value <= NPL_OMP_INTERLEAVED
                       ? (int)traits[i].value
                       : 0;
        } else if (traits[i].key == NPL_OMP_ATK_PART_SIZE_KEY) {
            part_size = 1;
        }
    /* part_size alone: the partition is OpenMP's default, environment */
    return !given && part_size ? NPL_OMP_ENVIRONMENT : part;
}

uintptr_t npl_omp_init_allocator(uintptr_t memspace, int ntraits, const npl_omp_trait *traits)
{
    const struct runtime *r = runtime();
    if (!r) {
        npl__fail(ENOSYS, "omp_init_allocator: no OpenMP runtime (libgomp, libomp) is loaded");
        return 0;
    }
    int part = npl__omp_partition_of(memspace, ntraits, traits);
    if (!part)
        return r->init(memspace, ntraits, traits);
    /* the runtime's allocator without the partition (it would ignore it, or refuse it without
     * memkind); the other traits are its to validate */
    npl_omp_trait *rest = malloc((size_t)(ntraits ? ntraits : 1) * sizeof *rest);
    if (!rest) {
        npl__fail(ENOMEM, "omp_init_allocator: out of memory");
        return 0;
    }
    struct allocator a = {.partition = part, .alignment = 1, .fallback = NPL_OMP_DEFAULT_MEM_FB};
    int n = 0;
    for (int i = 0; i < ntraits; i++) {
        if (traits[i].key == NPL_OMP_ATK_PARTITION)
            continue;
        if (traits[i].key == NPL_OMP_ATK_PART_SIZE_KEY) { /* a runtime before 6.0 refuses it */
            if (!traits[i].value || traits[i].value > (uintptr_t)INTPTR_MAX) {
                free(rest);
                npl__fail(EINVAL, "omp_init_allocator: omp_atk_part_size %#lx is not a positive "
                          "size", (unsigned long)traits[i].value);
                return 0;
            }
            a.part_size = traits[i].value;
            continue;
        }
        if (traits[i].key == NPL_OMP_ATK_ALIGNMENT)
            a.alignment = traits[i].value;
        else if (traits[i].key == NPL_OMP_ATK_FALLBACK)
            a.fallback = traits[i].value;
        else if (traits[i].key == NPL_OMP_ATK_FB_DATA)
            a.fb_data = traits[i].value;
        else if (traits[i].key == NPL_OMP_ATK_PINNED)
            a.pinned = traits[i].value == 1;
        rest[n++] = traits[i];
    }
    a.handle = r->init(memspace, n, rest);
    free(rest);
    if (!a.handle)
        return 0; /* the runtime refused the other traits, as it would have */
    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < nallocators && slot < 0; i++)
        slot = allocators[i].handle ? -1 : i;
    if (slot < 0 && nallocators < MAX_ALLOCATORS)
        slot = nallocators++;
    if (slot >= 0)
        allocators[slot] = a;
    atomic_store_explicit(&placing, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
    if (slot < 0) {
        if (r->destroy)
            r->destroy(a.handle);
        npl__fail(ENOMEM, "omp_init_allocator: more than %d placing allocators at once",
                  MAX_ALLOCATORS);
        return 0;
    }
    return a.handle;
}

void npl_omp_destroy_allocator(uintptr_t handle)
{
    const struct runtime *r = runtime();
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nallocators; i++)
        if (allocators[i].handle == handle)
            allocators[i].handle = 0;
    pthread_mutex_unlock(&lock);
    if (r && r->destroy && handle)
        r->destroy(handle);
}

int npl_omp_allocator_partition(uintptr_t handle)
{
    const struct runtime *r = runtime();
    struct allocator a;
    if (!handle && r && r->get_default)
        handle = r->get_default();
    if (!lookup(handle, &a))
        return npl__fail(ENOENT, "allocator %#lx does not place: no omp_atk_partition trait "
                         "numaplace honours", (unsigned long)handle);
    return a.partition;
}

/* The team's nodes, as a policy's "@LIST": those of the CPUs of the program's OpenMP places
 * (OMP_PLACES: the runtime binds the initial thread to the first place, so the calling thread's
 * affinity would name one node), else "@local" (the CPUs this process may use). *k: how many
 * (0: as many as @local names, counted by the plan). */
static void team_nodes(char *at, size_t size, int *k)
{
    const struct runtime *r = runtime();
    int np = r && r->num_places && r->place_num_procs && r->place_proc_ids ? r->num_places() : 0;
    hwloc_bitmap_t nodes = np > 0 ? hwloc_bitmap_alloc() : NULL;
    const npl_topo *topo = nodes ? npl_topo_self() : NULL;
    snprintf(at, size, "@local");
    *k = 0;
    if (!nodes || !topo) {
        hwloc_bitmap_free(nodes);
        return;
    }
    for (int p = 0; p < np; p++) {
        int n = r->place_num_procs(p), *ids = n > 0 ? malloc((size_t)n * sizeof *ids) : NULL;
        if (!ids)
            continue;
        r->place_proc_ids(p, ids);
        for (int i = 0; i < n; i++) {
            int node = npl_topo_cpu_node(topo, ids[i]);
            if (node >= 0)
                hwloc_bitmap_set(nodes, (unsigned)node);
        }
        free(ids);
    }
    char list[sizeof "@" + 1024];
    if (!hwloc_bitmap_iszero(nodes) && hwloc_bitmap_list_snprintf(list + 1, sizeof list - 1, nodes) > 0 &&
        strlen(list + 1) + 2 < size) {
        list[0] = '@';
        snprintf(at, size, "%s", list);
        *k = hwloc_bitmap_weight(nodes);
    }
    hwloc_bitmap_free(nodes);
}

/* how many nodes `@local` names here */
static int local_nodes(void)
{
    npl_policy *pol = NULL;
    npl_plan *plan = NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int k = -1;
    if (set && npl_policy_parse(&pol, "cyclic@local") == 0 && npl__plan_default(&plan, pol) == 0 &&
        npl_plan_nodeset(plan, set) == 0)
        k = hwloc_bitmap_weight(set);
    npl_plan_free(plan);
    npl_policy_free(pol);
    hwloc_bitmap_free(set);
    return k > 0 ? k : k < 0 ? -1 : 1;
}

/* the policy a partition names, for an array of `bytes` (NULL: environment); part_size: the
 * interleaved parts' bytes (0: a page each) */
static int partition_policy(int part, size_t bytes, size_t part_size, npl_policy **out)
{
    char s[1200], at[1100];
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), pages = (bytes + ps - 1) / ps;
    *out = NULL;
    if (part == NPL_OMP_ENVIRONMENT)
        return 0;
    if (part == NPL_OMP_NEAREST) {
        unsigned cpu = 0, node = 0;
        if (getcpu(&cpu, &node) != 0)
            return -1;
        snprintf(s, sizeof s, "bind_all:%u", node);
    } else {
        int k;
        team_nodes(at, sizeof at, &k);
        if (!k && (k = local_nodes()) < 0)
            return -1;
        if (part == NPL_OMP_INTERLEAVED && part_size > ps)
            snprintf(s, sizeof s, "cyclic_block:pages=%zu%s",
                     part_size / ps + (part_size % ps != 0), at);
        else if (part == NPL_OMP_INTERLEAVED)
            snprintf(s, sizeof s, "cyclic%s", at);
        else
            snprintf(s, sizeof s, "cyclic_block:pages=%zu%s", (pages + (size_t)k - 1) / (size_t)k,
                     at);
    }
    npl__debug("omp_alloc: %zu bytes under %s", bytes, s);
    return npl_policy_parse(out, s);
}

/* a placed array of `size` bytes aligned to `align` for allocator a, made at site; NULL with
 * errno when it could not be (the caller applies the fallback) */
static void *placed(const struct allocator *a, size_t align, size_t size, const void *site)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    if (align < a->alignment)
        align = a->alignment;
    size_t extra = align > ps ? align : 0;
    if (size > SIZE_MAX - extra) {
        errno = EOVERFLOW;
        return NULL;
    }
    npl_shape shape = {.ndims = 1, .dims = {size + extra}, .elem_size = 1};
    void *array;
    if (a->partition == NPL_OMP_ENVIRONMENT) {
        npl__debug("omp_alloc: %zu bytes as numaplace chooses for the site", size + extra);
        array = npl__alloc_auto_at(NULL, &shape, 0, site);
    } else {
        npl_policy *pol = NULL;
        if (partition_policy(a->partition, size + extra, a->part_size, &pol) < 0)
            return NULL;
        array = npl__alloc_array_at(&shape, pol, 0, site);
        npl_policy_free(pol);
    }
    if (!array)
        return NULL;
    if (a->pinned && mlock(array, size + extra) != 0) {
        int e = errno;
        npl_free(array);
        errno = e;
        return NULL;
    }
    if (!extra)
        return array;
    void *ptr = (void *)(((uintptr_t)array + align - 1) & ~(uintptr_t)(align - 1));
    pthread_mutex_lock(&lock);
    if (nmoved == capmoved) {
        size_t cap = capmoved ? 2 * capmoved : 16;
        struct moved *m = realloc(moved, cap * sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&lock);
            npl_free(array);
            errno = ENOMEM;
            return NULL;
        }
        moved = m;
        capmoved = cap;
    }
    moved[nmoved++] = (struct moved){ptr, array};
    pthread_mutex_unlock(&lock);
    return ptr;
}

/* the library array that ptr starts (or was cut from), its bytes; NULL: not one of ours */
static void *array_of(void *ptr, size_t *bytes, int forget)
{
    void *array = ptr;
    if (!atomic_load_explicit(&placing, memory_order_acquire))
        return NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nmoved; i++)
        if (moved[i].ptr == ptr) {
            array = moved[i].array;
            if (forget)
                moved[i] = moved[--nmoved];
            break;
        }
    pthread_mutex_unlock(&lock);
    struct npl_array_info info;
    if (npl_array_info(array, &info) != 0)
        return NULL;
    *bytes = info.bytes - (size_t)((char *)ptr - (char *)array);
    return array;
}

static int valid_alignment(size_t align) { return align && !(align & (align - 1)); }

void *npl__omp_alloc_at(size_t align, size_t size, uintptr_t handle, int zero, const void *site)
{
    const struct runtime *r = runtime();
    if (!r) {
        npl__fail(ENOSYS, "omp_alloc: no OpenMP runtime (libgomp, libomp) is loaded");
        return NULL;
    }
    if (!handle && r->get_default)
        handle = r->get_default();
    struct allocator a;
    if (!size || !valid_alignment(align) || !lookup(handle, &a)) {
        if (zero)
            return r->calloc ? r->calloc(1, size, handle) : NULL;
        return align > 1 && r->aligned_alloc ? r->aligned_alloc(align, size, handle)
                                             : r->alloc(size, handle);
    }
    void *p = placed(&a, align, size, site); /* library arrays are zero-filled */
    if (p)
        return p;
    npl__debug("omp_alloc: %zu bytes not placed (%s): fallback %lu", size, strerror(errno),
               (unsigned long)a.fallback);
    switch (a.fallback) {
    case NPL_OMP_NULL_FB:
        return NULL;
    case NPL_OMP_ABORT_FB:
        abort(); /* the program asked for it (OpenMP's abort_fb) */
    case NPL_OMP_ALLOCATOR_FB:
        return npl__omp_alloc_at(align, size, a.fb_data, zero, site);
    default: /* default_mem_fb */
        if (zero)
            return r->calloc ? r->calloc(1, size, NPL_OMP_DEFAULT_MEM_ALLOC) : NULL;
        return r->aligned_alloc ? r->aligned_alloc(align, size, NPL_OMP_DEFAULT_MEM_ALLOC)
                                : r->alloc(size, NPL_OMP_DEFAULT_MEM_ALLOC);
    }
}

void npl__omp_free(void *ptr, uintptr_t handle)
{
    size_t bytes;
    if (!ptr)
        return;
    void *array = array_of(ptr, &bytes, 1);
    if (array) {
        npl_free(array);
        return;
    }
    const struct runtime *r = runtime();
    if (r)
        r->free(ptr, handle);
}

void *npl__omp_realloc_at(void *ptr, size_t size, uintptr_t handle, uintptr_t free_handle,
                          const void *site)
{
    const struct runtime *r = runtime();
    if (!r) {
        npl__fail(ENOSYS, "omp_realloc: no OpenMP runtime (libgomp, libomp) is loaded");
        return NULL;
    }
    size_t old = 0;
    void *array = ptr ? array_of(ptr, &old, 0) : NULL;
    struct allocator a;
    uintptr_t to = handle ? handle : free_handle; /* null: the allocator ptr came from */
    if (!array && !lookup(to ? to : (r->get_default ? r->get_default() : 0), &a))
        return r->realloc ? r->realloc(ptr, size, handle, free_handle) : NULL;
    if (!size) {
        npl__omp_free(ptr, free_handle);
        return NULL;
    }
    void *p = npl__omp_alloc_at(1, size, to, 0, site);
    if (!p || !ptr)
        return p;
    if (!array) { /* the runtime's block: its size is the runtime's to know */
        void *q = r->realloc ? r->realloc(ptr, size, NPL_OMP_DEFAULT_MEM_ALLOC, free_handle) : NULL;
        if (!q) {
            npl__omp_free(p, to);
            return NULL; /* ptr is still valid, as omp_realloc leaves it on failure */
        }
        memcpy(p, q, size);
        r->free(q, NPL_OMP_DEFAULT_MEM_ALLOC);
        return p;
    }
    memcpy(p, ptr, old < size ? old : size);
    npl__omp_free(ptr, free_handle);
    return p;
}

void *npl_omp_alloc(size_t size, uintptr_t handle)
{
    return npl__omp_alloc_at(1, size, handle, 0, __builtin_return_address(0));
}

void *npl_omp_aligned_alloc(size_t align, size_t size, uintptr_t handle)
{
    return npl__omp_alloc_at(align, size, handle, 0, __builtin_return_address(0));
}

void *npl_omp_calloc(size_t n, size_t size, uintptr_t handle)
{
    if (size && n > SIZE_MAX / size) {
        errno = EOVERFLOW;
        return NULL;
    }
    return npl__omp_alloc_at(1, n * size, handle, 1, __builtin_return_address(0));
}

void *npl_omp_realloc(void *ptr, size_t size, uintptr_t handle, uintptr_t free_handle)
{
    return npl__omp_realloc_at(ptr, size, handle, free_handle, __builtin_return_address(0));
}

void npl_omp_free(void *ptr, uintptr_t handle) { npl__omp_free(ptr, handle); }
