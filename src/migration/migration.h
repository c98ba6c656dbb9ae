/* migration/migration.h - moving pages after placement (not installed): explicit migration of
 * ranges (migrate.c; the moving is the engine's pass, place/) and user-space
 * migrate-on-next-touch (nexttouch.c). Below it: query/, place/, plan/, topology/, sys/, base/. The array forms live in
 * arrays/. */
#ifndef NPL_MIGRATION_H
#define NPL_MIGRATION_H

#include "place/place.h"
#include "numaplace/migrate.h"

/* Partial work is an error: 0, or -1 with the errno of the first page that could not move. */
int npl__migrate_verdict(const struct npl_migrate_result *res);

/* Forget every next-touch range overlapping [addr, addr+len) without touching the memory's
 * protection: for memory about to be unmapped (npl_free). Never fails, never sets an error. */
void npl__next_touch_forget(void *addr, size_t len);
/* Disarm the range that starts at addr if there is one: 1 if it was armed or registered (its
 * protection restored), 0 if not. No error message, errno unchanged: for frees. */
int npl__next_touch_disarm_quiet(void *addr);

#endif
