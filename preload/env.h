/* SPDX-License-Identifier: BSD-3-Clause */
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
/* written by numaplace profile (cli/profile.c), read by the interposer (preload/profile.c) */
#define NPL_ENV_PROFILE_SHM "NUMAPLACE_PROFILE_SHM"   /* the raw profile file (struct npl_raw) */
#define NPL_ENV_PROFILE_RATE "NUMAPLACE_PROFILE_RATE" /* count: sampled pages per second */
/* written by run --profile FILE (cli/run.c), read by the interposer (preload/apply.c) and by
 * the library's npl_alloc_auto (src/defaults/auto.c, which names it itself: no preload/ there) */
#define NPL_ENV_PROFILE_APPLY "NUMAPLACE_PROFILE_APPLY" /* the profile's absolute path */
/* "DEV:INO:LIST": the CPUs (a list like 0-3,8) run starts the program of that device and inode
 * on. The interposer of that program takes them as the CPUs the process may use, in place of its
 * load-time snapshot (libgomp binds the initial thread to its first place before that), and
 * removes the variable: children and later programs take their own snapshot. */
#define NPL_ENV_START_CPUS "NUMAPLACE_START_CPUS"
/* read by the interposer only (set by hand): "1" arms next-touch ranges in full where no page can
 * move too (one usable memory node), to exercise the fault path on such a machine */
#define NPL_ENV_NEXT_TOUCH_FULL "NUMAPLACE_NEXT_TOUCH_FULL"
/* read by run: where the interposer is (default: beside the binary) */
#define NPL_ENV_PRELOAD "NUMAPLACE_PRELOAD"
/* read by the library on both sides: debug lines on stderr */
#define NPL_ENV_DEBUG "NUMAPLACE_DEBUG"

#define NPL_ENV_THRESHOLD_DEFAULT ((uint64_t)1 << 20)
#define NPL_ENV_FIRST_MAX ((uint64_t)LONG_MAX)
#define NPL_ENV_NT_CHUNK_MIN 4096 /* smaller values (but 0) mean "on, the default chunk" */
#define NPL_ENV_PROFILE_RATE_MAX 1000000

/* NUMAPLACE_PROFILE_RATE, profile --rate: a count from 1 to NPL_ENV_PROFILE_RATE_MAX */
static inline int npl_env_parse_rate(const char *s, uint64_t *rate)
{
    return npl__parse_count(s, 1, NPL_ENV_PROFILE_RATE_MAX, rate);
}

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

/* NUMAPLACE_START_CPUS: *dev, *ino and *list (pointing into s) */
static inline int npl_env_parse_start_cpus(const char *s, uint64_t *dev, uint64_t *ino,
                                           const char **list)
{
    uint64_t *out[2] = {dev, ino};
    for (int i = 0; i < 2; i++) {
        char num[24];
        size_t l = 0;
        while (s[l] && s[l] != ':')
            l++;
        if (s[l] != ':' || l >= sizeof num)
            return -1;
        for (size_t k = 0; k < l; k++)
            num[k] = s[k];
        num[l] = 0;
        if (npl__parse_count(num, 0, UINT64_MAX, out[i]) < 0)
            return -1;
        s += l + 1;
    }
    *list = s;
    return *s ? 0 : -1;
}
#endif
