/* nexttouch.h - next-touch entry points for the rest of the library (internal, not installed). */
#ifndef NPL_NEXTTOUCH_H
#define NPL_NEXTTOUCH_H

#include <stddef.h>

/* Forget every next-touch range overlapping [addr, addr+len) without touching the memory's
 * protection: for memory about to be unmapped (npl_free). Never fails, never sets an error. */
void npl__next_touch_forget(void *addr, size_t len);
/* Disarm the range that starts at addr if there is one: 1 if it was armed or registered (its
 * protection restored), 0 if not. No error message, errno unchanged: for frees. */
int npl__next_touch_disarm_quiet(void *addr);

#endif
