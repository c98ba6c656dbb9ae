/* ompt.c - the libomp source of the region-entry hook (regions.c): libnumaplace_preload.so is
 * also an OMPT tool (OpenMP 5 tools interface; ompt_start_tool is exported by preload.map).
 *
 * LLVM's libomp calls ompt_start_tool at its initialization; the tool starts only when someone
 * subscribed to region entries (or NUMAPLACE_NEXT_TOUCH is on, should the runtime initialize
 * before the constructor), so that a program nobody watches runs on libomp exactly as without
 * it. Its parallel_begin callback reports each team (not leagues: teams constructs) with OMPT's
 * codeptr_ra. A region that entered through the interposer's GOMP_* wrappers (a gcc program on
 * libomp) is reported there already: libomp's report of it carries a return address inside this
 * library and is dropped. GCC's libgomp has no OMPT: its regions come from the wrappers.
 * omp-tools.h comes from libomp-dev; nothing here links libomp. */
#define _GNU_SOURCE
#include "base/base.h"
#include "env.h"
#include "preload.h"

#include <omp-tools.h>
#include <stdlib.h>

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par,
                              unsigned int requested, int flags, const void *codeptr_ra)
{
    (void)task, (void)frame, (void)par;
    if ((flags & ompt_parallel_league) || npl__regions_in_self(codeptr_ra))
        return;
    npl__regions_enter(codeptr_ra, requested, NPL__REGION_OMPT);
}

static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set || set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin) == ompt_set_never) {
        npl__debug("ompt: the OpenMP runtime refuses the parallel-begin callback: no region "
                   "entry will be seen");
        return 0; /* the tool is off; the program runs unchanged */
    }
    npl__regions_in_self(NULL); /* find our own bounds now, outside any region */
    npl__debug("ompt: the OpenMP runtime started the region tool");
    return 1;
}

static void tool_fini(ompt_data_t *data) { (void)data; }

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
    return npl__regions_wanted() || nt_on ? &result : NULL;
}
