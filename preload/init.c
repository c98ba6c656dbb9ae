/* SPDX-License-Identifier: BSD-3-Clause */
/* init.c - libnumaplace_preload.so's constructor, the interposer's top: the environment
 * `numaplace run` sets (preload/env.h), read once before main into ground.c's configuration, and
 * libomp detection (for pinning).
 *
 *  - NUMAPLACE_POLICY (any policy string; first_touch or unset: allocations not intercepted),
 *    NUMAPLACE_THRESHOLD (default 1 MiB), NUMAPLACE_FIRST, NUMAPLACE_HUGE: alloc.c.
 *  - NUMAPLACE_PIN=compact|scatter|LIST: the main thread is pinned as thread 0 here, and every
 *    thread the program creates as thread n (threads.c). CPUs come from the affinity mask the
 *    process had when it was loaded (taskset, cgroups): never widened. When LLVM's libomp is
 *    loaded the main thread is NOT pinned here: libomp builds its places from the mask it sees at
 *    start-up and would copy a pinned main thread's single CPU to every worker. Its threads are
 *    placed by KMP_AFFINITY=explicit,proclist=[the same order] instead (numaplace run sets it;
 *    the preload sets it itself when the program sets no OpenMP binding variable).
 *  - NUMAPLACE_START_CPUS: the CPUs run started the program on, in place of the load-time
 *    snapshot, which libgomp's constructor may already have narrowed (take_start_cpus).
 *  - NUMAPLACE_NEXT_TOUCH=1 (or a chunk size >= 4096): the transparent next-touch mode. Large
 *    allocations are still placed under NUMAPLACE_POLICY (or first touch) AND registered for
 *    next-touch; the re-arm rule (rearm.c) arms them at OpenMP parallel region entries, seen
 *    through the program's own runtime (regions.c: libgomp's entry points, libomp's OMPT). A
 *    program without OpenMP regions runs unchanged: its ranges stay registered, never armed.
 *  - Static arrays are placed before main (statics.c).
 *
 * Messages: one line on stderr when the environment is wrong (the interposer then stays out of
 * the way); NUMAPLACE_DEBUG=1 logs each intercepted allocation. */
#define _GNU_SOURCE
#include "base/base.h"
#include "topology/topology.h"

#include "env.h"
#include "preload.h"
#include "io.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int libomp_loaded(void) { return dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != NULL; }

/* libomp places its threads itself: give it the pin order as an explicit proclist */
static void set_kmp_affinity(void)
{
    if (getenv("KMP_AFFINITY") || getenv("OMP_PLACES") || getenv("OMP_PROC_BIND") ||
        getenv("GOMP_CPU_AFFINITY"))
        return; /* the user's (numaplace run has already decided the precedence) */
    int n = npl_pin_order(NULL, npl__preload.pin, NULL, 0); /* any number of CPUs */
    int *cpus = n > 0 ? malloc((size_t)n * sizeof *cpus) : NULL;
    size_t size = (size_t)n * 12 + 64;
    char *buf = cpus ? malloc(size) : NULL;
    if (buf && npl_pin_order(NULL, npl__preload.pin, cpus, n) == n) {
        size_t off = (size_t)snprintf(buf, size, "granularity=fine,explicit,proclist=[");
        for (int k = 0; k < n; k++)
            off += (size_t)snprintf(buf + off, size - off, "%s%d", k ? "," : "", cpus[k]);
        snprintf(buf + off, size - off, "]");
        setenv("KMP_AFFINITY", buf, 0);
    }
    free(cpus);
    free(buf);
}

/* NUMAPLACE_THRESHOLD, NUMAPLACE_FIRST and NUMAPLACE_NEXT_TOUCH, in env.h's grammar; a value
 * out of it is said once and left at its default */
static void read_numbers(struct npl__preload_cfg *cfg)
{
    const char *e;
    uint64_t v;
    int on;
    if ((e = getenv(NPL_ENV_THRESHOLD)) && *e) {
        if (npl_env_parse_threshold(e, &v) == 0)
            cfg->threshold = (size_t)v;
        else
            npl__preload_say("numaplace preload: " NPL_ENV_THRESHOLD "=%s is not a size from 1 "
                             "byte to 2^63-1 (K/M/G)%s; using 1 MiB\n", e, "");
    }
    if ((e = getenv(NPL_ENV_FIRST)) && *e) {
        if (npl_env_parse_first(e, &v) == 0)
            cfg->first = (long)v;
        else
            npl__preload_say("numaplace preload: " NPL_ENV_FIRST "=%s is not a count from 1 to "
                             "2^63-1%s; ignored\n", e, "");
    }
    if ((e = getenv(NPL_ENV_NEXT_TOUCH)) && *e) {
        if (npl_env_parse_next_touch(e, &on, &v) < 0) {
            npl__preload_say("numaplace preload: " NPL_ENV_NEXT_TOUCH "=%s is not 0, 1 or a chunk "
                             "size in bytes%s; on, with the default chunk\n", e, "");
            on = 1;
            v = 0;
        }
        cfg->next_touch = on;
        cfg->nt_chunk = (size_t)v;
    }
}

/* every CPU of the load-time snapshot (the mask now) is in cpus[0..n) */
static int snapshot_inside(const int *cpus, int n)
{
    int m = npl__initial_affinity(NULL, 0);
    int *now = m > 0 ? malloc((size_t)m * sizeof *now) : NULL;
    int ok = now && npl__initial_affinity(now, m) == m;
    for (int i = 0; ok && i < m; i++)
        ok = npl__in_list(now[i], cpus, n);
    free(now);
    return ok;
}

/* NUMAPLACE_START_CPUS (env.h): the CPUs run started this program on. libgomp's constructor runs
 * before this one and, under OMP_PROC_BIND or OMP_PLACES, has already bound the initial thread to
 * its first place: the load-time snapshot would make @local, bind_block's threads and the
 * placement workers see that one place. Taken only by the program run executed (same file) and
 * only if the thread's mask now is inside it (a runtime narrows, never widens); removed either
 * way. */
static void take_start_cpus(void)
{
    const char *e = getenv(NPL_ENV_START_CPUS), *list;
    uint64_t dev, ino;
    struct stat st;
    int *cpus = NULL, n = 0;
    if (!e)
        return;
    if (npl_env_parse_start_cpus(e, &dev, &ino, &list) == 0 && stat("/proc/self/exe", &st) == 0 &&
        (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino &&
        npl__parse_list(list, NPL__MAX_ID, "CPU", &cpus, &n) == 0 && snapshot_inside(cpus, n))
        npl__set_initial_affinity(cpus, n);
    free(cpus);
    unsetenv(NPL_ENV_START_CPUS);
}

__attribute__((constructor)) static void preload_init(void)
{
    struct npl__preload_cfg *cfg = &npl__preload;
    npl__preload_resolve();
    npl__preload_enter();
    npl__preload_remember_stderr();
    take_start_cpus(); /* before the topology is loaded */
    npl__preload_children_init(); /* exec and spawn resolved, fork handlers installed */
    npl__preload_limits_init();   /* the cgroup limit files, found once */
    read_numbers(cfg);
    const char *e;
    if ((e = getenv(NPL_ENV_HUGE)) && *e) {
        if (!strcmp(e, "thp"))
            cfg->flags |= NPL_F_THP;
        else if (!strcmp(e, "2M") || !strcmp(e, "2m"))
            cfg->flags |= NPL_F_HUGETLB;
        else
            npl__preload_say("numaplace preload: " NPL_ENV_HUGE "=%s: use thp or 2M%s; ignored\n",
                             e, "");
    }
    if ((e = getenv(NPL_ENV_VERBOSE)) && *e && strcmp(e, "0"))
        cfg->verbose = !strcmp(e, "json") ? 2 : 1;
    if ((e = getenv(NPL_ENV_POLICY)) && *e) {
        snprintf(cfg->policy, sizeof cfg->policy, "%s", e);
        for (char *q = cfg->policy; *q; q++) /* printed inside JSON strings */
            if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20)
                *q = '?';
        if (npl_policy_parse(&cfg->pol, e) < 0) {
            npl__preload_say("numaplace preload: " NPL_ENV_POLICY "=%s: %s; allocations not "
                             "placed\n", e, npl_last_error());
            cfg->pol = NULL;
        } else if (npl_policy_get_kind(cfg->pol) != NPL_FIRST_TOUCH || cfg->flags) {
            cfg->active = 1;
        }
    }
    if (!cfg->pol && (cfg->flags || cfg->next_touch) &&
        npl_policy_create(&cfg->pol, NPL_FIRST_TOUCH, NULL, 0) == 0)
        cfg->active = 1;
    if (cfg->next_touch && cfg->pol)
        cfg->active = 1;
    if ((e = getenv(NPL_ENV_PIN)) && *e) {
        npl__preload_save_base_cpus(); /* before the main thread is pinned */
        cfg->pin = strdup(e); /* in_lib: the real allocator */
        int ok = cfg->pin && npl_pin_cpu(NULL, cfg->pin, 0) >= 0;
        if (ok && libomp_loaded()) /* libomp pins the main thread through its places */
            set_kmp_affinity();
        else if (ok)
            ok = npl_pin_self(cfg->pin, 0) >= 0; /* the main thread is thread 0 */
        if (!ok) {
            npl__preload_say("numaplace preload: " NPL_ENV_PIN "=%s: %s; threads not pinned\n",
                             e, npl_last_error());
            free(cfg->pin);
            cfg->pin = NULL;
        }
    }
    npl__preload_io_resolve();
    npl__preload_protect_resolve();
    /* numaplace profile (every large block tracked, nothing placed) or run --profile */
    /* numaplace profile --profile: both (the advice applied to the blocks the sampler tracks) */
    int profiling = npl__preload_profile_init(cfg->threshold);
    if (npl__preload_apply_init(cfg->threshold) || profiling) {
        if (!cfg->pol && npl_policy_create(&cfg->pol, NPL_FIRST_TOUCH, NULL, 0) < 0)
            cfg->pol = NULL;
        cfg->active = cfg->pol != NULL;
    }
    if (cfg->active && (!npl__preload_profiling() || npl__preload_apply_active()) &&
        !npl_topo_self()) /* load hwloc now, not inside the first malloc */
        cfg->active = 0;
    npl__preload_alloc_init(); /* whose malloc the program has */
    /* before the first parallel region; under run --profile the profile arms its arrays */
    if (cfg->next_touch && cfg->active && !npl__preload_apply_active())
        npl__rearm_init();
    if (cfg->active)
        npl__preload_place_static(); /* profile --profile too: placed as advised, then tracked */
    npl__preload_profile_track_statics();
    npl__preload_leave();
}
