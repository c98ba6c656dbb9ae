/* SPDX-License-Identifier: BSD-3-Clause */
/* sites.h - allocation sites a human can read, and profiles that survive a rebuild (sites.c).
 * With libdw (elfutils) a heap site is named by its function and file:line from the program's
 * DWARF; without it, or where the object has no line table, by its function (symbol) only. */
#ifndef NPL_CLI_SITES_H
#define NPL_CLI_SITES_H
#include "profile/profile.h"

/* Fill each heap site's "where" ("file.c:42"), "symbol" (the calling function) and "line_offset"
 * from its object on disk (numaplace profile, while the program that ran is there). The count of
 * sites named; never fails. */
int sites_name(struct npl_profile *p);
/* A profile of a program since rebuilt (path, its new build-id): each site of that program is
 * found again in the new binary, a heap site by its function, file:line and its offset in that
 * line's code, a static array by its symbol, and gets the new offset and build-id; the program's
 * build-id becomes the new one. *found and *total count the arrays; the others keep the old
 * build-id and so match nothing (the default applies to them). 0, or -1: nothing can be found
 * (no libdw, or the program cannot be read), why in err. */
int sites_rematch(struct npl_profile *p, const char *path, const char *build_id,
                  uint32_t *found, uint32_t *total, char *err, size_t errsz);
/* After run_check_profile (run_profile.c) found a rebuilt program's sites again: the profile so
 * matched, as the path the interposer reads (/proc/self/fd/N), else NULL. */
const char *run_profile_apply_path(void);
#endif
