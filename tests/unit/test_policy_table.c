/* SPDX-License-Identifier: BSD-3-Clause */
/* test_policy_table - src/plan/policy_table.c: every policy kind has its row, and what the other
 * layers read from a row is what they do. For each kind, a policy string is built from the row
 * alone (its flags say which parameters it takes) and must parse, format back to itself, plan on
 * a 4-node synthetic topology and map every page to a node of the plan (first touch: none);
 * the parameters the row does not declare must be refused; the kernel forms and shapes are
 * checked against the kinds that have them; an unknown name's error lists every row. */
#define _GNU_SOURCE
#include "check.h"
#include "plan/plan.h"

#include <errno.h>

static npl_topo *synth(const char *desc)
{
    npl_topo *t;
    if (npl_topo_load_synthetic(&t, desc) < 0) {
        printf("cannot build synthetic topology %s: %s\n", desc, npl_last_error());
        exit(2);
    }
    return t;
}

/* a policy string of kind k with every parameter its row declares */
static void full_string(const struct npl__policy_row *r, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "%s", r->name);
    char sep = ':';
#define ADD(...) (o += (size_t)snprintf(buf + o, size - o, __VA_ARGS__), sep = ',')
    if (r->flags & NPL__POL_NODE_LIST)
        ADD("%c2,1", sep);
    if (r->flags & NPL__POL_WEIGHTS)
        ADD("%c0=3,2=1", sep);
    if (r->flags & NPL__POL_BLOCKS)
        ADD("%cpages=2,threads=3", sep);
    if (r->flags & NPL__POL_SEED)
        ADD("%cseed=7", sep);
    if (r->flags & NPL__POL_PRIME)
        ADD("%c5", sep);
#undef ADD
}

int main(void)
{
    npl_topo *t4 = synth("numa:4 core:2 pu:1");
    int names = 0;
    for (int k = 0; k < NPL_POLICY_KIND_COUNT; k++) {
        const struct npl__policy_row *r = npl__policy_row((npl_policy_kind)k);
        CHECK(r && r->name && r->node_of, "kind %d has a row with a name and a map", k);
        if (!r || !r->name || !r->node_of)
            continue;
        names++;
        CHECK(npl__policy_kind_of(r->name) == k && !strcmp(npl_policy_kind_name(k), r->name),
              "%s: its name gives its kind back", r->name);
        CHECK(npl__is_block_kind((npl_policy_kind)k) == !!(r->flags & NPL__POL_BLOCKS),
              "%s: a block kind exactly when its row says so", r->name);
        char str[256], back[256];
        full_string(r, str, sizeof str);
        npl_policy *p = NULL;
        npl_plan *pl = NULL;
        int parsed = npl_policy_parse(&p, str) == 0;
        CHECK(parsed, "%s parses: %s", str, parsed ? "" : npl_last_error());
        if (!parsed)
            continue;
        CHECK(npl_policy_format(p, back, sizeof back) > 0 && !strcmp(back, str),
              "%s formats back to itself (%s)", str, back);
        CHECK(npl_policy_wants_pinning(p) == !!(r->flags & NPL__POL_PINS),
              "%s: wants pinned threads exactly when its row says so", str);
        int planned = npl_plan_create(&pl, p, t4, 4) == 0;
        CHECK(planned, "%s plans on 4 nodes: %s", str, planned ? "" : npl_last_error());
        if (planned) {
            int nodes[64], in_plan = 1;
            CHECK(npl_plan_map(pl, NULL, 64 * 4096, 4096, 0, 64, nodes) == 0, "%s maps", str);
            for (int i = 0; i < 64; i++)
                in_plan &= r->kernel == NPL__KERNEL_DEFAULT
                               ? nodes[i] == NPL_NODE_ANY
                               : nodes[i] >= 0 && nodes[i] < 4;
            CHECK(in_plan, "%s: every page on a node of the machine (first touch: none)", str);
            enum npl__shape sh = npl__plan_shape(pl);
            CHECK(sh == (r->shape == NPL__SHAPE_THREAD_BLOCKS ? NPL__SHAPE_THREAD_PERIODIC
                                                              : r->shape),
                  "%s: the plan's shape is its row's (a block size makes bind_block periodic)",
                  str);
            npl_plan_free(pl);
        }
        npl_policy_free(p);
        /* what the row does not declare is refused */
        static const struct {
            unsigned flag;
            const char *param;
        } undeclared[] = {{NPL__POL_BLOCKS, "threads=2"}, {NPL__POL_SEED, "seed=3"}};
        for (size_t u = 0; u < sizeof undeclared / sizeof *undeclared; u++) {
            if (r->flags & (undeclared[u].flag | NPL__POL_NODE_LIST | NPL__POL_WEIGHTS))
                continue;
            snprintf(str, sizeof str, "%s:%s", r->name, undeclared[u].param);
            errno = 0;
            p = NULL;
            CHECK(npl_policy_parse(&p, str) == -1 && errno == EINVAL, "%s refused", str);
            npl_policy_free(p);
        }
    }
    CHECK(names == NPL_POLICY_KIND_COUNT, "%d rows of %d kinds", names, NPL_POLICY_KIND_COUNT);
    /* what the documentation (docs/POLICIES.md) says of the kinds, by name */
    static const struct {
        unsigned flag;
        const char *kinds;
    } docs[] = {{NPL__POL_BLOCKS, " bind_block cyclic_block random_block"},
                {NPL__POL_POSITIONAL_PAGES, " cyclic_block random_block"},
                {NPL__POL_THREAD_NODES, " bind_block"},
                {NPL__POL_PINS, " bind_all bind_block"},
                {NPL__POL_NODE_LIST, " bind_all"},
                {NPL__POL_WEIGHTS, " weighted"},
                {NPL__POL_SEED, " random random_block"},
                {NPL__POL_PRIME, " prime_mapp"}};
    for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
        char got[256] = "";
        for (int k = 0; k < NPL_POLICY_KIND_COUNT; k++) {
            const struct npl__policy_row *r = npl__policy_row((npl_policy_kind)k);
            if (r->flags & docs[d].flag)
                snprintf(got + strlen(got), sizeof got - strlen(got), " %s", r->name);
        }
        CHECK(!strcmp(got, docs[d].kinds), "flag 0x%x: the kinds%s (want%s)", docs[d].flag, got,
              docs[d].kinds);
    }
    /* the kernel's own forms: the three kinds npl_set_thread_policy can give a thread */
    CHECK(npl__policy_row(NPL_FIRST_TOUCH)->kernel == NPL__KERNEL_DEFAULT &&
              npl__policy_row(NPL_BIND_ALL)->kernel == NPL__KERNEL_BIND &&
              npl__policy_row(NPL_CYCLIC)->kernel == NPL__KERNEL_INTERLEAVE,
          "first_touch, bind_all and cyclic have their kernel forms");
    int none = 0;
    for (int k = 0; k < NPL_POLICY_KIND_COUNT; k++)
        none += npl__policy_row((npl_policy_kind)k)->kernel == NPL__KERNEL_NONE;
    CHECK(none == NPL_POLICY_KIND_COUNT - 3, "the other %d kinds are placed page by page (%d)",
          NPL_POLICY_KIND_COUNT - 3, none);
    /* the public query: the same three kinds, from a parsed policy of every kind */
    int wide = 0, wide_ok = 1;
    for (int k = 0; k < NPL_POLICY_KIND_COUNT; k++) {
        char str[256];
        npl_policy *q = NULL;
        full_string(npl__policy_row((npl_policy_kind)k), str, sizeof str);
        int want = k == NPL_FIRST_TOUCH || k == NPL_BIND_ALL || k == NPL_CYCLIC;
        int got = npl_policy_parse(&q, str) == 0 ? npl_policy_process_wide(q) : -2;
        wide_ok &= got == want;
        wide += got == 1;
        npl_policy_free(q);
    }
    errno = 0;
    CHECK(wide_ok && wide == 3 && npl_policy_process_wide(NULL) == -1 && errno == EINVAL,
          "npl_policy_process_wide: 1 for first_touch, bind_all and cyclic only (%d kinds), -1 "
          "and EINVAL for NULL", wide);
    CHECK(npl__policy_row((npl_policy_kind)NPL_POLICY_KIND_COUNT) == NULL &&
              npl__policy_row((npl_policy_kind)-1) == NULL && npl__policy_kind_of("nope") == -1,
          "no row outside the kinds");
    /* an unknown name: the error lists every row's name */
    npl_policy *p = NULL;
    int listed = npl_policy_parse(&p, "nope") == -1;
    for (int k = 0; k < NPL_POLICY_KIND_COUNT && listed; k++)
        listed = strstr(npl_last_error(), npl__policy_row((npl_policy_kind)k)->name) != NULL;
    CHECK(listed, "an unknown policy's error names every kind: %s", npl_last_error());
    npl_topo_destroy(t4);
    return check_summary("test_policy_table");
}
