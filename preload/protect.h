/* protect.h - the program's own protections (preload/protect.c; src/base/protect.h) */
#ifndef NPL_PRELOAD_PROTECT_H
#define NPL_PRELOAD_PROTECT_H
/* the next mprotect, mmap... and this object's own range (before a vfork child runs) */
void npl__preload_protect_resolve(void);
#endif
