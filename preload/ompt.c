/* ompt.c - the OpenMP tools part of libnumaplace_preload.so: the papers' transparent
 * migrate-on-next-touch for unmodified OpenMP programs (`numaplace run --next-touch`).
 *
 * It owns no allocation: alloc.c places the large blocks (and the executable's static data)
 * under the policy and registers them for next-touch (npl_next_touch_register). This part only
 * re-arms. Rule: when a parallel region starts from a code address (codeptr_ra) never seen
 * before, every registered or armed range (the preload's blocks, the program's own
 * npl_next_touch_arm and _register ranges, library arrays too) is re-armed, so the threads of that
 * region pull the chunks they touch first to their own nodes. Regions seen before (the
 * iterations of a solver) re-arm nothing. Up to 1024 distinct regions are remembered; later new
 * ones re-arm when they differ from the last.
 *
 * LLVM's libomp calls ompt_start_tool (exported by preload.map) at its initialization. GCC's
 * libgomp has no OMPT: there the ranges are never armed and the program runs unchanged, with one
 * warning under NUMAPLACE_DEBUG. This file never exits the process and never changes its status.
 * omp-tools.h comes from libomp-dev; nothing here links libomp. */
#define _GNU_SOURCE
#include "base/base.h"
#include "env.h"
#include "preload.h"

#include <omp-tools.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/migrate.h"

#define MAX_REGIONS 1024

static const void *last_region;
static const void *seen[MAX_REGIONS];
static int nseen, tool_started;

static void warn(const char *msg)
{
    if (getenv(NPL_ENV_DEBUG) && write(2, msg, strlen(msg)) < 0)
        return;
}

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
    if (new_region) {
        if (nseen < MAX_REGIONS)
            seen[nseen++] = codeptr_ra;
        npl__preload_enter();
        if (npl_next_touch_rearm_all() < 0)
            npl__debug("ompt: cannot re-arm: %s", npl_last_error());
        else
            npl__debug("ompt: parallel region %p is new: registered ranges re-armed", codeptr_ra);
        npl__preload_leave();
    }
    pthread_mutex_unlock(&region_lock);
}

static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set || set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin) == ompt_set_never) {
        warn("numaplace preload: the OpenMP runtime refuses the parallel-begin callback: "
             "nothing will be migrated\n");
        return 0; /* the tool is off; the program runs unchanged */
    }
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
    return npl__preload_next_touch() ? &result : NULL;
}

/* a warning only: the exit status and the program's buffered output are never touched */
__attribute__((destructor)) static void check_started(void)
{
    if (npl__preload_next_touch() && !tool_started)
        warn("numaplace preload: " NPL_ENV_NEXT_TOUCH " is set but no OpenMP runtime started the "
             "OMPT tool (no libomp, GCC's libgomp, OMP_TOOL=disabled, or no parallel region): "
             "nothing was migrated\n");
}
