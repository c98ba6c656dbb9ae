/* SPDX-License-Identifier: BSD-3-Clause */
/* io.c - calls that hand the kernel (or libc, from inside) a buffer of the program's, wrapped so
 * that a protected page (a first-touch trap or a sampled page of `numaplace profile`, a chunk armed
 * for next-touch by `run --next-touch` or `run --profile`) is given back before the call and none
 * of the buffer is protected again until it returns, however long it sleeps (poll, recv): the
 * kernel does not fault on PROT_NONE user memory, it returns EFAULT or a short count, which would
 * change what the program sees. The page counts as touched by the calling thread (a read(2) into
 * it: a write; a next-touch chunk comes to its node).
 *
 * The wrappers come from one table, io_calls.def (the exported names too: io_calls.cmake); what
 * cannot be wrapped is in tests/contract/limits.txt (docs/AUTO.md §9, docs/NEXT_TOUCH.md). Each
 * wrapper costs two compares per buffer when no array is tracked near it. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* the wrappers define read etc., not the headers' inline checks */
#include "migration/migration.h"
#include "profile/profile.h"
#include "preload.h"
#include "io.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/aio_abi.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/times.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/xattr.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#undef fread_unlocked /* glibc's macros for constant sizes */
#undef fwrite_unlocked

#define EXPORT __attribute__((visibility("default")))

#define IO(ret, name, fail, params, args, holds) static void *cache_##name;
#define IO_VOID(name, params, args, holds) static void *cache_##name;
#define IO_HAND(name) static void *cache_##name;
#include "io_calls.def"
#undef IO
#undef IO_VOID
#undef IO_HAND

/* resolved in the constructor: a vfork child must not run dlsym (it allocates). libaio's and
 * liburing's names resolve when the program calls them (not loaded: ENOSYS) */
void npl__preload_io_resolve(void)
{
#define IO(ret, name, fail, params, args, holds) npl__preload_next(&cache_##name, #name);
#define IO_VOID(name, params, args, holds) npl__preload_next(&cache_##name, #name);
#define IO_HAND(name)
#include "io_calls.def"
#undef IO
#undef IO_VOID
#undef IO_HAND
    npl__preload_next(&cache_process_vm_readv, "process_vm_readv");
    npl__preload_next(&cache_process_vm_writev, "process_vm_writev");
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

/* The ranges one call holds: collected first (the last slot widens to take in the rest of a long
 * list), then held together and released together. */
#define MAX_HOLDS 16
struct holds {
    int n;
    uintptr_t lo[MAX_HOLDS], hi[MAX_HOLDS];
    int write[MAX_HOLDS], token[MAX_HOLDS];
};

static void add(struct holds *h, const void *p, size_t len, int write)
{
    uintptr_t a = (uintptr_t)p, b = a + len;
    if (!p || !len)
        return;
    if (b < a)
        b = UINTPTR_MAX;
    if (h->n == MAX_HOLDS) {
        int i = MAX_HOLDS - 1;
        h->lo[i] = a < h->lo[i] ? a : h->lo[i];
        h->hi[i] = b > h->hi[i] ? b : h->hi[i];
        h->write[i] |= write;
        return;
    }
    h->lo[h->n] = a;
    h->hi[h->n] = b;
    h->write[h->n++] = write;
}

static size_t bytes_of(size_t size, size_t n)
{
    return size && n > (size_t)-1 / size ? (size_t)-1 : size * n;
}

#define MAX_IOV 1024 /* UIO_MAXIOV: the kernel refuses longer lists (EINVAL) */
static void add_iov(struct holds *h, const struct iovec *v, long n, int write)
{
    if (!v || n <= 0 || n > MAX_IOV)
        return;
    add(h, v, (size_t)n * sizeof *v, 0);
    for (long i = 0; i < n; i++)
        add(h, v[i].iov_base, v[i].iov_len, write);
}

static void add_msg(struct holds *h, const struct msghdr *m, int write)
{
    if (!m)
        return;
    add(h, m->msg_name, m->msg_namelen, write);
    add(h, m->msg_control, m->msg_controllen, write);
    add_iov(h, m->msg_iov, (long)m->msg_iovlen, write);
}

static void take(struct holds *h)
{
    for (int i = 0; i < h->n; i++)
        h->token[i] = prep((const void *)h->lo[i], h->hi[i] - h->lo[i], h->write[i]);
}

static void give(const struct holds *h)
{
    for (int i = 0; i < h->n; i++)
        done(h->token[i]);
}

/* the table's hold kinds */
#define B(p, n, w) add(&h, (p), (n), (w));
#define S(p, w) add(&h, (p), sizeof *(p), (w));
#define L(p, lenp, w)                                                                              \
    add(&h, (lenp), sizeof *(lenp), 1);                                                            \
    if (lenp)                                                                                      \
        add(&h, (p), *(lenp), (w));
#define V(v, n, w) add_iov(&h, (v), (n), (w));
#define M(m, w)                                                                                    \
    add(&h, (m), sizeof *(m), 1);                                                                  \
    add_msg(&h, (m), (w));
#define MM(v, n, w)                                                                                \
    add(&h, (v), bytes_of((n), sizeof *(v)), 1);                                                   \
    for (unsigned i_ = 0; (v) && i_ < (n) && i_ < MAX_IOV; i_++)                                   \
        add_msg(&h, &(v)[i_].msg_hdr, (w));
#define FD(set) add(&h, (set), sizeof(fd_set), 1);

#define REAL(name, fn_t, fail)                                                                     \
    fn_t real = (fn_t)npl__preload_next(&cache_##name, #name);                                     \
    if (!real) {                                                                                   \
        errno = ENOSYS;                                                                            \
        return fail;                                                                               \
    }

#define IO(ret, name, fail, params, args, hs)                                                      \
    EXPORT ret name params;                                                                        \
    EXPORT ret name params                                                                         \
    {                                                                                              \
        typedef ret(*fn_t) params;                                                                 \
        REAL(name, fn_t, fail)                                                                     \
        struct holds h;                                                                            \
        h.n = 0;                                                                                   \
        hs take(&h);                                                                               \
        ret ret_ = real args;                                                                      \
        give(&h);                                                                                  \
        return ret_;                                                                               \
    }
#define IO_VOID(name, params, args, hs)                                                            \
    EXPORT void name params;                                                                       \
    EXPORT void name params                                                                        \
    {                                                                                              \
        typedef void(*fn_t) params;                                                                \
        REAL(name, fn_t, )                                                                         \
        struct holds h;                                                                            \
        h.n = 0;                                                                                   \
        hs take(&h);                                                                               \
        real args;                                                                                 \
        give(&h);                                                                                  \
    }
#define IO_HAND(name)
#include "io_calls.def"
#undef IO
#undef IO_VOID
#undef IO_HAND

/* ---- by hand ---- */

/* one line under --verbose, once per kind: what numaplace cannot hold */
static void tell_once(int *told, const char *what)
{
    if (npl__preload.verbose && !__atomic_exchange_n(told, 1, __ATOMIC_RELAXED))
        npl__preload_say("numaplace: %s%s\n", what, "");
}

/* process_vm_readv/writev (an MPI library's single copy): this process's side of the copy, and
 * the "remote" side too when the remote process is this one. Another process's memory is that
 * process's business: its protected pages give EFAULT or a short copy (a limit, said once). */
typedef ssize_t (*pvm_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                          unsigned long, unsigned long);

static ssize_t vm_copy(pvm_fn real, int into_local, pid_t pid, const struct iovec *local,
                       unsigned long nl, const struct iovec *remote, unsigned long nr,
                       unsigned long flags)
{
    static int told;
    struct holds h;
    h.n = 0;
    add_iov(&h, local, nl > MAX_IOV ? -1 : (long)nl, into_local);
    if (pid == getpid())
        add_iov(&h, remote, nr > MAX_IOV ? -1 : (long)nr, !into_local);
    else if (npl__preload_profiling() || npl__preload_next_touch())
        tell_once(&told, "process_vm_readv/writev with another process: its pages protected by "
                         "its own numaplace copy short (not held from here)");
    take(&h);
    ssize_t r = real(pid, local, nl, remote, nr, flags);
    give(&h);
    return r;
}

EXPORT ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nl,
                                const struct iovec *remote, unsigned long nr, unsigned long flags)
{
    REAL(process_vm_readv, pvm_fn, -1)
    return vm_copy(real, 1, pid, local, nl, remote, nr, flags);
}

EXPORT ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long nl,
                                 const struct iovec *remote, unsigned long nr, unsigned long flags)
{
    REAL(process_vm_writev, pvm_fn, -1)
    return vm_copy(real, 0, pid, local, nl, remote, nr, flags);
}

/* libaio (not glibc): the kernel reads or writes an iocb's buffer after io_submit returns, so
 * its hold lasts until io_getevents reaps that iocb. A table of the pending ones; a submit
 * beyond it holds its buffers for good (never protected again). struct iocb is the kernel's
 * (linux/aio_abi.h), which is libaio's layout. */
#define AIO_PENDING 256
static struct {
    const void *iocb;
    struct holds h;
} aio_pending[AIO_PENDING];
static pthread_mutex_t aio_lock = PTHREAD_MUTEX_INITIALIZER;

static void aio_hold(const struct iocb *cb)
{
    struct holds h;
    h.n = 0;
    int w = cb->aio_lio_opcode == IOCB_CMD_PREAD || cb->aio_lio_opcode == IOCB_CMD_PREADV;
    if (cb->aio_lio_opcode == IOCB_CMD_PREAD || cb->aio_lio_opcode == IOCB_CMD_PWRITE)
        add(&h, (const void *)(uintptr_t)cb->aio_buf, cb->aio_nbytes, w);
    else if (cb->aio_lio_opcode == IOCB_CMD_PREADV || cb->aio_lio_opcode == IOCB_CMD_PWRITEV)
        add_iov(&h, (const struct iovec *)(uintptr_t)cb->aio_buf, (long)cb->aio_nbytes, w);
    if (!h.n)
        return;
    take(&h);
    pthread_mutex_lock(&aio_lock);
    for (int i = 0; i < AIO_PENDING; i++)
        if (!aio_pending[i].iocb) {
            aio_pending[i].iocb = cb;
            aio_pending[i].h = h;
            break;
        }
    pthread_mutex_unlock(&aio_lock);
}

static void aio_release(const void *cb)
{
    pthread_mutex_lock(&aio_lock);
    for (int i = 0; i < AIO_PENDING; i++)
        if (aio_pending[i].iocb == cb) {
            give(&aio_pending[i].h);
            aio_pending[i].iocb = NULL;
            break;
        }
    pthread_mutex_unlock(&aio_lock);
}

typedef int (*aio_submit_fn)(aio_context_t, long, struct iocb **);
EXPORT int io_submit(aio_context_t ctx, long n, struct iocb **cbs);
EXPORT int io_submit(aio_context_t ctx, long n, struct iocb **cbs)
{
    REAL(io_submit, aio_submit_fn, -ENOSYS)
    for (long i = 0; cbs && i < n; i++)
        if (cbs[i])
            aio_hold(cbs[i]);
    int r = real(ctx, n, cbs);
    for (long i = r < 0 ? 0 : r; cbs && i < n; i++) /* not submitted: released now */
        if (cbs[i])
            aio_release(cbs[i]);
    return r;
}

typedef int (*aio_events_fn)(aio_context_t, long, long, struct io_event *, struct timespec *);
EXPORT int io_getevents(aio_context_t ctx, long min, long n, struct io_event *ev,
                        struct timespec *t);
EXPORT int io_getevents(aio_context_t ctx, long min, long n, struct io_event *ev,
                        struct timespec *t)
{
    REAL(io_getevents, aio_events_fn, -ENOSYS)
    struct holds h;
    h.n = 0;
    add(&h, ev, n > 0 ? bytes_of((size_t)n, sizeof *ev) : 0, 1);
    take(&h);
    int r = real(ctx, min, n, ev, t);
    give(&h);
    for (int i = 0; i < r; i++)
        aio_release((const void *)(uintptr_t)ev[i].obj);
    return r;
}

/* liburing: the ring's requests are read by the kernel whenever it runs them, out of sight; the
 * buffers a program registers are held for good (never protected again), and the setup says so
 * once under --verbose */
static int uring_told;
static const char uring_note[] = "io_uring: only registered buffers are held (never protected "
                                 "again); other buffers a request names may get -EFAULT";

typedef int (*uring_reg_fn)(void *, const struct iovec *, unsigned);
EXPORT int io_uring_register_buffers(void *ring, const struct iovec *v, unsigned n);
EXPORT int io_uring_register_buffers(void *ring, const struct iovec *v, unsigned n)
{
    REAL(io_uring_register_buffers, uring_reg_fn, -ENOSYS)
    struct holds h;
    h.n = 0;
    add_iov(&h, v, n > MAX_IOV ? -1 : (long)n, 1);
    take(&h); /* never given back */
    tell_once(&uring_told, uring_note);
    return real(ring, v, n);
}

typedef int (*uring_init_fn)(unsigned, void *, unsigned);
EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags);
EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags)
{
    REAL(io_uring_queue_init, uring_init_fn, -ENOSYS)
    tell_once(&uring_told, uring_note);
    return real(entries, ring, flags);
}

typedef int (*uring_init_params_fn)(unsigned, void *, void *);
EXPORT int io_uring_queue_init_params(unsigned entries, void *ring, void *p);
EXPORT int io_uring_queue_init_params(unsigned entries, void *ring, void *p)
{
    REAL(io_uring_queue_init_params, uring_init_params_fn, -ENOSYS)
    tell_once(&uring_told, uring_note);
    return real(entries, ring, p);
}
