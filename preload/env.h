/* env.h - the contract between `numaplace run` and its interposer: every NUMAPLACE_* variable
 * that cli/run.c writes (or reads to find the interposer) and preload/ reads, and the grammar of
 * each value. Both sides include this header and parse with the same functions: run refuses
 * (exit 2) what the interposer would refuse, before the program starts. Numbers follow
 * src/base/number.h; the config file's [policy] threshold takes the same sizes (src/config.c). */
#ifndef NPL_PRELOAD_ENV_H
#define NPL_PRELOAD_ENV_H
#include "base/number.h"

#include <limits.h>
#include <stdint.h>

/* written by run, read by the interposer before main */
#define NPL_ENV_POLICY "NUMAPLACE_POLICY"         /* a policy string (npl_policy_parse) */
#define NPL_ENV_THRESHOLD "NUMAPLACE_THRESHOLD"   /* bytes: allocations this large are placed */
#define NPL_ENV_FIRST "NUMAPLACE_FIRST"           /* count: only the first N large allocations */
#define NPL_ENV_HUGE "NUMAPLACE_HUGE"             /* "thp" or "2M" */
#define NPL_ENV_PIN "NUMAPLACE_PIN"               /* a pin strategy (npl_pin_order) */
#define NPL_ENV_NEXT_TOUCH "NUMAPLACE_NEXT_TOUCH" /* "0" off, "1" on, or the chunk size */
#define NPL_ENV_VERBOSE "NUMAPLACE_VERBOSE"       /* "1": text lines, "json": JSON lines */
/* read by run: where the interposer is (default: beside the binary) */
#define NPL_ENV_PRELOAD "NUMAPLACE_PRELOAD"
/* read by the library on both sides: debug lines on stderr */
#define NPL_ENV_DEBUG "NUMAPLACE_DEBUG"

#define NPL_ENV_THRESHOLD_DEFAULT ((uint64_t)1 << 20)
#define NPL_ENV_FIRST_MAX ((uint64_t)LONG_MAX)
#define NPL_ENV_NT_CHUNK_MIN 4096 /* smaller values (but 0) mean "on, the default chunk" */

/* NUMAPLACE_THRESHOLD, --threshold: a size from 1 to NPL__SIZE_MAX bytes */
static inline int npl_env_parse_threshold(const char *s, uint64_t *bytes)
{
    return npl__parse_size(s, 1, NPL__SIZE_MAX, bytes);
}

/* NUMAPLACE_FIRST, --first: a count from 1 to NPL_ENV_FIRST_MAX */
static inline int npl_env_parse_first(const char *s, uint64_t *count)
{
    return npl__parse_count(s, 1, NPL_ENV_FIRST_MAX, count);
}

/* NUMAPLACE_NEXT_TOUCH: 0 (off), or on with *chunk the chunk size in bytes (0: the library's
 * default, for values below NPL_ENV_NT_CHUNK_MIN); a size up to NPL__SIZE_MAX */
static inline int npl_env_parse_next_touch(const char *s, int *on, uint64_t *chunk)
{
    uint64_t v;
    if (npl__parse_size(s, 0, NPL__SIZE_MAX, &v) < 0)
        return -1;
    *on = v != 0;
    *chunk = v >= NPL_ENV_NT_CHUNK_MIN ? v : 0;
    return 0;
}
#endif
