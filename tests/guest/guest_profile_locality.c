/* guest_profile_locality - `numaplace profile` measures the locality it gets (in a guest of >= 2
 * nodes, balancing off): the threads run pinned on node 0's CPUs and read an array again and
 * again (the child role of this program), placed by `--policy bind_all:1` (every page on node 1)
 * and by `--policy bind_all:0` (every page on node 0). Checks, exact:
 *   1. the child finds every page of its array on the policy's node (npl_query_pages; a page
 *      the sampler holds protected has no answer until the child reads it once);
 *   2. profile's last line counts at least MIN_SAMPLES sampled accesses whose page's node is
 *      known, none local under bind_all:1 (0%) and all local under bind_all:0 (100%);
 *   3. the profile's "measured" total is the same as that line;
 *   4. profile --profile of the bind_all:1 run's profile (its advice puts the array with its
 *      threads, on node 0): matched, every page on node 0, all local.
 *   guest_profile_locality --child MIB PASSES   the child */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PSZ 4096
#define MIN_SAMPLES 100

static int N = 1, KC = 1;

static int child(size_t mib, int passes)
{
    size_t n = mib << 20 >> 3, npages = (mib << 20) / PSZ;
    double *a = malloc(n * sizeof *a);
    int *nodes = malloc(npages * sizeof *nodes);
    if (!a || !nodes)
        return 1;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 13);
    /* where the pages are (the policy's node, whatever the threads' node); a page the sampler
     * holds protected right now has no answer (move_pages: -EFAULT): reading it once gives it
     * back (PROT_READ for 100 ms, and not sampled again meanwhile), then it is asked again */
    int per_node[64] = {0}, q = npl_query_pages(a, n * sizeof *a, nodes, npages), unknown = 0;
    uintptr_t first = (uintptr_t)a & ~(uintptr_t)(PSZ - 1);
    for (size_t i = 0; q == (int)npages && i < npages; i++)
        for (int tries = 0; nodes[i] < 0 && tries < 10; tries++) {
            const double *in = (const double *)(first + i * PSZ);
            if (in < a)
                in = a;
            volatile double touch = *in;
            (void)touch;
            npl_query_pages(in, sizeof *in, &nodes[i], 1);
        }
    for (size_t i = 0; q == (int)npages && i < npages; i++) {
        if (nodes[i] >= 0 && nodes[i] < 64)
            per_node[nodes[i]]++;
        else
            unknown++;
    }
    printf("pages %zu (query %d), unknown %d, per node", npages, q, unknown);
    for (int k = 0; k < 64; k++)
        if (per_node[k])
            printf(" %d:%d", k, per_node[k]);
    printf("\n");
    double sum = 0;
    for (int p = 0; p < passes; p++) {
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (size_t i = 0; i < n; i++)
            sum += a[i];
    }
    printf("checksum %.6e\n", sum);
    free(nodes);
    free(a);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    size_t n = b ? fread(b, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (b)
        b[n] = 0;
    return b;
}

/* "numaplace profile: sampled accesses on the accessing thread's node: P% (L of T samples;
 * U unknown)" -> L, T, U */
static int measured_line(const char *err, unsigned long long *l, unsigned long long *t,
                         unsigned long long *u)
{
    const char *m = err ? strstr(err, "sampled accesses on the accessing thread's node: ") : NULL;
    const char *p = m ? strchr(m, '(') : NULL;
    return p && sscanf(p, "(%llu of %llu samples; %llu unknown)", l, t, u) == 3 ? 0 : -1;
}

/* the profile's sampling.measured total, as written ("measured": {"local": L, ...}) */
static int measured_json(const char *json, unsigned long long *l, unsigned long long *r)
{
    const char *s = json ? strstr(json, "\"sampling\"") : NULL;
    const char *m = s ? strstr(s, "\"measured\": {") : NULL;
    return m && sscanf(m, "\"measured\": {\"local\": %llu, \"remote\": %llu", l, r) == 2 ? 0 : -1;
}

/* profile under --policy bind_all:NODE, or (advised) under --profile of the bind_all:1 run's
 * profile, whose advice puts the array with its threads: on node 0 */
static void one(const char *self, const char *cpus, int node, int advised)
{
    char pol[64], out[64], err[64], json[64];
    if (advised)
        snprintf(pol, sizeof pol, "--profile /tmp/gpl1.json");
    else
        snprintf(pol, sizeof pol, "bind_all:%d", node);
    snprintf(out, sizeof out, "/tmp/gpl_out%d%s.txt", node, advised ? "a" : "");
    snprintf(err, sizeof err, "/tmp/gpl_err%d%s.txt", node, advised ? "a" : "");
    snprintf(json, sizeof json, "/tmp/gpl%d%s.json", node, advised ? "a" : "");
    char *const by_policy[] = {"numaplace", "profile", "--backend", "fault", "--pin", (char *)cpus,
                               "--policy", pol, "--rate", "20000", "--out", json, "--",
                               (char *)self, "--child", "8", "60", NULL};
    char *const by_profile[] = {"numaplace", "profile", "-v", "--backend", "fault", "--pin",
                                (char *)cpus, "--profile", "/tmp/gpl1.json", "--rate", "20000",
                                "--out", json, "--", (char *)self, "--child", "8", "60", NULL};
    int rc = spawn_to(out, err, advised ? by_profile : by_policy);
    char *o = slurp(out), *e = slurp(err), *j = slurp(json);
    CHECK(rc == 0, "%s: numaplace profile: status %d: %s", pol, rc, e ? e : "?");
    /* 1. placed as the policy says */
    int pages = 0, query = -1, unknown = -1, on = -1;
    const char *pl = o ? strstr(o, "pages ") : NULL;
    char want[32];
    snprintf(want, sizeof want, " %d:", node);
    const char *pn = pl ? strstr(pl, want) : NULL;
    int ok = pl && sscanf(pl, "pages %d (query %d), unknown %d", &pages, &query, &unknown) == 3 &&
             pn && sscanf(pn + strlen(want), "%d", &on) == 1;
    CHECK(ok && pages == 2048 && query == pages && on == pages && unknown == 0,
          "%s: every page on node %d: %s", pol,
          node, o ? o : "?");
    /* 2. the measured line */
    unsigned long long l = 0, t = 0, u = 0, jl = 0, jr = 0;
    ok = measured_line(e, &l, &t, &u) == 0;
    printf("%s, threads on node 0: %llu of %llu sampled accesses local, %llu unknown\n", pol, l,
           t, u);
    CHECK(ok && t >= MIN_SAMPLES, "%s: at least %d samples of a known node: %s", pol, MIN_SAMPLES,
          e ? e : "?");
    CHECK(ok && l == (node == 0 ? t : 0), "%s: measured %llu of %llu local, expected %s", pol, l,
          t, node == 0 ? "all" : "none");
    /* 3. the profile says the same */
    CHECK(measured_json(j, &jl, &jr) == 0 && jl == l && jl + jr == t,
          "%s: the profile's measured total (%llu local, %llu remote) is the line's", pol, jl, jr);
    if (advised)
        CHECK(e && strstr(e, ": 1 of 1 arrays matched again (100.0% of the profiled bytes)"),
              "%s: the array matched again: %s", pol, e ? e : "?");
    free(o);
    free(e);
    free(j);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child"))
        return child(strtoul(argv[2], NULL, 10), atoi(argv[3]));
    guest_args(argc, argv, &N, &KC);
    const npl_topo *topo = npl_topo_self();
    if (N < 2 || !topo || npl_topo_node_count(topo, 0) != N) {
        printf("usage: guest_profile_locality --nodes N --cpus-per-node K (in a guest of N >= 2 "
               "nodes)\n");
        return 120;
    }
    numa_balancing_off();
    char self[512];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        printf("FAIL guest_profile_locality: /proc/self/exe cannot be read\n");
        return 1;
    }
    self[sl] = 0;
    /* node 0's CPUs, as a --pin CPU list; one thread on each */
    int cpus[256], nc = npl_topo_node_cpus(topo, 0, cpus, 256);
    char list[1024] = "", threads[16];
    size_t off = 0;
    for (int k = 0; k < nc && off + 16 < sizeof list; k++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%d", k ? "," : "", cpus[k]);
    CHECK(nc >= 1, "node 0 has CPUs (%d)", nc);
    snprintf(threads, sizeof threads, "%d", nc > 0 ? nc : 1);
    setenv("OMP_NUM_THREADS", threads, 1);
    printf("threads pinned on node 0's CPUs %s\n", list);
    if (nc >= 1) {
        one(self, list, 1, 0);
        one(self, list, 0, 0);
        one(self, list, 0, 1);
    }
    return check_summary("guest_profile_locality");
}
