/* SPDX-License-Identifier: BSD-3-Clause */
/* ground.c - what every part of libnumaplace_preload.so stands on (preload.h): the configuration
 * the constructor reads once (init.c), the messages, the re-entry guard (the calling thread is
 * inside numaplace: its allocations and threads are not intercepted) and the block allocator
 * (a placed block, lazily or populated when it fits the memory left: limits.c). It calls nothing
 * of preload/ but limits.c; the files that interpose (alloc.c's malloc, init.c's constructor,
 * apply.c, profile.c, io.c...) stand on it (scripts/check_layers.py). */
#define _GNU_SOURCE
#include "base/base.h"
#include "arrays/arrays.h"

#include "env.h"
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

_Thread_local __attribute__((tls_model("initial-exec"))) int npl__preload_in_lib;
void npl__preload_enter(void) { npl__preload_in_lib++; }
void npl__preload_leave(void) { npl__preload_in_lib--; }
int npl__preload_inside(void) { return npl__preload_in_lib > 0; }

/* ---- configuration (read once, in the constructor) ---- */
struct npl__preload_cfg npl__preload = {0, NULL, NPL_ENV_THRESHOLD_DEFAULT, 0, 0, NULL, 0,
                                        "first_touch", 0, 0};
int npl__preload_next_touch(void) { return npl__preload.next_touch; }
/* Our lines go to fd 2 only while it is still the stderr the program started with: a program
 * that closes its descriptors and opens files may get fd 2 for one of its own outputs, which
 * must not receive our lines (nor must a program started with fd 2 closed). */
static struct { int ok; dev_t dev; ino_t ino; } err_fd;
void npl__preload_remember_stderr(void)
{
    struct stat st;
    err_fd.ok = fstat(2, &st) == 0;
    err_fd.dev = err_fd.ok ? st.st_dev : 0;
    err_fd.ino = err_fd.ok ? st.st_ino : 0;
}
static void to_stderr(const char *buf, int n, size_t size)
{
    struct stat st;
    if (n <= 0 || !err_fd.ok || fstat(2, &st) < 0 || st.st_dev != err_fd.dev ||
        st.st_ino != err_fd.ino)
        return;
    if (write(2, buf, (size_t)n < size ? (size_t)n : size - 1) < 0)
        return;
}

void npl__preload_say(const char *fmt, const char *a, const char *b)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, fmt, a, b);
    if (npl__preload.verbose != 2 || n <= 0 || buf[0] == '{') {
        to_stderr(buf, n, sizeof buf);
        return;
    }
    /* run --json: every line on stderr is JSON; a message is {"event": "message", "text": ...}
     * (its text JSON-escaped, its newline dropped; no allocation: this runs inside malloc) */
    char out[sizeof buf * 6 + 48];
    size_t k = (size_t)snprintf(out, sizeof out, "{\"event\": \"message\", \"text\": \"");
    for (const unsigned char *c = (const unsigned char *)buf; *c && k + 8 < sizeof out; c++) {
        if (*c == '\n' && !c[1])
            break;
        if (*c == '"' || *c == '\\')
            k += (size_t)snprintf(out + k, sizeof out - k, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            k += (size_t)snprintf(out + k, sizeof out - k, "\\u%04x", *c);
        else
            out[k++] = (char)*c;
    }
    k += (size_t)snprintf(out + k, sizeof out - k, "\"}\n");
    to_stderr(out, (int)k, sizeof out);
}

/* numaplace run --verbose / --json: one line per large allocation on stderr (no allocation:
 * this runs inside malloc) */
void npl__preload_tell_alloc(const char *what, const void *p, size_t n, int how, int nt)
{
    static const char *const hows[] = {"", "",
                                       " (lazily: each page goes to its node when first touched)",
                                       " where the program's allocator put it"};
    static const char *const json_hows[] = {"none", "populated", "lazy", "in_place"};
    char buf[640];
    int len;
    if (how < NPL__PLACED_NOT || how > NPL__PLACED_IN_PLACE)
        how = NPL__PLACED_NOT;
    if (npl__preload.verbose == 2)
        len = snprintf(buf, sizeof buf, "{\"event\": \"%s\", \"address\": \"%p\", "
                       "\"size_bytes\": %zu, \"placed\": %s, \"how\": \"%s\", \"policy\": "
                       "\"%s\", \"next_touch\": %s}\n", what, p, n, how ? "true" : "false",
                       json_hows[how], npl__preload.policy, nt ? "true" : "false");
    else if (how)
        len = snprintf(buf, sizeof buf, "numaplace run: %s %p, %zu bytes: placed under %s%s%s\n",
                       what, p, n, npl__preload.policy, hows[how],
                       nt ? ", armed for next-touch" : "");
    else
        len = snprintf(buf, sizeof buf, "numaplace run: %s of %zu bytes not placed (%s): the "
                       "system allocator serves it\n", what, n, npl_last_error());
    to_stderr(buf, len, sizeof buf);
}


/* A placement that populates every page takes memory at once, where the next allocator would
 * take only the pages the program touches: it must fit what this process may still use, with
 * an eighth of that left over. 0 (and the reason in npl_last_error) when it does not. */
int npl__preload_fits(size_t n, const char *policy)
{
    const char *source;
    size_t room = npl__preload_memory_room(&source);
    if (room != SIZE_MAX && n > room - room / 8) {
        npl__fail(ENOMEM, "larger than the memory available to this process now (%s leaves %zu "
                  "bytes) and %s populates every page", source, room, policy);
        return 0;
    }
    return 1;
}

void *npl__preload_alloc_block(size_t n, size_t align, const npl_plan *plan, unsigned flags,
                               int lazy_ok, const char *what, int *how)
{
    npl_shape sh = {1, 1, {n, 0, 0}, NPL_ROW_MAJOR};
    void *p = NULL;
    if (lazy_ok) {
        p = npl__alloc_planned_ex(&sh, plan, flags | NPL__F_LAZY, align);
        *how = NPL__PLACED_LAZY;
    } else {
        errno = EOPNOTSUPP;
    }
    if (!p && errno == EOPNOTSUPP) { /* its map needs populated pages */
        *how = NPL__PLACED_POPULATED;
        if (plan->kind == NPL_FIRST_TOUCH || npl__preload_fits(n, what))
            p = npl__alloc_planned_ex(&sh, plan, flags, align);
        else
            *how = NPL__PLACED_NOT;
    }
    return p;
}

/* the next definition of name (dlsym RTLD_NEXT), cached in *cache: the one lookup of the C
 * library's functions that io.c and protect.c wrap */
void *npl__preload_next(void **cache, const char *name)
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
