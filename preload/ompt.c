/* ompt.c - the OpenMP tools part of libnumaplace_preload.so: LLVM's libomp tells it where
 * parallel regions begin and end, and each thread's number in its team; it passes them to the
 * interposer's one region hook (regions.c), which the profile's phases, next-touch's re-arming
 * (`numaplace run --next-touch`) and `run --profile` share. GCC's libgomp has no OMPT: regions.c
 * wraps its GOMP_* entry points instead.
 *
 * LLVM's libomp calls ompt_start_tool (exported by preload.map) at its initialization; the tool
 * starts only when one of those users is on. This file never exits the process and never changes
 * its status. omp-tools.h comes from libomp-dev; nothing here links libomp. */
#define _GNU_SOURCE
#include "base/base.h"
#include "env.h"
#include "preload.h"
#include "profile/profile.h"

#include <omp-tools.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/migrate.h"


static int tool_started;

static void warn(const char *msg)
{
    if (getenv(NPL_ENV_DEBUG) && write(2, msg, strlen(msg)) < 0)
        return;
}

/* a gcc-built program on libomp enters through the interposer's GOMP_* wrappers: codeptr_ra is
 * then inside them, and the program's own call site is the one they recorded */
static const void *region_site(const void *codeptr_ra)
{
    const void *s = npl__regions_gomp_site();
    return s ? s : codeptr_ra;
}

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par,
                              unsigned int requested, int flags, const void *codeptr_ra)
{
    (void)task, (void)frame, (void)par, (void)requested, (void)flags;
    npl__region_begin(region_site(codeptr_ra));
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags,
                            const void *codeptr_ra)
{
    (void)par, (void)task, (void)flags, (void)codeptr_ra;
    npl__region_end();
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task,
                             unsigned int actual, unsigned int index, int flags)
{
    (void)par, (void)task, (void)actual;
    if (endpoint == ompt_scope_begin && (flags & ompt_task_implicit))
        npl__region_thread((int)index);
}

static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set || set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin) == ompt_set_never ||
        set(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end) == ompt_set_never) {
        warn("numaplace preload: the OpenMP runtime refuses the parallel-begin callback: "
             "nothing will be migrated\n");
        return 0; /* the tool is off; the program runs unchanged */
    }
    set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task); /* thread numbers */
    npl__regions_ompt_started();
    npl__preload_enter();
    npl_get_support(); /* probe now, outside any callback */
    npl__preload_leave();
    tool_started = 1;
    npl__debug("ompt: the OpenMP runtime started the next-touch tool");
    return 1;
}

static void tool_fini(ompt_data_t *data) { (void)data; }

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                 const char *runtime_version)
{
    static ompt_start_tool_result_t result = {tool_init, tool_fini, {0}};
    (void)omp_version, (void)runtime_version;
    /* profiling: from the start, before the sampler claims the profile at the first array */
    return npl__preload_next_touch() || npl__preload_profiling() || npl__preload_apply_active()
               ? &result : NULL;
}

/* a warning only: the exit status and the program's buffered output are never touched */
__attribute__((destructor)) static void check_started(void)
{
    if (npl__preload_next_touch() && !npl__regions_seen())
        warn("numaplace preload: " NPL_ENV_NEXT_TOUCH " is set but no OpenMP parallel region was "
             "seen (no OpenMP, OMP_TOOL=disabled under libomp, or no parallel region): nothing "
             "was migrated\n");
}
