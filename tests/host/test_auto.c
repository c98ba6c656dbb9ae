/* SPDX-License-Identifier: BSD-3-Clause */
/* test_auto.c - the library's "auto" policy (include/numaplace/profile.h): the program profiles
 * itself (`numaplace profile -- test_auto --child`), then allocates the same arrays from the same
 * call sites with npl_alloc_auto(profile): each gets the policy the profile advises for its site
 * and ordinal (npl_profile_advice says which; the array's plan shows what it got): one call site's
 * two arrays have different patterns (blocked, serial), so the ordinal decides. Also: arrays of
 * npl_alloc_auto are tracked under numaplace profile (two threads use a half of each: blocked) (the profile has them, at their call sites in
 * this program), a call past the profiled ordinals takes the last one's advice, p = NULL without
 * run --profile is the default policy, a profile of another program or a broken one is refused.
 * env NUMAPLACE: the numaplace binary. */
#define _GNU_SOURCE
#include "check.h"

#include <numaplace/profile.h>
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1u << 20)

/* the arrays: two from one site (ordinals 0 and 1: blocked, serial), one from another (blocked) */
static void *arrays[4];
static const void *volatile site_a, *volatile site_b;

static __attribute__((noinline)) void *from_a(const npl_profile *p, size_t mib)
{
    npl_shape s = {1, 1, {mib * MIB, 0, 0}, NPL_ROW_MAJOR};
    void *r = npl_alloc_auto(p, &s, 0);
    site_a = __builtin_return_address(0); /* unused: keeps this frame's call a real call */
    return r;
}

static __attribute__((noinline)) void *from_b(const npl_profile *p, size_t mib)
{
    npl_shape s = {1, 1, {mib * MIB, 0, 0}, NPL_ROW_MAJOR};
    void *r = npl_alloc_auto(p, &s, 0);
    site_b = __builtin_return_address(0);
    return r;
}

static size_t mib_now;
static pthread_barrier_t lockstep;
/* thread t of 2 reads and writes half t of every array, over and over: a blocked pattern. The
 * two threads wait for each other at every pass: on a loaded machine one of them could
 * otherwise run its passes alone for a while, and the profile's time windows then see one
 * thread last (a one-time change of owners: the steady state "serial") */
static void *half(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int rep = 0; rep < 400; rep++) {
        pthread_barrier_wait(&lockstep);
        for (int i = 0; i < 3; i++) {
            size_t bytes = (i == 2 ? 2 : 1) * mib_now * MIB, lo = t * bytes / 2, hi = lo + bytes / 2;
            if (i == 1) /* ordinal 1 of from_a: thread 0 alone, the whole array (serial) */
                lo = 0, hi = t ? 0 : bytes;
            for (size_t k = lo; arrays[i] && k < hi; k += 512)
                ((volatile char *)arrays[i])[k] += 1;
        }
    }
    return NULL;
}

static void make(const npl_profile *p, size_t mib)
{
    arrays[0] = from_a(p, mib);
    arrays[1] = from_a(p, mib);
    arrays[2] = from_b(p, 2 * mib);
}

/* the main thread (thread 0) uses the first half, the thread it creates (thread 1) the second */
static void use(size_t mib)
{
    pthread_t th;
    mib_now = mib;
    if (pthread_barrier_init(&lockstep, NULL, 2) != 0)
        return;
    if (pthread_create(&th, NULL, half, (void *)(intptr_t)1) == 0) {
        half((void *)(intptr_t)0);
        pthread_join(th, NULL);
    }
    pthread_barrier_destroy(&lockstep);
}

static void drop(void)
{
    for (int i = 0; i < 4; i++) {
        npl_free(arrays[i]);
        arrays[i] = NULL;
    }
}

static void plan_text(const void *a, char *buf, size_t size)
{
    npl_plan *pl = NULL;
    snprintf(buf, size, "?");
    if (npl_array_plan(a, &pl) == 0)
        npl_plan_format(pl, buf, size);
    npl_plan_free(pl);
}

/* the profile with every array's advice replaced by an explicit map onto node 63 (in
 * machine.nodes: a node this machine lacks), whatever the advice was: npl_alloc_auto gives NULL
 * and EINVAL, as for a policy it cannot use */
static void explicit_missing_node(const char *text, const char *prof)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    const char *at = text, *nodes = text ? strstr(text, "\"nodes\": [0]") : NULL;
    int arrays = 0;
    if (!out || !nodes) {
        CHECK(0, "explicit map to a missing node: the profile's text (%p)", (void *)nodes);
        if (out)
            fclose(out);
        free(buf);
        return;
    }
    fprintf(out, "%.*s\"nodes\": [0, 63]", (int)(nodes - at), at);
    at = nodes + strlen("\"nodes\": [0]");
    /* an array's "nchunks", then its advice object, whose last member is "chunk_nodes" (null
     * or a list of numbers: the first '}' after it closes the object) */
    for (const char *nc; (nc = strstr(at, "\"nchunks\": ")) != NULL; arrays++) {
        long n = strtol(nc + strlen("\"nchunks\": "), NULL, 10);
        const char *adv = strstr(nc, "\"advice\": {");
        const char *cn = adv ? strstr(adv, "\"chunk_nodes\": ") : NULL;
        const char *stop = cn ? strchr(cn, '}') : NULL;
        if (!stop || n <= 0)
            break;
        fprintf(out, "%.*s\"advice\": {\"pattern\": \"irregular\", \"policy\": \"explicit\", "
                "\"confidence\": 0.5, \"local\": {\"policy\": 1, \"first_touch\": null, "
                "\"best\": 1}, \"reason\": \"a map to node 63\", \"replicate\": false, "
                "\"next_touch_phases\": [], \"samples\": 100, \"period_pages\": null, "
                "\"block_threads\": null, \"chunk_nodes\": [", (int)(adv - at), at);
        for (long c = 0; c < n; c++)
            fprintf(out, "%s63", c ? "," : "");
        fputs("]}", out);
        at = stop + 1;
    }
    fputs(at, out);
    fclose(out);
    FILE *f = fopen(prof, "w");
    if (f) {
        fwrite(buf, 1, size, f);
        fclose(f);
    }
    free(buf);
    npl_profile *q = NULL;
    CHECK(arrays == 3 && npl_profile_load(&q, prof) == 0,
          "a profile of 3 explicit maps to node 63 (%d) loads: %s", arrays, npl_last_error());
    errno = 0;
    void *r = q ? from_a(q, 4) : NULL;
    CHECK(q && !r && errno == EINVAL, "npl_alloc_auto, a map to a node this machine lacks: NULL, "
          "EINVAL (%p, %s)", r, strerror(errno));
    npl_free(r);
    npl_profile_free(q);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child")) {
        make(NULL, 4);
        use(4);
        drop();
        return 0;
    }
    const char *np = getenv("NUMAPLACE");
    if (!np) {
        SKIP("numaplace-cli", "npl_alloc_auto from a profile of this program: NUMAPLACE (the "
             "numaplace binary) is not set");
        return check_summary("auto");
    }
    char prof[] = "/tmp/npl_test_auto.XXXXXX";
    int fd = mkstemp(prof);
    char self[512];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(fd >= 0 && sl > 0, "a temporary profile (%d) and /proc/self/exe (%zd)", fd, sl);
    if (fd < 0 || sl <= 0)
        return check_summary("auto");
    close(fd);
    self[sl] = 0;
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(125);
        execl(np, np, "profile", "--rate", "20000", "--out", prof, "--", self, "--child",
              (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "numaplace profile -- test_auto --child: %d", st);

    npl_profile *p = NULL;
    CHECK(npl_profile_load(&p, prof) == 0, "npl_profile_load: %s", npl_last_error());
    /* the allocation sites the profile holds: from_a's call (ordinals 0, 1), from_b's (0) */
    make(p, 4); /* same sites, same ordinals: sets site_a/site_b */
    char pol[3][192] = {"", "", ""}, pat[3][64] = {"", "", ""};
    CHECK(arrays[0] && arrays[1] && arrays[2], "npl_alloc_auto with a profile: %s",
          npl_last_error());
    /* the advice for from_a's and from_b's call of npl_alloc_auto: the return address of that
     * call lies inside from_a/from_b; the profile has an array exactly there */
    int adv_a = -1, adv_b = -1;
    for (uintptr_t a = (uintptr_t)from_a; a < (uintptr_t)from_a + 200 && adv_a < 0; a++)
        if (npl_profile_advice(p, (const void *)a, 0, pol[0], sizeof pol[0], pat[0],
                               sizeof pat[0]) == 0)
            adv_a = (int)(a - (uintptr_t)from_a);
    for (uintptr_t a = (uintptr_t)from_b; a < (uintptr_t)from_b + 200 && adv_b < 0; a++)
        if (npl_profile_advice(p, (const void *)a, 0, pol[2], sizeof pol[2], pat[2],
                               sizeof pat[2]) == 0)
            adv_b = (int)(a - (uintptr_t)from_b);
    CHECK(adv_a >= 0 && adv_b >= 0, "the profile has arrays at both call sites (%d, %d)", adv_a,
          adv_b);
    printf("advice: site a #0 %s (%s), site b #0 %s (%s)\n", pol[0], pat[0], pol[2], pat[2]);
    CHECK(!strcmp(pat[0], "blocked") && !strcmp(pat[2], "blocked") &&
              !strncmp(pol[0], "bind_block", 10),
          "two threads on a half each: blocked, bind_block (%s %s, %s)", pat[0], pat[2], pol[0]);
    CHECK(npl_profile_advice(p, (const void *)((uintptr_t)from_a + adv_a), 1, pol[1],
                             sizeof pol[1], pat[1], sizeof pat[1]) == 0,
          "site a has an ordinal 1 too");
    /* the two arrays of one call site differ (blocked, serial): an advice looked up without its
     * ordinal, or with the next one's, gives one of them the other's policy */
    CHECK(!strcmp(pat[1], "serial") && strcmp(pol[0], pol[1]),
          "site a's ordinal 1 is serial, its advice not ordinal 0's (%s %s, %s)", pat[1], pol[1],
          pol[0]);
    for (int i = 0; i < 3 && adv_a >= 0 && adv_b >= 0; i++) {
        npl_policy *want = NULL;
        char got[512], w[512] = "?";
        plan_text(arrays[i], got, sizeof got);
        if (strcmp(pol[i], "explicit") && npl_policy_parse(&want, pol[i]) == 0)
            npl_policy_format(want, w, sizeof w);
        npl_policy_free(want);
        CHECK(strstr(got, w) != NULL, "array %d got its advice %s (%s): plan %s", i, pol[i], w, got);
    }
    /* a call past the profiled ordinals: the last one's advice */
    char late[192];
    CHECK(npl_profile_advice(p, (const void *)((uintptr_t)from_a + adv_a), 7, late, sizeof late,
                             NULL, 0) == 0 && !strcmp(late, pol[1]),
          "ordinal 7 at site a takes ordinal 1's advice: %s vs %s", late, pol[1]);
    CHECK(npl_profile_advice(p, (const void *)main, 0, NULL, 0, NULL, 0) == -1 && errno == ENOENT,
          "no array at another address: ENOENT");
    /* replicas: advised for a read-mostly shared array only (blocked and serial arrays here:
     * not; the guest's guest_replicate has the read-mostly table) */
    CHECK(npl_profile_replicate(p, (const void *)((uintptr_t)from_a + adv_a), 0) == 0 &&
              npl_profile_replicate(p, (const void *)((uintptr_t)from_a + adv_a), 1) == 0,
          "no replicas for the blocked and the serial array");
    errno = 0;
    CHECK(npl_profile_replicate(p, (const void *)main, 0) == -1 && errno == ENOENT,
          "npl_profile_replicate at another address: ENOENT");
    errno = 0;
    CHECK(npl_profile_replicate(NULL, (const void *)main, 0) == -1 && errno == EINVAL,
          "npl_profile_replicate(NULL): EINVAL");
    drop();
    npl_profile_free(p);

    /* p = NULL, no run --profile: the default policy (first touch here) */
    unsetenv("NUMAPLACE_PROFILE_APPLY");
    unsetenv("NUMAPLACE_POLICY");
    void *d = from_b(NULL, 1);
    char got[512];
    plan_text(d, got, sizeof got);
    CHECK(d && strstr(got, "first_touch"), "no profile: the default policy: %s", got);
    npl_free(d);

    /* refused: another program's profile, a broken one */
    FILE *f = fopen(prof, "r+");
    char *text = NULL;
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc(len + 1);
        if (text && fread(text, 1, len, f) == len)
            text[len] = 0;
        fclose(f);
    }
    explicit_missing_node(text, prof);
    char *bid = text ? strstr(text, "\"build_id\": \"") : NULL;
    if (bid) { /* the program's build-id changed: another program */
        bid += 13;
        *bid = *bid == '0' ? '1' : '0';
        f = fopen(prof, "w");
        if (f) {
            fwrite(text, 1, len, f);
            fclose(f);
        }
        CHECK(npl_profile_load(&p, prof) == -1 && errno == EINVAL &&
                  strstr(npl_last_error(), "not of this program"),
              "another program's profile refused: %s", npl_last_error());
        f = fopen(prof, "w");
        if (f) {
            fwrite(text, 1, len / 2, f);
            fclose(f);
        }
        CHECK(npl_profile_load(&p, prof) == -1 && errno == EINVAL,
              "a truncated profile refused: %s", npl_last_error());
    }
    CHECK(npl_profile_load(&p, "/nonexistent/profile.json") == -1 && errno == ENOENT,
          "a missing file: ENOENT");
    free(text);
    unlink(prof);
    return check_summary("auto");
}
