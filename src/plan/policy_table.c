/* SPDX-License-Identifier: BSD-3-Clause */
/* policy_table.c - PURE: the policies, one row each. A row holds what every other layer asks of
 * a kind: its name (the string syntax), which parameters it takes (the parser and the
 * formatter read its flags), its page -> node map, its kernel equivalent (one system call over
 * a whole range: thread policies, lazy placement, constant maps) and the shape the classifier
 * proposes it as. Adding a policy: its value in numaplace.h's npl_policy_kind, a map function
 * and a row here (tests/unit/test_policy_table.c checks that every kind has one). */
#define _GNU_SOURCE
#include "plan/plan.h"

#include <errno.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{ /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* a node index in [0, m), uniform and independent for each i under one seed */
static int uniform_index(uint64_t seed, uint64_t i, int m)
{
    uint64_t h = mix64(seed + (i + 1) * 0x9e3779b97f4a7c15ULL);
    return (int)(((unsigned __int128)h * (unsigned)m) >> 64);
}

static int any_node(const struct npl_map *m, size_t i)
{
    (void)m;
    (void)i;
    return NPL_NODE_ANY;
}

static int first_node(const struct npl_map *m, size_t i)
{
    (void)i;
    return m->plan->nodes[0];
}

static int round_robin(const struct npl_map *m, size_t i)
{
    return m->plan->nodes[i % (size_t)m->plan->m];
}

static int skewed(const struct npl_map *m, size_t i)
{
    size_t M = (size_t)m->plan->m;
    return m->plan->nodes[(i + i / M + 1) % M];
}

static int prime_mapped(const struct npl_map *m, size_t i)
{
    const struct npl_plan *pl = m->plan;
    size_t M = (size_t)pl->m, P = (size_t)pl->prime, v = i % P;
    if (v < M)
        return pl->nodes[v];
    return pl->nodes[((i / P) * (P - M) + (v - M)) % M];
}

static int hashed(const struct npl_map *m, size_t i)
{
    return m->plan->nodes[uniform_index(m->plan->seed, i, m->plan->m)];
}

static int weighted(const struct npl_map *m, size_t i)
{
    const struct npl_plan *pl = m->plan;
    int r = (int)(i % (size_t)pl->wtotal), k = 0;
    while (r >= pl->wprefix[k + 1])
        k++;
    return pl->nodes[k];
}

static int block_round_robin(const struct npl_map *m, size_t i)
{
    return m->plan->nodes[npl__map_block(m, i) % (size_t)m->plan->m];
}

static int block_hashed(const struct npl_map *m, size_t i)
{
    return m->plan->nodes[uniform_index(m->plan->seed, npl__map_block(m, i), m->plan->m)];
}

static int block_of_thread(const struct npl_map *m, size_t i)
{
    return m->plan->thread_node[npl__map_block(m, i) % (size_t)m->plan->nthreads];
}

#define BLOCKS (NPL__POL_BLOCKS)
static const struct npl__policy_row rows[NPL_POLICY_KIND_COUNT] = {
    [NPL_FIRST_TOUCH] = {"first_touch", 0, NPL__KERNEL_DEFAULT, NPL__SHAPE_NONE, any_node},
    [NPL_BIND_ALL] = {"bind_all", NPL__POL_NODE_LIST | NPL__POL_PINS, NPL__KERNEL_BIND,
                      NPL__SHAPE_ONE_NODE, first_node},
    [NPL_BIND_BLOCK] = {"bind_block", BLOCKS | NPL__POL_THREAD_NODES | NPL__POL_PINS, NPL__KERNEL_NONE,
                        NPL__SHAPE_THREAD_BLOCKS, block_of_thread},
    [NPL_CYCLIC] = {"cyclic", 0, NPL__KERNEL_INTERLEAVE, NPL__SHAPE_SPREAD, round_robin},
    [NPL_CYCLIC_BLOCK] = {"cyclic_block", BLOCKS | NPL__POL_POSITIONAL_PAGES, NPL__KERNEL_NONE,
                          NPL__SHAPE_NODE_BLOCKS, block_round_robin},
    [NPL_SKEW_MAPP] = {"skew_mapp", 0, NPL__KERNEL_NONE, NPL__SHAPE_SPREAD_OTHER, skewed},
    [NPL_PRIME_MAPP] = {"prime_mapp", NPL__POL_PRIME, NPL__KERNEL_NONE, NPL__SHAPE_SPREAD_OTHER,
                        prime_mapped},
    [NPL_RANDOM] = {"random", NPL__POL_SEED, NPL__KERNEL_NONE, NPL__SHAPE_SPREAD_OTHER, hashed},
    [NPL_RANDOM_BLOCK] = {"random_block", BLOCKS | NPL__POL_POSITIONAL_PAGES | NPL__POL_SEED,
                          NPL__KERNEL_NONE, NPL__SHAPE_SPREAD_OTHER, block_hashed},
    [NPL_WEIGHTED] = {"weighted", NPL__POL_WEIGHTS, NPL__KERNEL_NONE, NPL__SHAPE_WEIGHTED,
                      weighted},
};
#undef BLOCKS

int npl_policy_process_wide(const npl_policy *pol)
{
    if (!pol)
        return npl__fail(EINVAL, "NULL policy");
    const struct npl__policy_row *r = npl__policy_row(npl_policy_get_kind(pol));
    return r && r->kernel != NPL__KERNEL_NONE;
}

const struct npl__policy_row *npl__policy_row(npl_policy_kind k)
{
    return (unsigned)k < NPL_POLICY_KIND_COUNT && rows[k].name ? &rows[k] : NULL;
}

int npl__policy_kind_of(const char *name)
{
    for (int k = 0; k < NPL_POLICY_KIND_COUNT; k++)
        if (rows[k].name && !strcmp(name, rows[k].name))
            return k;
    return -1;
}

enum npl__shape npl__plan_shape(const npl_plan *pl)
{
    const struct npl__policy_row *r = npl__policy_row(pl->kind);
    if (!r)
        return NPL__SHAPE_NONE;
    if (r->shape == NPL__SHAPE_THREAD_BLOCKS && (pl->block_pages || pl->block_units))
        return NPL__SHAPE_THREAD_PERIODIC; /* blocks of a given size, dealt to the threads */
    return r->shape;
}
