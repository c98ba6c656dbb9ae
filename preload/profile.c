/* SPDX-License-Identifier: BSD-3-Clause */
/* profile.c - the interposer's side of `numaplace profile` (NUMAPLACE_PROFILE_SHM): every block
 * that `run` could place (NUMAPLACE_THRESHOLD bytes or more, through malloc & co.) and every
 * static array of the loaded objects is tracked by the sampler (src/profile/sampler.c) under its
 * site identity (src/profile/site.c). The blocks themselves are library arrays under first touch,
 * as `run` would make them without a policy: page-aligned, nothing placed, nothing populated.
 *
 * Static arrays are found once, before main, in the program and in the shared objects loaded
 * with it (objects dlopen'ed later are not scanned).
 *
 * Phases: the sampler hears of the outermost OpenMP parallel regions (their entries and ends)
 * and of each team thread's number from the region hook (regions.c), subscribed before main. */
#define _GNU_SOURCE
#include "profile/profile.h"
#include "env.h"
#include "preload.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int profiling;
static size_t threshold = (size_t)1 << 20;

int npl__preload_profiling(void) { return profiling; }

static void on_region(const struct npl__region *r, void *arg)
{
    (void)arg;
    if (r->event == NPL__REGION_THREAD)
        npl__sampler_set_omp_thread(r->thread);
    else if (r->level == 1 && r->event == NPL__REGION_BEGIN)
        npl__sampler_region_begin(r->code);
    else if (r->level == 1)
        npl__sampler_region_end();
}


static void track_static(const char *symbol, uint64_t offset, uintptr_t addr, size_t bytes,
                         void *ctx)
{
    (void)ctx;
    size_t ps = npl__page_size();
    uintptr_t lo = (addr + ps - 1) / ps * ps, hi = (addr + bytes) / ps * ps;
    if (hi <= lo || hi - lo < ps)
        return; /* its page-aligned inside is empty */
    if (npl__sampler_track((void *)lo, hi - lo, 0, NPL_RAW_KIND_STATIC, (const void *)addr, 0,
                           symbol, offset, 1) < 0)
        npl__debug("profile: static %s not tracked", symbol);
    else
        npl__debug("profile: static %s %p+%zu tracked", symbol, (void *)lo, (size_t)(hi - lo));
}

/* the objects loaded with the program (collected first: the scan itself walks the loader's
 * list, and tracking may start the sampler thread, which is not done under the loader's lock) */
#define MAX_SCAN 128
static char scan_paths[MAX_SCAN][NPL_SITE_PATH];
static int nscan;

static int collect_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    if (nscan >= MAX_SCAN || (!name && nscan > 0))
        return 0; /* the program is the first object, the one without a name */
    if (name && (npl__site_runtime_path(name) || strstr(name, "libnumaplace") ||
                 strstr(name, "linux-vdso")))
        return 0; /* a runtime's statics are its own (numaplace's, a sanitizer's context) */
    snprintf(scan_paths[nscan++], NPL_SITE_PATH, "%s", name ? name : "");
    return 0;
}

static void track_statics(void)
{
    dl_iterate_phdr(collect_object, NULL);
    for (int i = 0; i < nscan; i++)
        npl__site_statics(scan_paths[i][0] ? scan_paths[i] : NULL, threshold, track_static, NULL);
}

/* the constructor's part: 1 when profiling (the interposer then tracks every large block) */
int npl__preload_profile_init(size_t thr)
{
    const char *shm = getenv(NPL_ENV_PROFILE_SHM);
    if (!shm || !*shm)
        return 0;
    struct npl_sampler_cfg c = {shm, 0, thr};
    const char *r = getenv(NPL_ENV_PROFILE_RATE);
    uint64_t rate;
    if (r && *r && npl_env_parse_rate(r, &rate) == 0)
        c.rate = (double)rate;
    else if (r && *r)
        npl__preload_say("numaplace profile: " NPL_ENV_PROFILE_RATE "=%s is not a rate from 1 to "
                         "1000000%s; the default is used\n", r, "");
    if (npl__sampler_init(&c) < 0) {
        npl__preload_say("numaplace profile: %s: the program is not profiled%s\n", npl_last_error(),
                         "");
        return 0;
    }
    threshold = thr;
    profiling = 1;
    if (npl__regions_subscribe(on_region, NULL,
                               NPL__REGION_BEGIN | NPL__REGION_END | NPL__REGION_THREAD) < 0)
        npl__debug("profile: cannot subscribe to region entries: no phases");
    npl__site_warm();
    return 1;
}

/* after the constructor has placed them (profile --profile): a trap armed first would take the
 * placement's own touches for the program's first touches */
void npl__preload_profile_track_statics(void)
{
    if (profiling)
        track_statics();
}

/* A large block of n bytes allocated at site: mapped as the C library maps large blocks (no
 * placement, the system's huge-page mode), tracked from its first touch. */
void *npl__preload_profile_map(size_t n, const void *site)
{
    size_t ps = npl__page_size(), len = (n + ps - 1) / ps * ps;
    if (len < n)
        return NULL;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    struct npl_site_key k;
    uint32_t ord = npl__site_resolve(site, &k, NULL) == 0 ? npl__site_next_ordinal(&k) : 0;
    if (npl__sampler_track(p, len, n, NPL_RAW_KIND_HEAP, site, ord, NULL, 0, 1) < 0)
        npl__debug("profile: %p+%zu not tracked", p, n);
    return p;
}

void npl__preload_profile_unmap(void *p, size_t n)
{
    size_t ps = npl__page_size();
    npl__sampler_untrack(p);
    munmap(p, (n + ps - 1) / ps * ps);
}

void npl__preload_profile_exec(int failed)
{
    if (profiling)
        npl__sampler_exec(failed);
}

/* The program's own copy of libnumaplace tells us about its arrays (src/profile/collect.c finds
 * these with dlsym): tracked like the interposer's blocks; trap = 0 when the library placed
 * (populated) the array already. Calls from the interposer's own copy are ignored. */
#define EXPORT __attribute__((visibility("default")))
EXPORT void numaplace_preload_track(void *base, size_t bytes, const void *site, int trap)
{
    if (!profiling || npl__preload_inside() || !base)
        return;
    npl__preload_enter();
    struct npl_site_key k;
    uint32_t ord = npl__site_resolve(site, &k, NULL) == 0 ? npl__site_next_ordinal(&k) : 0;
    size_t ps = npl__page_size();
    npl__sampler_track(base, (bytes + ps - 1) / ps * ps, bytes, NPL_RAW_KIND_LIBRARY, site, ord,
                       NULL, 0, trap);
    npl__preload_leave();
}

EXPORT void numaplace_preload_untrack(void *base)
{
    if (profiling && !npl__preload_inside())
        npl__sampler_untrack(base);
}

__attribute__((destructor)) static void profile_fini(void)
{
    if (profiling)
        npl__sampler_stop();
}
