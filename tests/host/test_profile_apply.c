/* SPDX-License-Identifier: BSD-3-Clause */
/* test_profile_apply.c - `numaplace run --profile` gives each array of one call site the advice of
 * its own ordinal, and the kernel holds it: the child allocates three arrays through one helper
 * (as real codes do), used blocked by two threads, touched once, and used by the main thread alone
 * (serial); the driver profiles it (`numaplace profile`) and edits the stored advice of ordinal 1
 * (which the classifier gives its blocked sibling's advice) to first_touch by hand: on one node
 * every other policy is the same kernel policy (MPOL_PREFERRED on node 0). It reads each
 * ordinal's advice (npl_profile_advice), runs the child again under `run --profile`, where the
 * child reports the kernel's policy of each array (get_mempolicy(MPOL_F_ADDR), which one node
 * reports as well as many) before touching it. Asserted per array: first_touch advice -> no
 * policy (MPOL_DEFAULT); any other -> a policy on this machine's nodes. The three advices differ
 * (blocked, first touch, serial), so an advice taken without its ordinal, from the next ordinal,
 * or never given to the kernel (a lazy range never mbind'ed) fails here.
 * env NUMAPLACE: the numaplace binary. */
#define _GNU_SOURCE
#include "check.h"

#include <numaplace/profile.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)
#define BYTES (4 * MIB)

static char *arr[3];
static pthread_barrier_t lockstep;

static __attribute__((noinline)) char *alloc_one(size_t bytes)
{
    char *p = malloc(bytes);
    __asm__ volatile("" ::: "memory"); /* keeps the call to malloc a real call */
    return p;
}

static _Atomic int stop; /* thread 0 ends the passes; both read it between two barriers */

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* thread t of 2: half t of arr[0] (blocked); thread 0 alone: all of arr[2] (serial); at least
 * 300 passes and 0.5 s, so that a loaded machine's profile still has the samples to classify
 * all three (a fixed count ran too short once under load: too few samples) */
static void *work(void *arg)
{
    int t = (int)(intptr_t)arg;
    double t0 = seconds();
    for (int rep = 0;; rep++) {
        pthread_barrier_wait(&lockstep);
        int done = stop;
        pthread_barrier_wait(&lockstep); /* both have read it before thread 0 may write it */
        if (done)
            break;
        for (size_t k = t * BYTES / 2; k < (size_t)(t + 1) * BYTES / 2; k += 512)
            ((volatile char *)arr[0])[k] += 1;
        for (size_t k = 0; !t && k < BYTES; k += 512)
            ((volatile char *)arr[2])[k] += 1;
        if (!t && rep >= 300 && seconds() - t0 >= 0.5)
            stop = 1;
    }
    return NULL;
}

/* the kernel's policy of the page at p: "MODE MASK" (the mask of the first 64 nodes) */
static void policy_of(const void *p, int *mode, unsigned long *mask)
{
    *mode = -1;
    *mask = 0;
    unsigned long m[16] = {0};
    if (syscall(SYS_get_mempolicy, mode, m, 64 * 16, p, 2 /* MPOL_F_ADDR */) == 0)
        *mask = m[0];
}

static int child(int report)
{
    for (int i = 0; i < 3; i++)
        arr[i] = alloc_one(BYTES);
    if (!arr[0] || !arr[1] || !arr[2])
        return 1;
    for (int i = 0; report && i < 3; i++) { /* before any touch: what run --profile set */
        int mode;
        unsigned long mask;
        policy_of(arr[i] + BYTES / 2, &mode, &mask);
        printf("array %d mode %d mask %lx\n", i, mode, mask);
    }
    arr[1][0] = 1; /* one touch */
    pthread_t th;
    if (pthread_barrier_init(&lockstep, NULL, 2) != 0 ||
        pthread_create(&th, NULL, work, (void *)(intptr_t)1) != 0)
        return 1;
    work((void *)(intptr_t)0);
    pthread_join(th, NULL);
    return 0;
}

/* the file at path as one string (empty when it cannot be read), in a buffer the next call reuses */
static char *read_text(const char *path)
{
    static char text[1 << 22];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    return text;
}

/* In the profile file at path, the array at ordinal `ordinal`: the value of its first `key`
 * after the ordinal (a string or a list: up to the closing quote or bracket) replaced by value */
static int edit_advice(const char *path, int ordinal, const char *key, const char *value)
{
    char *text = read_text(path);
    char ord[32];
    snprintf(ord, sizeof ord, "\"ordinal\": %d,", ordinal);
    char *o = strstr(text, ord), *k = o ? strstr(o, key) : NULL;
    char *v = k ? k + strlen(key) : NULL;
    char *end = v ? strchr(v + 1, *v == '"' ? '"' : ']') : NULL;
    if (!end)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%.*s%s%s", (int)(v - text), text, value, end + 1);
    return fclose(f);
}

/* the id of the last phase the profile at path lists (-1: none): the sampler's time windows
 * depend on how the child was scheduled, so a hand edit names a phase that exists */
static int last_phase_id(const char *path)
{
    const char *text = read_text(path);
    const char *ph = strstr(text, "\"phases\": ["), *end = ph ? strstr(ph, "\"transitions\"") : NULL;
    int id = -1;
    for (const char *q = ph; q && end && (q = strstr(q, "\"id\": ")) && q < end; q++)
        id = atoi(q + strlen("\"id\": "));
    return id;
}

static int count_lines(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* runs argv with stdout into out (size bytes), stderr into the file err (NULL: dropped): the
 * exit status */
static int run_np(char *out, size_t size, char *const argv[], const char *err)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        if (!freopen(err ? err : "/dev/null", "w", stderr))
            _exit(125);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < size && (r = read(fd[0], out + n, size - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child"))
        return child(argc > 2 && !strcmp(argv[2], "--report"));
    char *np = getenv("NUMAPLACE");
    if (!np) {
        SKIP("numaplace-cli", "run --profile's placement per ordinal: NUMAPLACE (the numaplace "
             "binary) is not set");
        return check_summary("profile_apply");
    }
    char prof[] = "/tmp/npl_test_profile_apply.XXXXXX", self[512], out[4096];
    int fd = mkstemp(prof);
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(fd >= 0 && sl > 0, "a temporary profile (%d) and /proc/self/exe (%zd)", fd, sl);
    if (fd < 0 || sl <= 0)
        return check_summary("profile_apply");
    close(fd);
    self[sl] = 0;
    char *prof_argv[] = {np, "profile", "--rate", "20000", "--threshold", "1M", "--out", prof,
                         "--", self, "--child", NULL};
    int rc = run_np(out, sizeof out, prof_argv, NULL);
    CHECK(rc == 0, "numaplace profile -- test_profile_apply --child: %d", rc);
    CHECK(edit_advice(prof, 1, "\"policy\": ", "\"first_touch\"") == 0,
          "the profile's ordinal 1 advised first_touch by hand");

    /* each ordinal's advice at alloc_one's call of malloc */
    npl_profile *p = NULL;
    CHECK(npl_profile_load(&p, prof) == 0, "npl_profile_load: %s", npl_last_error());
    char pol[3][192] = {"", "", ""}, pat[3][64] = {"", "", ""};
    int off = -1;
    for (uintptr_t a = (uintptr_t)alloc_one; p && a < (uintptr_t)alloc_one + 200 && off < 0; a++)
        if (npl_profile_advice(p, (const void *)a, 0, pol[0], sizeof pol[0], pat[0],
                               sizeof pat[0]) == 0)
            off = (int)(a - (uintptr_t)alloc_one);
    for (int i = 1; i < 3 && off >= 0; i++)
        CHECK(npl_profile_advice(p, (const void *)((uintptr_t)alloc_one + off), (unsigned)i, pol[i],
                                 sizeof pol[i], pat[i], sizeof pat[i]) == 0,
              "the profile has ordinal %d of alloc_one's site", i);
    npl_profile_free(p);
    printf("advice: #0 %s (%s), #1 %s (%s), #2 %s (%s)\n", pol[0], pat[0], pol[1], pat[1], pol[2],
           pat[2]);
    /* the control: the three differ where the kernel sees it (first touch or not), so that an
     * advice taken from another ordinal changes an array's kernel policy */
    CHECK(!strcmp(pat[0], "blocked") && !strcmp(pol[1], "first_touch") &&
              !strcmp(pat[2], "serial") && strcmp(pol[0], "first_touch") &&
              strcmp(pol[2], "first_touch"),
          "one site: blocked, first touch (by hand), serial: %s %s, %s %s, %s %s", pat[0], pol[0],
          pat[1], pol[1], pat[2], pol[2]);

    char *run_argv[] = {np, "run", "--profile", prof, "--threshold", "1M", "--", self, "--child",
                        "--report", NULL};
    rc = run_np(out, sizeof out, run_argv, NULL);
    CHECK(rc == 0, "numaplace run --profile -- test_profile_apply --child --report: %d", rc);
    const npl_topo *t = npl_topo_self();
    unsigned long nodes = 0;
    for (int n = 0; t && n < npl_topo_node_count(t, 1) && n < 64; n++)
        nodes |= 1ul << npl_topo_node_id(t, n);
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "array %d mode ", i);
        const char *l = strstr(out, key);
        int mode = -1;
        unsigned long mask = 0;
        if (l)
            sscanf(l + strlen(key), "%d mask %lx", &mode, &mask);
        if (!strcmp(pol[i], "first_touch"))
            CHECK(mode == 0, "array %d (%s): no policy, MPOL_DEFAULT (mode %d)", i, pol[i], mode);
        else
            CHECK(mode > 0 && mask && (mask & ~nodes) == 0,
                  "array %d (%s): a policy on this machine's nodes %lx before its first touch "
                  "(mode %d, nodes %lx)", i, pol[i], nodes, mode, mask);
    }

    /* next-touch: ordinal 2 advised next-touch at the last phase by hand (a phase-changing array's
     * advice): run --profile registers that array, and only it, for next-touch */
    char err[] = "/tmp/npl_test_profile_apply_err.XXXXXX";
    int efd = mkstemp(err);
    if (efd >= 0)
        close(efd);
    char *verbose_argv[] = {np, "run", "--profile", prof, "--threshold", "1M", "--verbose", "--",
                            self, "--child", NULL};
    rc = run_np(out, sizeof out, verbose_argv, err);
    int before = count_lines(err, "registered for next-touch");
    int last = last_phase_id(prof);
    char phases[32];
    snprintf(phases, sizeof phases, "[%d]", last);
    CHECK(rc == 0 && last >= 0 && edit_advice(prof, 2, "\"next_touch_phases\": ", phases) == 0,
          "run --profile (%d), and ordinal 2 advised next-touch at phase %d (the profile's last) "
          "by hand", rc, last);
    rc = run_np(out, sizeof out, verbose_argv, err);
    int after = count_lines(err, "registered for next-touch");
    CHECK(rc == 0 && before == 0 && after == 1,
          "registered for next-touch: no array before, one after the edit (%d, %d; status %d)",
          before, after, rc);
    unlink(err);
    unlink(prof);
    return check_summary("profile_apply");
}
