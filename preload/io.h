/* SPDX-License-Identifier: BSD-3-Clause */
/* io.h - the wrapped calls (preload/io.c) and the program's own protections (preload/protect.c) */
#ifndef NPL_PRELOAD_IO_H
#define NPL_PRELOAD_IO_H
/* the next mprotect, mmap... (in the constructor: a vfork child must not run dlsym) */
void npl__preload_protect_resolve(void);
#endif
