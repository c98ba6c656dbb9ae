/* SPDX-License-Identifier: BSD-3-Clause */
/* deny_numa.h - a kernel or container without the NUMA system calls, as a seccomp profile makes
 * it: mbind, set_mempolicy, get_mempolicy and move_pages (and migrate_pages when asked) fail with
 * `err` (ENOSYS or EPERM) in the calling process from now on. 0, or -1 with errno. */
#ifndef NPL_DENY_NUMA_H
#define NPL_DENY_NUMA_H
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static inline int deny_numa_syscalls(int err, int also_migrate_pages)
{
    /* each JEQ jumps over the rest to the RET ERRNO at the end */
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mbind, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_set_mempolicy, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_get_mempolicy, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_move_pages, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, also_migrate_pages ? SYS_migrate_pages : ~0u, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#endif
