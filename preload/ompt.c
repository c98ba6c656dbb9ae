/* SPDX-License-Identifier: BSD-3-Clause */
/* ompt.c - the libomp source of the region hook (regions.c): libnumaplace_preload.so is also an
 * OMPT tool (OpenMP 5 tools interface; ompt_start_tool is exported by preload.map). LLVM's libomp
 * tells it where parallel regions begin and end, and each thread's number in its team; the hook
 * passes them on to its subscribers (the profile's phases, next-touch's re-arm, run --profile).
 *
 * LLVM's libomp calls ompt_start_tool at its initialization; the tool starts only when someone
 * subscribed to the hook, or when NUMAPLACE_NEXT_TOUCH, NUMAPLACE_PROFILE_SHM or
 * NUMAPLACE_PROFILE_APPLY is set (should the runtime initialize before the constructor, or a
 * profiled run only subscribe at its first array), so that a program nobody watches runs on
 * libomp exactly as without it. Its parallel_begin callback reports each team (not leagues: teams
 * constructs) with OMPT's codeptr_ra. A region that entered through the interposer's GOMP_*
 * wrappers (a gcc program on libomp) is reported there already: libomp's report of it carries a
 * return address inside this library and is dropped, and so is its end. GCC's libgomp has no
 * OMPT: its regions come from the wrappers. This file never exits the process and never changes
 * its status. omp-tools.h comes from libomp-dev; nothing here links libomp. */
#define _GNU_SOURCE
#include "base/base.h"
#include "env.h"
#include "preload.h"

#include <omp-tools.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par,
                              unsigned int requested, int flags, const void *codeptr_ra)
{
    (void)task, (void)frame, (void)par;
    if (flags & ompt_parallel_league)
        return;
    if (npl__regions_in_self(codeptr_ra))
        npl__regions_enter_again();
    else
        npl__regions_enter(codeptr_ra, requested, NPL__REGION_OMPT);
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags,
                            const void *codeptr_ra)
{
    (void)par, (void)task, (void)codeptr_ra;
    if (!(flags & ompt_parallel_league))
        npl__regions_leave();
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task,
                             unsigned int actual, unsigned int index, int flags)
{
    (void)par, (void)task, (void)actual;
    if (endpoint == ompt_scope_begin && (flags & ompt_task_implicit))
        npl__regions_thread((int)index);
}

static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set ||
        set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin) == ompt_set_never ||
        set(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end) == ompt_set_never) {
        npl__debug("ompt: the OpenMP runtime refuses the parallel-begin/end callbacks: no region "
                   "will be seen");
        return 0; /* the tool is off; the program runs unchanged */
    }
    set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task); /* thread numbers */
    npl__regions_in_self(NULL); /* find our own bounds now, outside any region */
    npl__debug("ompt: the OpenMP runtime started the region tool");
    return 1;
}

static void tool_fini(ompt_data_t *data) { (void)data; }

static int env_set(const char *name)
{
    const char *e = getenv(name);
    return e && *e;
}

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                 const char *runtime_version)
{
    static ompt_start_tool_result_t result = {tool_init, tool_fini, {0}};
    (void)omp_version, (void)runtime_version;
    int nt_on = 0;
    uint64_t chunk;
    const char *e = getenv(NPL_ENV_NEXT_TOUCH);
    if (e && *e && npl_env_parse_next_touch(e, &nt_on, &chunk) < 0)
        nt_on = 1; /* the constructor says so and takes it as on */
    return npl__regions_wanted() || nt_on || env_set(NPL_ENV_PROFILE_SHM) ||
                   env_set(NPL_ENV_PROFILE_APPLY)
               ? &result
               : NULL;
}

/* a debug line only: the exit status and the program's buffered output are never touched */
__attribute__((destructor)) static void check_seen(void)
{
    struct npl__regions_stats rs;
    npl__regions_stats(&rs);
    if (npl__preload_next_touch() && rs.entries == 0 && getenv(NPL_ENV_DEBUG)) {
        static const char msg[] = "numaplace preload: " NPL_ENV_NEXT_TOUCH " is set but no OpenMP "
                                  "parallel region was seen (no OpenMP, OMP_TOOL=disabled under "
                                  "libomp, or no parallel region): nothing was re-armed\n";
        if (write(2, msg, sizeof msg - 1) < 0)
            return;
    }
}
