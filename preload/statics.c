/* SPDX-License-Identifier: BSD-3-Clause */
/* statics.c - static arrays: the page-aligned inside of the executable's writable PT_LOAD
 * segments (.data, .bss; RELRO excluded), when at least NUMAPLACE_THRESHOLD bytes, is placed under
 * the policy before main (npl_place_range) and registered for next-touch in that mode. */
#define _GNU_SOURCE
#include "sys/sys.h"

#include "preload.h"

#include <link.h>

#include "numaplace/migrate.h"
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
 * npl__preload.threshold bytes: partial first/last pages are shared with other variables (and the heap
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
    if (npl_next_touch_register((void *)s, e - s, npl__preload.nt_chunk) < 0)
        npl__debug("preload: static data %p+%zu not registered for next-touch: %s", (void *)s,
                   (size_t)(e - s), npl_last_error());
    else
        npl__debug("preload: static data %p+%zu registered for next-touch", (void *)s,
                   (size_t)(e - s));
    return 0;
}

void npl__preload_place_static(void)
{
    if (npl__preload_profiling() && !npl__preload_apply_active())
        return; /* profile.c tracks them, symbol by symbol, under the kernel's policy */
    if (npl__preload_apply_active()) { /* symbol by symbol, under the profile's advice */
        npl__preload_apply_statics(npl__preload.threshold, npl__preload.pol, npl__preload.flags);
        return;
    }
    uintptr_t lo[8], hi[8];
    int n = npl__preload_static_ranges(lo, hi, npl__preload.threshold);
    int placing = npl__preload.pol && npl_policy_get_kind(npl__preload.pol) != NPL_FIRST_TOUCH;
    for (int i = 0; i < n; i++) {
        size_t len = hi[i] - lo[i];
        /* base pages, like the library's arrays: a 2 MiB THP (the guest's THP is "always") would
         * take a whole 2 MiB to one node and cannot follow page-granular next-touch chunks */
        if (!(npl__preload.flags & NPL_F_THP))
            madvise((void *)lo[i], len, MADV_NOHUGEPAGE);
        int how = NPL__PLACED_POPULATED;
        /* placing populates every page */
        if (placing && !npl__preload_fits(len, npl__preload.policy))
            how = NPL__PLACED_NOT;
        else if (placing && npl_place_range((void *)lo[i], len, npl__preload.pol, NULL, 0) < 0)
            npl__preload_say("numaplace preload: static data not placed: %s%s\n",
                             npl_last_error(), "");
        else if (placing)
            npl__debug("preload: static data %p+%zu placed", (void *)lo[i], len);
        if (npl__preload.verbose && (placing || npl__preload.next_touch))
            npl__preload_tell_alloc("static data", (void *)lo[i], len, how,
                                    npl__preload.next_touch);
        /* one range per mapping: .data (a private file mapping) and .bss (anonymous) are
         * mappings of different kinds, and next-touch arms one kind of mapping at a time */
        if (npl__preload.next_touch)
            npl__maps_ranges(lo[i], hi[i], register_piece, NULL);
    }
}
