/* io.c - system calls that read or write the program's memory, wrapped so that a protected page
 * (a first-touch trap or a sampled page of `numaplace profile`, a chunk armed for next-touch by
 * `run --next-touch` or `run --profile`) is given back before the kernel touches it: the kernel
 * does not fault on PROT_NONE user memory, it returns EFAULT or a short count, which would change
 * what the program sees. The page then counts as touched by the calling thread (a read(2) into it:
 * a write; a next-touch chunk comes to its node).
 *
 * Covered: read, pread(64), readv, preadv, write, pwrite(64), writev, pwritev, recv, recvfrom,
 * recvmsg, send, sendto, sendmsg, fread, fwrite (and their _unlocked forms: glibc's fread of a
 * large count reads straight into the caller's buffer, from inside libc), process_vm_readv and
 * process_vm_writev (this process's side). Not covered (docs/AUTO.md):
 * other ways for the kernel or another process to reach the memory (vmsplice, process_vm_readv
 * from an MPI peer, io_uring, AIO). Each wrapper costs two compares when no array is tracked
 * near the buffer. */
#define _GNU_SOURCE
#include "migration/migration.h"
#include "profile/profile.h"
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#undef fread_unlocked /* glibc's macros for constant sizes */
#undef fwrite_unlocked

#define EXPORT __attribute__((visibility("default")))

static void *next(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        npl__preload_enter();
        f = dlsym(RTLD_NEXT, name);
        npl__preload_leave();
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

#define REAL(type, name, fail)                                                                     \
    type real = (type)next(&cache_##name, #name);                                                  \
    if (!real) {                                                                                   \
        errno = ENOSYS;                                                                            \
        return fail;                                                                               \
    }

static void *cache_read, *cache_write, *cache_pread, *cache_pread64, *cache_pwrite, *cache_pwrite64, *cache_readv, *cache_writev, *cache_preadv, *cache_pwritev, *cache_recv, *cache_recvfrom, *cache_send, *cache_sendto, *cache_recvmsg, *cache_sendmsg, *cache_fread, *cache_fwrite, *cache_fread_unlocked, *cache_fwrite_unlocked,
    *cache_process_vm_readv, *cache_process_vm_writev;

/* resolved in the constructor: a vfork child must not run dlsym (it allocates) */
void npl__preload_io_resolve(void)
{
    next(&cache_read, "read");
    next(&cache_write, "write");
    next(&cache_pread, "pread");
    next(&cache_pread64, "pread64");
    next(&cache_pwrite, "pwrite");
    next(&cache_pwrite64, "pwrite64");
    next(&cache_readv, "readv");
    next(&cache_writev, "writev");
    next(&cache_preadv, "preadv");
    next(&cache_pwritev, "pwritev");
    next(&cache_recv, "recv");
    next(&cache_recvfrom, "recvfrom");
    next(&cache_send, "send");
    next(&cache_sendto, "sendto");
    next(&cache_recvmsg, "recvmsg");
    next(&cache_sendmsg, "sendmsg");
    next(&cache_fread, "fread");
    next(&cache_fwrite, "fwrite");
    next(&cache_fread_unlocked, "fread_unlocked");
    next(&cache_fwrite_unlocked, "fwrite_unlocked");
    next(&cache_process_vm_readv, "process_vm_readv");
    next(&cache_process_vm_writev, "process_vm_writev");
}

/* The kernel writes into buf (write = 1) or reads it (0): the sampler's protected pages there are
 * given back and its next-touch chunks resolved, and neither protects any of it until done(the
 * token) after the call. A token: the sampler's (bits 0-15) and next-touch's (bits 16-30), each
 * plus one; 0: neither holds anything. */
static int prep(const void *buf, size_t len, int write)
{
    int s = npl__preload_profiling() ? npl__sampler_prepare(buf, len, write) : -1;
    int n = npl__next_touch_hold(buf, len);
    return (s + 1) | (n + 1) << 16;
}

static void done(int token)
{
    if (token) {
        int e = errno;
        if (token & 0xffff)
            npl__sampler_done((token & 0xffff) - 1);
        if (token >> 16)
            npl__next_touch_release((token >> 16) - 1);
        errno = e;
    }
}

#define MAX_IOV 8
struct iov_tokens {
    int t[MAX_IOV];
    int n;
};
static void prep_iov(const struct iovec *iov, int n, int write, struct iov_tokens *tk)
{
    tk->n = 0;
    if (!iov)
        return;
    for (int i = 0; i < n && tk->n < MAX_IOV; i++)
        tk->t[tk->n++] = prep(iov[i].iov_base, iov[i].iov_len, write);
    if (n > MAX_IOV) { /* more pieces: the span from the lowest to the highest of the rest */
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (int i = MAX_IOV - 1; i < n; i++) {
            uintptr_t a = (uintptr_t)iov[i].iov_base, b = a + iov[i].iov_len;
            if (iov[i].iov_len && b > a) {
                lo = a < lo ? a : lo;
                hi = b > hi ? b : hi;
            }
        }
        int whole = hi > lo ? prep((const void *)lo, hi - lo, write) : 0;
        done(tk->t[tk->n - 1]); /* that piece is inside the span: its own token goes */
        tk->t[tk->n - 1] = whole;
    }
}

static void done_iov(const struct iov_tokens *tk)
{
    for (int i = 0; i < tk->n; i++)
        done(tk->t[i]);
}

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef ssize_t (*iov_fn)(int, const struct iovec *, int);
typedef ssize_t (*piov_fn)(int, const struct iovec *, int, off_t);

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    REAL(rw_fn, read, -1)
    int tk = prep(buf, n, 1);
    ssize_t r = real(fd, buf, n);
    done(tk);
    return r;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(rw_fn, write, -1)
    int tk = prep(buf, n, 0);
    ssize_t r = real(fd, (void *)buf, n);
    done(tk);
    return r;
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    REAL(prw_fn, pread, -1)
    int tk = prep(buf, n, 1);
    ssize_t r = real(fd, buf, n, off);
    done(tk);
    return r;
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    REAL(prw_fn, pread64, -1)
    int tk = prep(buf, n, 1);
    ssize_t r = real(fd, buf, n, off);
    done(tk);
    return r;
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(prw_fn, pwrite, -1)
    int tk = prep(buf, n, 0);
    ssize_t r = real(fd, (void *)buf, n, off);
    done(tk);
    return r;
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    REAL(prw_fn, pwrite64, -1)
    int tk = prep(buf, n, 0);
    ssize_t r = real(fd, (void *)buf, n, off);
    done(tk);
    return r;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
    REAL(iov_fn, readv, -1)
    struct iov_tokens tk;
    prep_iov(iov, n, 1, &tk);
    ssize_t r = real(fd, iov, n);
    done_iov(&tk);
    return r;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
    REAL(iov_fn, writev, -1)
    struct iov_tokens tk;
    prep_iov(iov, n, 0, &tk);
    ssize_t r = real(fd, iov, n);
    done_iov(&tk);
    return r;
}

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
    REAL(piov_fn, preadv, -1)
    struct iov_tokens tk;
    prep_iov(iov, n, 1, &tk);
    ssize_t r = real(fd, iov, n, off);
    done_iov(&tk);
    return r;
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    REAL(piov_fn, pwritev, -1)
    struct iov_tokens tk;
    prep_iov(iov, n, 0, &tk);
    ssize_t r = real(fd, iov, n, off);
    done_iov(&tk);
    return r;
}

typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*msg_fn)(int, struct msghdr *, int);

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    REAL(recv_fn, recv, -1)
    int tk = prep(buf, n, 1);
    ssize_t r = real(fd, buf, n, flags);
    done(tk);
    return r;
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
                        socklen_t *len)
{
    REAL(recvfrom_fn, recvfrom, -1)
    int tk = prep(buf, n, 1);
    ssize_t r = real(fd, buf, n, flags, from, len);
    done(tk);
    return r;
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    REAL(recv_fn, send, -1)
    int tk = prep(buf, n, 0);
    ssize_t r = real(fd, (void *)buf, n, flags);
    done(tk);
    return r;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
                      socklen_t len)
{
    REAL(sendto_fn, sendto, -1)
    int tk = prep(buf, n, 0);
    ssize_t r = real(fd, buf, n, flags, to, len);
    done(tk);
    return r;
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    REAL(msg_fn, recvmsg, -1)
    struct iov_tokens tk = {{0}, 0};
    if (m)
        prep_iov(m->msg_iov, (int)m->msg_iovlen, 1, &tk);
    ssize_t r = real(fd, m, flags);
    done_iov(&tk);
    return r;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    REAL(msg_fn, sendmsg, -1)
    struct iov_tokens tk = {{0}, 0};
    if (m)
        prep_iov(m->msg_iov, (int)m->msg_iovlen, 0, &tk);
    ssize_t r = real(fd, (struct msghdr *)m, flags);
    done_iov(&tk);
    return r;
}

typedef size_t (*fio_fn)(void *, size_t, size_t, FILE *);

static size_t bytes_of(size_t size, size_t n) { return size && n > (size_t)-1 / size ? (size_t)-1 : size * n; }

EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    REAL(fio_fn, fread, 0)
    int tk = prep(buf, bytes_of(size, n), 1);
    size_t r = real(buf, size, n, f);
    done(tk);
    return r;
}

EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    REAL(fio_fn, fwrite, 0)
    int tk = prep(buf, bytes_of(size, n), 0);
    size_t r = real((void *)buf, size, n, f);
    done(tk);
    return r;
}

EXPORT size_t fread_unlocked(void *buf, size_t size, size_t n, FILE *f)
{
    REAL(fio_fn, fread_unlocked, 0)
    int tk = prep(buf, bytes_of(size, n), 1);
    size_t r = real(buf, size, n, f);
    done(tk);
    return r;
}

EXPORT size_t fwrite_unlocked(const void *buf, size_t size, size_t n, FILE *f)
{
    REAL(fio_fn, fwrite_unlocked, 0)
    int tk = prep(buf, bytes_of(size, n), 0);
    size_t r = real((void *)buf, size, n, f);
    done(tk);
    return r;
}

/* process_vm_readv/writev (an MPI library's single-copy transfers): this process's side of the
 * copy, and the "remote" side too when the remote process is this one; another process's memory
 * is that process's interposer's business (its own armed pages there still give EFAULT) */
typedef ssize_t (*pvm_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                          unsigned long, unsigned long);

static ssize_t vm_copy(pvm_fn real, int into_local, pid_t pid, const struct iovec *local,
                       unsigned long nl, const struct iovec *remote, unsigned long nr,
                       unsigned long flags)
{
    struct iov_tokens tl, tr = {{0}, 0};
    prep_iov(local, nl > 1024 ? 1024 : (int)nl, into_local, &tl);
    if (pid == getpid())
        prep_iov(remote, nr > 1024 ? 1024 : (int)nr, !into_local, &tr);
    ssize_t r = real(pid, local, nl, remote, nr, flags);
    done_iov(&tl);
    done_iov(&tr);
    return r;
}

EXPORT ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nl,
                                const struct iovec *remote, unsigned long nr, unsigned long flags)
{
    REAL(pvm_fn, process_vm_readv, -1)
    return vm_copy(real, 1, pid, local, nl, remote, nr, flags);
}

EXPORT ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long nl,
                                 const struct iovec *remote, unsigned long nr, unsigned long flags)
{
    REAL(pvm_fn, process_vm_writev, -1)
    return vm_copy(real, 0, pid, local, nl, remote, nr, flags);
}
