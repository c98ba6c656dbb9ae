/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_alloc.c - libnumaplace_mai: MAi's array layouts (pure), the array registry, allocation and
 * pointer helpers. */
#define _GNU_SOURCE
#include "mai_internal.h"

#include <numaplace/migrate.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int mul_ok(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

int mai__layout(int ndim, const long *dims, size_t item, int type, size_t page, size_t *ptr_bytes,
                size_t *map_bytes)
{
    size_t n = 1, ptrs = 0, data, x;
    if (ndim < 1 || ndim > 3 || !item || type < CHAR || type > STRUCT || !page)
        return mai__fail(EINVAL);
    for (int d = 0; d < ndim; d++) {
        if (dims[d] <= 0)
            return mai__fail(EINVAL);
        if (!mul_ok(n, (size_t)dims[d], &n))
            return mai__fail(EOVERFLOW);
    }
    if (!mul_ok(n, item, &data))
        return mai__fail(EOVERFLOW);
    if (ndim >= 2)
        ptrs = (size_t)dims[0];
    if (ndim == 3) {
        if (!mul_ok((size_t)dims[0], (size_t)dims[1], &x) || x > SIZE_MAX - ptrs)
            return mai__fail(EOVERFLOW);
        ptrs += x;
    }
    if (!mul_ok(ptrs, sizeof(void *), &ptrs) || ptrs > SIZE_MAX - page)
        return mai__fail(EOVERFLOW);
    ptrs = (ptrs + page - 1) / page * page;
    if (data > SIZE_MAX - page - ptrs || data > (size_t)PTRDIFF_MAX)
        return mai__fail(EOVERFLOW);
    *ptr_bytes = ptrs;
    *map_bytes = ptrs + (data + page - 1) / page * page;
    return 0;
}

void mai__fill_pointers(char *base, int ndim, const size_t *dims, size_t item, char *data)
{
    if (ndim == 2) {
        char **rows = (char **)base;
        for (size_t i = 0; i < dims[0]; i++)
            rows[i] = data + i * dims[1] * item;
    } else if (ndim == 3) {
        char ***planes = (char ***)base;
        char **rows = (char **)(base + dims[0] * sizeof(void *));
        for (size_t i = 0; i < dims[0]; i++) {
            planes[i] = rows + i * dims[1];
            for (size_t j = 0; j < dims[1]; j++)
                rows[i * dims[1] + j] = data + (i * dims[1] + j) * dims[2] * item;
        }
    }
}

struct mai_array *mai__find(const void *p)
{
    for (struct mai_array *a = mai__st.arrays; a; a = a->next)
        if (a->base == (const char *)p)
            return a;
    return NULL;
}

struct mai_array *mai__find_inside(const void *p)
{
    for (struct mai_array *a = mai__st.arrays; a; a = a->next)
        if ((const char *)p >= a->base && (const char *)p < a->base + a->map_bytes)
            return a;
    return NULL;
}

static void *alloc_nd(int ndim, const long *dims, size_t item, int type)
{
    size_t page = mai__page_size(), ptrs = 0, map = 0;
    if (!mai__st.inited) {
        mai__fail(EPERM);
        return NULL;
    }
    if (mai__layout(ndim, dims, item, type, page, &ptrs, &map) < 0)
        return NULL;
    struct mai_array *a = calloc(1, sizeof *a);
    if (!a) {
        mai__fail(ENOMEM);
        return NULL;
    }
    char *base = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        free(a);
        mai__fail(ENOMEM);
        return NULL;
    }
    a->base = base;
    a->map_bytes = map;
    a->data = base + ptrs;
    a->ndim = ndim;
    a->item = item;
    a->type = type;
    a->policy = -1;
    a->data_bytes = item;
    for (int d = 0; d < ndim; d++) {
        a->dims[d] = (size_t)dims[d];
        a->data_bytes *= a->dims[d];
    }
    a->nodes1[0] = -1;
    mai__fill_pointers(base, ndim, a->dims, item, a->data);
    pthread_mutex_lock(&mai__lock);
    a->next = mai__st.arrays;
    mai__st.arrays = a;
    mai__st.alloc.used_size += map;
    mai__st.alloc.nmmaps++;
    mai__st.alloc.block_h += sizeof *a;
    mai__st.alloc.npinfo += (int)(map / page);
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
    return base;
}

void *mai_alloc_1D(int nx, size_t size_item, int type)
{
    long d[1] = {nx};
    return alloc_nd(1, d, size_item, type);
}

void *mai_alloc_2D(int nx, int ny, size_t size_item, int type)
{
    long d[2] = {nx, ny};
    return alloc_nd(2, d, size_item, type);
}

void *mai_alloc_3D(int nx, int ny, int nz, size_t size_item, int type)
{
    long d[3] = {nx, ny, nz};
    return alloc_nd(3, d, size_item, type);
}

void mai_free_array(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&mai__lock);
    struct mai_array **link = &mai__st.arrays;
    while (*link && (*link)->base != (char *)p)
        link = &(*link)->next;
    struct mai_array *a = *link;
    if (!a) {
        pthread_mutex_unlock(&mai__lock);
        mai__fail(ENOENT);
        return;
    }
    *link = a->next;
    mai__st.alloc.used_size -= a->map_bytes;
    mai__st.alloc.nmmaps--;
    mai__st.alloc.block_h -= sizeof *a;
    mai__st.alloc.npinfo -= (int)(a->map_bytes / mai__page_size());
    pthread_mutex_unlock(&mai__lock);
    npl_next_touch_disarm(a->data);
    munmap(a->base, a->map_bytes);
    free(a);
    mai__ok();
}

mai_stats mai_allocinfo(void)
{
    pthread_mutex_lock(&mai__lock);
    mai_stats s = mai__st.alloc;
    pthread_mutex_unlock(&mai__lock);
    return s;
}

size_t mai_getsize(void *ph)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(ph);
    size_t n = a ? a->data_bytes : 0;
    pthread_mutex_unlock(&mai__lock);
    if (!a)
        mai__fail(ENOENT);
    return n;
}

void *mai_get_realpointer(void *p)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(p);
    void *d = a ? a->data : NULL;
    pthread_mutex_unlock(&mai__lock);
    if (!a)
        mai__fail(ENOENT);
    return d;
}

void *mai_move_pointer(void *p, size_t bytes)
{
    size_t page = mai__page_size();
    if (!p || bytes > SIZE_MAX - page) {
        mai__fail(EINVAL);
        return NULL;
    }
    return (char *)p + (bytes + page - 1) / page * page;
}

void *mai_mv_pointer_rows(void *p, int rows)
{
    size_t page = mai__page_size();
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find_inside(p);
    size_t row = a ? a->data_bytes / a->dims[0] : 0;
    pthread_mutex_unlock(&mai__lock);
    if (!a || rows < 0) {
        mai__fail(a ? EINVAL : ENOENT);
        return NULL;
    }
    return (char *)p + row * (size_t)rows / page * page;
}

void *mai_mv_pointer_cols(void *p, int cols)
{
    (void)p;
    (void)cols;
    mai__fail(ENOSYS);
    return NULL;
}

void *mai_mv_pointer_plans(void *p, int plans)
{
    (void)p;
    (void)plans;
    mai__fail(ENOSYS);
    return NULL;
}
