/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_cli - `numaplace run / where / measure / report` end to end, INSIDE the multi-node guest
 * (also runs on the host: one node, trivial but exact). Two roles in one binary:
 *
 *   guest_cli --nodes N --cpus-per-node K [--big-mib M] [--measure-report]
 *        the driver (what tests/guest/run.sh runs); measure --quick and report --quick (minutes
 *        under TCG, most of this program's time) run with --measure-report (run.sh gives it in
 *        the 3-node guest) or without --nodes (on the host)
 *   guest_cli --child-alloc POLICY MIB                      under `numaplace run --policy POLICY`:
 *        mallocs MIB MiB, writes it, checks every page with move_pages against the policy's map,
 *        and checks that `numaplace where --json <its pid>` reports the same per-node counts
 *   guest_cli --child-pin STRATEGY T [CPULIST]              under `numaplace run --pin STRATEGY`:
 *        creates T-1 threads; thread n must be bound to exactly npl_pin_cpu(STRATEGY, n), and
 *        every CPU inside CPULIST (the taskset mask) when given
 *
 *   guest_cli --child-nt MIB          under `numaplace run --next-touch --policy skew_mapp --pin
 *        scatter`: a malloc'ed array is placed page by page per skew_mapp after allocation, then
 *        each OpenMP thread touches its block in a parallel region: its pages must follow it
 *   guest_cli --child-static place|nt|plain   the static (.bss) arrays sa/sx, CG-like: under
 *        `run --policy cyclic_block:3` the page-aligned inside of the writable segment is placed
 *        page by page before main; under `run --next-touch --pin scatter` serial init then a
 *        parallel static loop: each thread's block on its node (>= 98%)
 *   guest_cli --child-nodes SET MIB   under `run --nodes SET`: small and large allocations all
 *        on SET's nodes
 *
 * Exit status of a child: 0 exact, 3 mismatch (--child-alloc: pages off the policy's map, all
 * else exact), 5 (--child-alloc) the real allocator's array, not intercepted (not page-aligned),
 * its pages off the policy's map, 4 any other failure. The driver prints "guest_cli: N passed,
 * M failed, S skipped". */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <numaplace/migrate.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PSZ 4096

static int N = 1, K = 1;

/* ---- child: an unmodified program's large array ---- */
static int child_alloc(const char *polstr, size_t mib)
{
    size_t bytes = mib << 20, npages = bytes / PSZ;
    unsigned char *a = malloc(bytes);
    if (!a) {
        printf("child: malloc failed\n");
        return 4;
    }
    memset(a, 0x5a, bytes); /* the program writes its array, as programs do */
    int aligned = ((uintptr_t)a % PSZ) == 0;
    /* the array's whole pages: all of them when it is page-aligned, as the interposer makes it
     * (the real allocator's large arrays start 16 bytes into a page: one page fewer) */
    unsigned char *lo = (unsigned char *)(((uintptr_t)a + PSZ - 1) / PSZ * PSZ);
    size_t nq = ((uintptr_t)a + bytes - (uintptr_t)lo) / PSZ;
    npl_policy *p = pol(polstr);
    int *want = malloc(npages * sizeof *want), *got = malloc(npages * sizeof *got);
    int rc = npl_policy_map(p, NULL, NULL, bytes, PSZ, 0, npages, want);
    int q = npl_query_pages(lo, nq * PSZ, got, nq);
    size_t bad = 0, per[64] = {0};
    for (size_t i = 0; q == (int)nq && i < nq; i++) {
        if (got[i] != want[i])
            bad++;
        if (got[i] >= 0 && got[i] < 64)
            per[got[i]]++;
    }
    printf("child %s: %zu pages, %zu misplaced, page-aligned %d (map %d, query %d)\n", polstr,
           nq, bad, aligned, rc, q);
    if (strstr(polstr, "@local")) { /* independently: every page on a node of this CPU mask */
        cpu_set_t mine;
        sched_getaffinity(0, sizeof mine, &mine);
        for (size_t i = 0; q == (int)nq && i < nq; i++) {
            int local = 0;
            for (int c = 0; c < CPU_SETSIZE && !local; c++)
                local = CPU_ISSET(c, &mine) && npl_topo_cpu_node(npl_topo_self(), c) == got[i];
            bad += !local;
        }
        printf("child %s: pages off this process's CPU nodes counted as misplaced: %zu\n",
               polstr, bad);
    }
    /* numaplace where on this very process: the mapping that starts at the array (one of the
     * real allocator shares its mapping with the allocator's header page: not compared) */
    char cmd[128], *out = malloc(1 << 20);
    snprintf(cmd, sizeof cmd, "numaplace where --json %d", (int)getpid());
    FILE *f = popen(cmd, "r");
    size_t n = f ? fread(out, 1, (1 << 20) - 1, f) : 0;
    out[n] = 0;
    int st = f ? pclose(f) : -1;
    /* the mapping that holds the array: it starts there, or earlier when a neighbour with the
     * same policy merged with it (a lazily placed block below it, not touched) */
    char *m = NULL;
    for (char *s = strstr(out, "\"start\": \"0x"); s; s = strstr(s + 1, "\"start\": \"0x")) {
        char *e = strstr(s, "\"end\": \"0x");
        unsigned long lo = strtoul(s + 10, NULL, 16), hi = e ? strtoul(e + 8, NULL, 16) : lo;
        if (lo <= (uintptr_t)a && (uintptr_t)a < hi) {
            m = s;
            break;
        }
    }
    int where_ok = !aligned || (st == 0 && m);
    for (int k = 0; aligned && where_ok && k < 64; k++) {
        if (!per[k])
            continue;
        char w[48];
        snprintf(w, sizeof w, "\"%d\": %zu", k, per[k]);
        char *pages = strstr(m, "\"pages\""), *end = pages ? strchr(pages, '}') : NULL;
        char *hit = pages ? strstr(pages, w) : NULL;
        where_ok = hit && hit < end;
        if (!where_ok)
            printf("child: where does not report %s for the array\n", w);
    }
    printf("child %s: where agrees %d (status %d)\n", polstr, where_ok, st);
    free(out);
    free(want);
    free(got);
    free(a);
    npl_policy_free(p);
    if (rc < 0 || q != (int)nq || !where_ok)
        return 4; /* something else failed */
    if (!aligned) /* the real allocator's array, not intercepted */
        return bad ? 5 : 4;
    return bad ? 3 : 0;
}

/* ---- child: threads as an unmodified pthreads program creates them ---- */
struct slot {
    int cpu_bound; /* the one CPU of the thread's mask, -1 if more than one */
    int inside;    /* every CPU of the mask in the allowed list */
};
static struct slot slots[256];
static int allowed[1024], nallowed;

static void record(int n)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    slots[n].cpu_bound = -1;
    slots[n].inside = 1;
    if (CPU_COUNT(&s) == 1)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &s))
                slots[n].cpu_bound = c;
    for (int c = 0; c < CPU_SETSIZE && nallowed; c++) {
        int ok = 0;
        for (int k = 0; k < nallowed; k++)
            ok |= allowed[k] == c;
        if (CPU_ISSET(c, &s) && !ok)
            slots[n].inside = 0;
    }
}

static pthread_barrier_t bar;
static void *thread_main(void *arg)
{
    record((int)(intptr_t)arg);
    pthread_barrier_wait(&bar);
    return NULL;
}

static int child_pin(const char *strategy, int t, const char *mask)
{
    if (mask) {
        char *s = strdup(mask), *save = NULL;
        for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            allowed[nallowed++] = atoi(tok);
        free(s);
    }
    if (t > 256)
        t = 256;
    record(0);
    pthread_barrier_init(&bar, NULL, (unsigned)t);
    pthread_t th[256];
    for (int i = 1; i < t; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
    pthread_barrier_wait(&bar);
    for (int i = 1; i < t; i++)
        pthread_join(th[i], NULL);
    int bad = 0;
    for (int i = 0; i < t; i++) {
        int want = npl_pin_cpu(NULL, strategy, i);
        int node = npl_topo_cpu_node(npl_topo_self(), slots[i].cpu_bound);
        printf("child pin %s: thread %d on CPU %d (node %d), expected CPU %d%s\n", strategy, i,
               slots[i].cpu_bound, node, want, slots[i].inside ? "" : " OUTSIDE the mask");
        bad += slots[i].cpu_bound != want || !slots[i].inside;
    }
    return bad ? 3 : 0;
}

/* ---- child: transparent next-touch over a policy-placed malloc'ed array (task: one interposer) */
static int node_of_cpu(int cpu) { return npl_topo_cpu_node(npl_topo_self(), cpu); }

static int child_nt(size_t mib)
{
    size_t bytes = mib << 20, npages = bytes / PSZ;
    const char *polstr = getenv("NUMAPLACE_POLICY");
    unsigned char *a = malloc(bytes);
    int *want = calloc(npages, sizeof *want), *got = calloc(npages, sizeof *got);
    npl_policy *p = pol(polstr ? polstr : "first_touch");
    if (!a || !want || !got || !p)
        return 3;
    int q0 = npl_query_pages(a, bytes, got, npages);
    size_t absent = 0, bad = 0;
    for (size_t i = 0; q0 > 0 && i < npages; i++)
        absent += got[i] < 0;
    memset(a, 1, bytes); /* serial init by the master */
    int rc = npl_policy_map(p, NULL, NULL, bytes, PSZ, 0, npages, want);
    npl_query_pages(a, bytes, got, npages);
    for (size_t i = 0; i < npages; i++)
        bad += got[i] != want[i];
    printf("child nt: %s, %zu pages: %zu absent right after malloc, %zu off the policy's map after "
           "serial init (map %d, page-aligned %d)\n", polstr ? polstr : "-", npages, absent, bad, rc,
           (uintptr_t)a % PSZ == 0);
    int T = omp_get_max_threads(), tnode[256];
    size_t per = npages / (size_t)T / 16 * 16; /* whole 64 KiB chunks per thread */
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        tnode[t] = node_of_cpu(sched_getcpu());
        for (size_t i = (size_t)t * per; i < (size_t)(t + 1) * per; i++)
            a[i * PSZ] += 1;
    }
    npl_query_pages(a, bytes, got, npages);
    size_t moved_bad = 0, nodes_mask = 0;
    for (int t = 0; t < T; t++) {
        size_t on = 0;
        for (size_t i = (size_t)t * per; i < (size_t)(t + 1) * per; i++)
            on += got[i] == tnode[t];
        moved_bad += per - on;
        nodes_mask |= (size_t)1 << (tnode[t] & 63);
        printf("child nt: thread %d (node %d): %zu/%zu of its pages on its node\n", t, tnode[t], on,
               per);
    }
    struct npl_next_touch_stats st = {0};
    printf("child nt: %zu pages off their thread's node after the region, threads on %d nodes\n",
           moved_bad, __builtin_popcountl(nodes_mask));
    (void)st;
    int aligned = (uintptr_t)a % PSZ == 0;
    free(a);
    return rc >= 0 && bad == 0 && moved_bad == 0 && aligned ? 0 : 3;
}

/* ---- child: static arrays (.bss), CG-like ---- */
#define SN (1 << 19) /* 4 MiB of doubles each */
static double sa[SN], sx[SN];

struct segr { uintptr_t lo, hi, rlo, rhi; };
static int seg_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct segr *r = data;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            r->rlo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            r->rhi = r->rlo + info->dlpi_phdr[i].p_memsz;
        }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || (uintptr_t)sa < lo ||
            (uintptr_t)sa >= hi)
            continue;
        if (r->rhi > lo && r->rhi < hi)
            lo = r->rhi;
        r->lo = (lo + PSZ - 1) / PSZ * PSZ; /* the preload's rule: the page-aligned inside */
        r->hi = hi / PSZ * PSZ;
    }
    return 1;
}

static int child_static(const char *mode)
{
    size_t npages = sizeof sa / PSZ;
    int *got = calloc(npages + 1, sizeof *got);
    char *lo = (char *)(((uintptr_t)sa + PSZ - 1) / PSZ * PSZ); /* sa's whole pages */
    if (!strcmp(mode, "place")) {
        struct segr r = {0};
        dl_iterate_phdr(seg_cb, &r);
        size_t rp = (r.hi - r.lo) / PSZ;
        int *want = calloc(rp, sizeof *want);
        npl_policy *p = pol(getenv("NUMAPLACE_POLICY"));
        int rc = npl_policy_map(p, NULL, NULL, rp * PSZ, PSZ, 0, rp, want);
        if (npl_query_pages(lo, (npages - 1) * PSZ, got, npages - 1) != (int)npages - 1)
            return 4;
        size_t bad = 0, on0 = 0, first = ((uintptr_t)lo - r.lo) / PSZ;
        for (size_t i = 0; i + 1 < npages; i++) {
            bad += got[i] != want[first + i];
            on0 += got[i] == 0;
        }
        printf("child static place %s: segment %zu pages, sa %zu pages: %zu misplaced, %zu on node "
               "0 (map %d)\n", getenv("NUMAPLACE_POLICY"), rp, npages - 1, bad, on0, rc);
        return rc >= 0 && bad == 0 ? 0 : 3;
    }
    /* serial init (the master), then the CG-like parallel static loop */
    for (size_t i = 0; i < SN; i++)
        sa[i] = 1.0 / (double)(i + 1), sx[i] = 0;
    int master = node_of_cpu(sched_getcpu());
    if (npl_query_pages(lo, (npages - 1) * PSZ, got, npages - 1) != (int)npages - 1)
        return 4;
    size_t on0 = 0;
    for (size_t i = 0; i + 1 < npages; i++)
        on0 += got[i] == master;
    printf("child static %s: after serial init %zu/%zu pages of sa on the master's node %d\n", mode,
           on0, npages - 1, master);
    int T = omp_get_max_threads(), tnode[256];
    for (int it = 0; it < 3; it++) {
#pragma omp parallel num_threads(T)
        {
            int t = omp_get_thread_num();
            tnode[t] = node_of_cpu(sched_getcpu());
#pragma omp for schedule(static)
            for (size_t i = 0; i < SN; i++)
                sx[i] += sa[i] * 2.0;
        }
    }
    if (npl_query_pages(lo, (npages - 1) * PSZ, got, npages - 1) != (int)npages - 1)
        return 4;
    /* thread t's iterations: [t*SN/T, (t+1)*SN/T) (SN divisible by T*512: whole pages) */
    size_t per = (size_t)SN / (size_t)T, worst_pct = 100, total_on = 0;
    on0 = 0;
    for (int t = 0; t < T; t++) {
        uintptr_t b = (uintptr_t)&sa[(size_t)t * per], e = (uintptr_t)&sa[(size_t)(t + 1) * per];
        size_t on = 0, n = 0;
        for (size_t i = 0; i + 1 < npages; i++) {
            uintptr_t pg = (uintptr_t)lo + i * PSZ;
            if (pg < b || pg + PSZ > e)
                continue;
            n++;
            on += got[i] == tnode[t];
            on0 += got[i] == master;
        }
        total_on += on;
        size_t pct = n ? on * 100 / n : 0;
        if (pct < worst_pct)
            worst_pct = pct;
        printf("child static %s: thread %d (node %d): %zu/%zu block pages on its node\n", mode, t,
               tnode[t], on, n);
    }
    printf("child static %s: after the parallel loop %zu pages of sa on the master's node %d, worst "
           "block %zu%% on its owner's node\n", mode, on0, master, worst_pct);
    return worst_pct >= 98 ? 0 : 3;
}

/* ---- child: --nodes SET restricts memory (kernel policy), small and large allocations ---- */
static int child_nodes(const char *set, size_t mib)
{
    int ok[64], n = 0;
    for (const char *c = set; *c && n < 64;) { /* "a" or "a-b" items, comma-separated */
        char *e;
        long x = strtol(c, &e, 10), y = x;
        if (*e == '-')
            y = strtol(e + 1, &e, 10);
        for (long v = x; v <= y && n < 64; v++)
            ok[n++] = (int)v;
        c = *e == ',' ? e + 1 : e;
        if (e == c && *c)
            break;
    }
    size_t small = 256 << 10, nsmall = (mib << 20) / small, bad = 0, total = 0;
    for (size_t k = 0; k < nsmall; k++) { /* below the threshold: the kernel policy decides */
        char *b = malloc(small);
        memset(b, 1, small);
        int got[64];
        int q = npl_query_pages((void *)((uintptr_t)b / PSZ * PSZ), small - PSZ, got, 64);
        for (int i = 0; i < q; i++) {
            int in = 0;
            for (int j = 0; j < n; j++)
                in |= got[i] == ok[j];
            bad += !in;
            total++;
        }
    }
    size_t bytes = mib << 20, np = bytes / PSZ;
    char *big = malloc(bytes);
    memset(big, 1, bytes);
    int *got = calloc(np, sizeof *got);
    npl_query_pages(big, bytes, got, np);
    for (size_t i = 0; i < np; i++) {
        int in = 0;
        for (int j = 0; j < n; j++)
            in |= got[i] == ok[j];
        bad += !in;
        total++;
    }
    printf("child nodes %s: %zu of %zu pages outside the set\n", set, bad, total);
    return bad ? 3 : 0;
}

/* ---- driver ---- */
/* run argv (NULL-terminated), optionally with a CPU mask; returns the exit status */
static int run(const int *cpus, int ncpus, char *const argv[])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (ncpus) {
            cpu_set_t s;
            CPU_ZERO(&s);
            for (int i = 0; i < ncpus; i++)
                CPU_SET(cpus[i], &s);
            if (sched_setaffinity(0, sizeof s, &s) < 0)
                _exit(124);
        }
        execvp(argv[0], argv);
        _exit(errno == ENOENT ? 127 : 126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
#define RUN(...) run(NULL, 0, (char *const[]){__VA_ARGS__, NULL})

/* ---- driver: the interposer's new paths ---- */
static int run_capture(char *const argv[], const char *out)
{
    return spawn_to(out, NULL, argv);
}

/* stdout and stderr of argv into out */
static int run_capture_all(char *const argv[], const char *out)
{
    return spawn_to(out, out, argv);
}

static void show(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!prefix || !strncmp(line, prefix, strlen(prefix)))
            printf("  | %s", line);
    if (f)
        fclose(f);
}

static void test_interposer(const char *self)
{
    char th[16];
    snprintf(th, sizeof th, "%d", N * K);
    setenv("OMP_NUM_THREADS", th, 1);
    /* 1. one interposer: --next-touch with a policy still places, and then migrates */
    int rc = run_capture((char *const[]){"numaplace", "run", "--next-touch", "--policy", "skew_mapp",
                                         "--pin", "scatter", "--", (char *)self, "--child-nt", "16",
                                         NULL}, "/tmp/gc_nt.txt");
    show("/tmp/gc_nt.txt", "child nt: ");
    CHECK(rc == 0, "run --next-touch --policy skew_mapp --pin scatter: placed per skew_mapp page by "
                   "page after malloc, then each thread's blocks moved to its node (status %d)", rc);
    if (rc)
        show("/tmp/gc_nt.txt", NULL);
    /* 4. static arrays: placed before main; next-touch SI -> SI+MIG */
    rc = run_capture((char *const[]){"numaplace", "run", "--policy", "cyclic_block:3", "--",
                                     (char *)self, "--child-static", "place", NULL}, "/tmp/gc_st.txt");
    show("/tmp/gc_st.txt", NULL);
    CHECK(rc == 0, "run --policy cyclic_block:3: the static array is placed page by page (status %d)",
          rc);
    rc = run_capture((char *const[]){(char *)self, "--child-static", "plain", NULL}, "/tmp/gc_st.txt");
    show("/tmp/gc_st.txt", "child static plain: after");
    CHECK(N == 1 || rc == 3, "without numaplace run the static CG stays where the master put it "
                             "(status %d)", rc);
    setenv("NUMAPLACE_NEXT_TOUCH", "4096", 1); /* page chunks: thread blocks are not chunk-aligned */
    rc = run_capture((char *const[]){"numaplace", "run", "--next-touch", "--pin", "scatter", "--",
                                     (char *)self, "--child-static", "nt", NULL}, "/tmp/gc_st.txt");
    unsetenv("NUMAPLACE_NEXT_TOUCH");
    show("/tmp/gc_st.txt", NULL);
    CHECK(rc == 0, "run --next-touch --pin scatter: static CG blocks follow their threads (>= 98%%, "
                   "status %d)", rc);
    /* 3. pinning under libgomp (gcc), libomp (clang) and gcc on a preloaded libomp */
    /* likwid-style domains: every CPU, the nodes in reverse order (M<N-1>:0-<K-1>@...@M0:...) */
    char domains[512] = "";
    for (int nd = N - 1; nd >= 0; nd--)
        snprintf(domains + strlen(domains), sizeof domains - strlen(domains), "%sM%d:0-%d",
                 nd == N - 1 ? "" : "@", nd, K - 1);
    const char *strategies[] = {"compact", "scatter", domains};
    const char *variants[] = {"omp_probe_gcc", "omp_probe_clang", "omp_probe_gcc"};
    for (int s = 0; s < 3; s++)
        for (int v = 0; v < 3; v++) {
            char path[256];
            snprintf(path, sizeof path, "/usr/local/bin/%s", variants[v]);
            int there = access(path, X_OK) == 0 &&
                        (v != 2 || access("/usr/local/bin/libomp.so.5", R_OK) == 0);
            CHECK(there, "%s%s is in this guest (tests/guest/run.sh adds build/progs and libomp)",
                  path, v == 2 ? " and /usr/local/bin/libomp.so.5" : "");
            if (!there)
                continue;
            if (v == 2)
                setenv("LD_PRELOAD", "/usr/local/bin/libomp.so.5", 1);
            rc = run_capture((char *const[]){"numaplace", "run", "--pin", (char *)strategies[s],
                                             "--", path, NULL}, "/tmp/gc_pin.txt");
            unsetenv("LD_PRELOAD");
            FILE *f = fopen("/tmp/gc_pin.txt", "r");
            int t, cpu, n = 0, bad = 0, on0 = 0, rt_ok = 0;
            char mask[256], rt[32];
            while (f && fscanf(f, "thread %d cpu %d mask %255s runtime %31s\n", &t, &cpu, mask, rt) == 4) {
                int want = npl_pin_cpu(NULL, strategies[s], t);
                char w[16];
                snprintf(w, sizeof w, "%d", want);
                bad += cpu != want || strcmp(mask, w);
                on0 += cpu == 0;
                rt_ok += !strcmp(rt, v == 0 ? "libgomp" : "libomp");
                n++;
            }
            if (f)
                fclose(f);
            printf("  | pin %s %s%s: %d threads, %d on CPU 0, %d not on their CPU\n", strategies[s],
                   variants[v], v == 2 ? "+libomp" : "", n, on0, bad);
            CHECK(rc == 0 && n == N * K && bad == 0 && rt_ok == n,
                  "run --pin %s under %s%s: every thread alone on its CPU (%d threads, %d wrong, "
                  "runtime ok %d, status %d)", strategies[s], variants[v],
                  v == 2 ? " + preloaded libomp" : "", n, bad, rt_ok, rc);
        }
    unsetenv("OMP_NUM_THREADS");
    /* 5. --nodes: a contradicting policy is refused; memory stays inside SET */
    if (N > 2) {
        CHECK(RUN("numaplace", "run", "--nodes", "1", "--policy", "bind_all:0", "--", "true") == 125,
              "--nodes 1 --policy bind_all:0: refused (125)");
        rc = RUN("numaplace", "run", "--nodes", "1-2", "--policy", "skew_mapp", "--", (char *)self,
                 "--child-nodes", "1-2", "8");
        CHECK(rc == 0, "run --nodes 1-2 --policy skew_mapp: small and large allocations on 1-2 "
                       "(status %d)", rc);
        rc = RUN("numaplace", "run", "--nodes", "2", "--", (char *)self, "--child-nodes", "2", "8");
        CHECK(rc == 0, "run --nodes 2: every page on node 2 (status %d)", rc);
    }
    CHECK(RUN("numaplace", "run", "--nodes", "18446744073709551616", "--", "true") == 125,
          "--nodes 2^64: refused (125)");
    CHECK(RUN("numaplace", "run", "--first", "0", "--policy", "cyclic", "--", "true") == 125,
          "--first 0: refused (125)");
}


static void test_policies(const char *self, size_t mib)
{
    char w[64];
    snprintf(w, sizeof w, "weighted:0=3,%d=1", N - 1);
    char ba[32];
    snprintf(ba, sizeof ba, "bind_all:%d", N - 1);
    const char *pols[] = {"cyclic", ba, "skew_mapp", N > 1 ? w : "weighted:0=1", "prime_mapp",
                          "cyclic_block:3"};
    char sz[32];
    snprintf(sz, sizeof sz, "%zu", mib);
    for (size_t i = 0; i < sizeof pols / sizeof pols[0]; i++) {
        int rc = RUN("numaplace", "run", "--policy", (char *)pols[i], "--", (char *)self,
                     "--child-alloc", (char *)pols[i], sz);
        CHECK(rc == 0, "numaplace run --policy %s: the program's malloc'ed %zu MiB array is "
                       "placed exactly and where agrees (status %d)", pols[i], mib, rc);
    }
    /* @local: an MPI rank bound to the CPUs of nodes 1 and 2 (or 0): memory only there */
    int cpus[16], nc = 0;
    for (int nd = N > 2 ? 1 : 0; nd <= (N > 2 ? 2 : 0); nd++)
        for (int k = 0; k < K && nc < 16; k++)
            cpus[nc++] = nd * K + k;
    int rc = run(cpus, nc, (char *const[]){"numaplace", "run", "--policy", "cyclic@local", "--",
                                          (char *)self, "--child-alloc", "cyclic@local", sz,
                                          NULL});
    CHECK(rc == 0, "numaplace run --policy cyclic@local on the CPUs of node(s) %s: every page on "
                   "those nodes, alternating (status %d)", N > 2 ? "1-2" : "0", rc);
    /* --threshold above the array: not intercepted, so not page-exact for skew_mapp on >1 node.
     * Status 5 exactly: the real allocator's array (not page-aligned) whose pages are off
     * skew_mapp's map, the rest of the child's checks passing; not any failure of the child. */
    if (N > 1) {
        int rc = RUN("numaplace", "run", "--policy", "skew_mapp", "--threshold", "1G", "--",
                     (char *)self, "--child-alloc", "skew_mapp", sz);
        CHECK(rc == 5, "--threshold 1G leaves a %zu MiB array to the real allocator: not page-"
                       "aligned, its pages off skew_mapp's map (status %d, want 5)", mib, rc);
    }
}

static void test_pin(const char *self)
{
    char t[16];
    snprintf(t, sizeof t, "%d", N * K + 1); /* more threads than CPUs: wraps around */
    int rc = RUN("numaplace", "run", "--pin", "scatter", "--", (char *)self, "--child-pin",
                 "scatter", t);
    CHECK(rc == 0, "numaplace run --pin scatter: thread n bound to the n-th scatter CPU (%s "
                   "threads, status %d)", t, rc);
    rc = RUN("numaplace", "run", "--pin", "compact", "--", (char *)self, "--child-pin", "compact", t);
    CHECK(rc == 0, "numaplace run --pin compact (status %d)", rc);
    /* taskset: the CPUs of the last node plus CPU 0: pins stay inside */
    int cpus[64], n = 0;
    cpus[n++] = 0;
    for (int k = 0; k < K && N > 1; k++)
        cpus[n++] = (N - 1) * K + k;
    char mask[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(mask + strlen(mask), sizeof mask - strlen(mask), "%s%d", i ? "," : "", cpus[i]);
    rc = run(cpus, n, (char *const[]){"numaplace", "run", "--pin", "scatter", "--", (char *)self,
                                      "--child-pin", "scatter", t, mask, NULL});
    CHECK(rc == 0, "taskset mask %s respected by --pin scatter (status %d)", mask, rc);
}

static int file_has(const char *path, const char *what);

/* run --verbose: the thread -> CPU -> node table, each placed allocation, and the THP note with
 * the flag that keeps huge pages (the guest's THP mode is "always" unless NPL_GUEST_THP says) */
static void test_verbose(const char *self)
{
    char pin[32], row[64], thp[64] = "";
    snprintf(pin, sizeof pin, "M%d:0", N - 1); /* the first CPU of the last node */
    int cpu = npl_pin_cpu(NULL, pin, 0);
    snprintf(row, sizeof row, "|      0 | %6d | %6d |", cpu, N - 1);
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f && !fgets(thp, sizeof thp, f))
        thp[0] = 0;
    if (f)
        fclose(f);
    int always = strstr(thp, "[always]") != NULL;
    setenv("OMP_NUM_THREADS", "1", 1);
    int rc = run_capture_all((char *const[]){"numaplace", "run", "--verbose", "--policy",
                                             "skew_mapp", "--pin", pin, "--", (char *)self,
                                             "--child-alloc", "skew_mapp", "8", NULL},
                             "/tmp/gc_verbose.txt");
    show("/tmp/gc_verbose.txt", "numaplace run:");
    CHECK(rc == 0 && file_has("/tmp/gc_verbose.txt", row),
          "run --verbose --pin %s: the table says thread 0 -> CPU %d -> node %d (status %d)", pin,
          cpu, N - 1, rc);
    CHECK(file_has("/tmp/gc_verbose.txt", "bytes: placed under skew_mapp"),
          "run --verbose: the 8 MiB allocation is reported as placed under skew_mapp");
    CHECK(always == file_has("/tmp/gc_verbose.txt", "add --huge thp to keep 2 MiB pages"),
          "run --verbose: the THP note (system THP %s) names --huge thp exactly when THP is "
          "always", always ? "always" : "not always");
    rc = run_capture_all((char *const[]){"numaplace", "run", "--verbose", "--policy", "cyclic",
                                         "--huge", "thp", "--", "numaplace", "topo", NULL},
                         "/tmp/gc_verbose.txt");
    CHECK(rc == 0 && file_has("/tmp/gc_verbose.txt", "keep transparent huge pages (--huge thp)") &&
              !file_has("/tmp/gc_verbose.txt", "add --huge thp"),
          "run --verbose --huge thp: says huge pages are kept (status %d)", rc);
    char many[16];
    snprintf(many, sizeof many, "%d", N * K + 1);
    setenv("OMP_NUM_THREADS", many, 1);
    rc = run_capture_all((char *const[]){"numaplace", "run", "--pin", "compact", "--", "true",
                                         NULL}, "/tmp/gc_verbose.txt");
    CHECK(rc == 0 && file_has("/tmp/gc_verbose.txt", "oversubscribed"),
          "run --pin compact with %s threads on %d CPUs: an oversubscription warning", many, N * K);
    unsetenv("OMP_NUM_THREADS");
}

static void test_errors(void)
{
    CHECK(RUN("numaplace", "run", "--policy", "cyclik", "--", "true") == 125, "unknown policy: 125");
    CHECK(RUN("numaplace", "run", "--nodes", "77", "--", "true") == 125, "node outside: 125");
    CHECK(RUN("numaplace", "run", "--", "/no/such/prog") == 127, "program not found: 127");
    CHECK(RUN("numaplace", "where", "999999999") == 1, "where on a gone PID: 1");
}

static int file_has(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return strstr(buf, what) != NULL;
}

/* ---- report --quick's results.json, read as a program reading it would ---- */
static cJSON *item(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

/* an N x N matrix of numbers, or of {"median": x} objects, every one > 0 */
static int positive_matrix(const cJSON *m)
{
    int rows = 0, ok = cJSON_GetArraySize(m) == N;
    for (const cJSON *r = m ? m->child : NULL; r && ok; r = r->next, rows++) {
        ok = cJSON_GetArraySize(r) == N;
        for (const cJSON *v = r->child; v && ok; v = v->next)
            ok = (cJSON_IsNumber(v) ? v->valuedouble : cJSON_GetNumberValue(item(v, "median"))) > 0;
    }
    return ok && rows == N;
}

/* The report's own figures: the machine (N nodes, the SLIT), the factor matrices (N x N,
 * measured), and the characterization's exact page counts: each policy's 4 MiB array whole
 * (1024 pages), bind_all's on one node, cyclic's on every node within one page of 1024 / N,
 * first_touch's on the node of the master's CPU (pinned compactly: CPU 0's), and one
 * recommendation per pattern (3 ops x 3 accesses x 2 schedules). A stub or a half-written file
 * fails here. */
static void check_report_json(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[1 << 21];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    cJSON *root = cJSON_Parse(buf);
    CHECK(root != NULL, "report --quick: %s parses (%zu bytes)", path, n);
    if (!root)
        return;
    const cJSON *mach = item(root, "machine"), *fac = item(root, "factors"),
                *ch = item(root, "characterization"), *recs = item(root, "recommendations");
    const cJSON *dist = item(mach, "distances");
    int slit = cJSON_GetArraySize(dist) == N, i = 0;
    for (const cJSON *r = dist ? dist->child : NULL; r && slit; r = r->next, i++) {
        int j = 0;
        slit = cJSON_GetArraySize(r) == N;
        for (const cJSON *v = r->child; v && slit; v = v->next, j++)
            slit = i == j ? v->valuedouble == 10 : v->valuedouble > 10;
    }
    CHECK(cJSON_GetNumberValue(item(mach, "node_count")) == N &&
              cJSON_GetArraySize(item(mach, "nodes")) == N && slit,
          "report --quick: machine: %d nodes, an %dx%d SLIT with 10 on its diagonal", N, N, N);
    CHECK(positive_matrix(item(fac, "latency_ns")) && positive_matrix(item(fac, "bandwidth_mb_per_s")) &&
              positive_matrix(item(fac, "numa_factor")),
          "report --quick: latency, bandwidth and NUMA factor matrices %dx%d, all measured", N, N);
    const npl_topo *t = npl_topo_self();
    int master_node = t ? npl_topo_cpu_node(t, npl_pin_cpu(t, "compact", 0)) : -1;
    int policies = 0, bad = 0;
    const cJSON *loc = item(ch, "locality");
    for (const cJSON *e = loc ? loc->child : NULL; e; e = e->next, policies++) {
        const char *pol = cJSON_GetStringValue(item(e, "policy"));
        long total = 0, top = 0, lo = LONG_MAX, on_master = 0;
        int nodes = 0;
        for (const cJSON *o = item(e, "nodes") ? item(e, "nodes")->child : NULL; o; o = o->next, nodes++) {
            long pages = (long)cJSON_GetNumberValue(item(o, "pages"));
            total += pages;
            top = pages > top ? pages : top;
            lo = pages < lo ? pages : lo;
            on_master += (int)cJSON_GetNumberValue(item(o, "os_id")) == master_node ? pages : 0;
        }
        int ok = nodes == N && total == 1024;
        if (pol && !strcmp(pol, "bind_all"))
            ok = ok && top == 1024;
        else if (pol && !strcmp(pol, "cyclic"))
            ok = ok && lo >= 1024 / N && top <= (1024 + N - 1) / N;
        else if (pol && !strcmp(pol, "first_touch"))
            ok = ok && on_master == 1024;
        if (!ok) {
            bad++;
            printf("  | %s: %ld pages over %d nodes (top %ld, least %ld, on the master's node %d: "
                   "%ld)\n", pol ? pol : "?", total, nodes, top, lo, master_node, on_master);
        }
    }
    CHECK(policies == 9 && bad == 0, "report --quick: the characterization's 9 policies' arrays "
          "placed as each says, page by page (%d policies, %d off)", policies, bad);
    int pats = 0, named = 1;
    for (const cJSON *r = recs ? recs->child : NULL; r; r = r->next, pats++)
        named = named && cJSON_GetStringValue(item(r, "op")) &&
                cJSON_GetStringValue(item(r, "access")) && cJSON_GetStringValue(item(r, "schedule"));
    CHECK(pats == 18 && named, "report --quick: 18 recommendations, each naming its op, access "
          "and schedule (%d)", pats);
    cJSON_Delete(root);
}

static void test_measure_report(void)
{
    const char *conf = "/tmp/guest_cli_measure.conf";
    int rc = RUN("numaplace", "measure", "--quick", "--out", (char *)conf);
    npl_config *c = NULL;
    int nodes[64];
    double lat[64 * 64], bw[64 * 64];
    int lr = rc == 0 ? npl_config_load(&c, conf) : -1;
    int n = c ? npl_config_factors(c, nodes, lat, bw, 64) : -1;
    int pos = n > 0;
    for (int i = 0; i < n * n && pos; i++)
        pos = lat[i] > 0 && bw[i] > 0;
    CHECK(rc == 0 && lr == 0 && n == N && pos,
          "measure --quick: a config with an %dx%d factor matrix, all measured (status %d, load "
          "%d: %s, n %d)", N, N, rc, lr, lr ? npl_last_error() : "", n);
    /* two nodes or more: the pages a second npl_migrate_range moved (the advice's next-touch
     * cost; numaplace profile records it) */
    const char *mig = c ? npl_config_get(c, "factors", "migrate_pages_s") : NULL;
    CHECK(N < 2 || (mig && atof(mig) >= 1), "measure --quick: [factors] migrate_pages_s = %s",
          mig ? mig : "(absent)");
    npl_config_free(c);
    rc = RUN("numaplace", "report", "--quick", "--no-plots", "--out", "/tmp/guest_cli_report");
    CHECK(rc == 0 && file_has("/tmp/guest_cli_report/index.html", "<html"),
          "report --quick: index.html (status %d)", rc);
    check_report_json("/tmp/guest_cli_report/results.json");
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child-alloc"))
        return child_alloc(argv[2], (size_t)atol(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "--child-nt"))
        return child_nt((size_t)atol(argv[2]));
    if (argc >= 3 && !strcmp(argv[1], "--child-static"))
        return child_static(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "--child-nodes"))
        return child_nodes(argv[2], (size_t)atol(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "--child-pin"))
        return child_pin(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
    size_t mib = 16;
    int given = 0; /* --nodes: the guest's shape, which must be this machine's */
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            N = atoi(argv[++i]), given = 1;
        else if (!strcmp(argv[i], "--cpus-per-node"))
            K = atoi(argv[++i]);
    }
    int measure_report = 0;
    for (int i = 1; i < argc; i++)
        measure_report |= !strcmp(argv[i], "--measure-report");
    numa_balancing_off(); /* exact placement checks */
    const npl_topo *t = npl_topo_self();
    CHECK(t != NULL, "topology: %s", npl_last_error());
    if (given)
        CHECK(t && npl_topo_node_count(t, 0) == N, "this machine has %d usable nodes, --nodes "
              "says %d", t ? npl_topo_node_count(t, 0) : -1, N);
    if (t) /* without --nodes (on the host): this machine's */
        N = npl_topo_node_count(t, 0);
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    test_errors();
    test_policies(self, mib);
    test_pin(self);
    test_interposer(self);
    test_verbose(self);
    if (measure_report || !given) /* tests/guest/run.sh asks for them in one shape (3 nodes) */
        test_measure_report();
    else
        printf("INFO measure --quick and report --quick: not asked (--measure-report)\n");
    return check_summary("guest_cli");
}
