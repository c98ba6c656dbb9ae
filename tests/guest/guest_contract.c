/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_contract - numaplace keeps the program's contract with the kernel on a machine of
 * several nodes (issue 36). The host's tests/contract/test_contract.sh runs the three builds of
 * tests/progs/contract_calls.c with next-touch's arms forced on its one node
 * (NUMAPLACE_NEXT_TOUCH_FULL=1); here they are armed as on any NUMA machine. The gcc build with
 * -D_FORTIFY_SOURCE=3 (fortified reads, preadv2/pwritev2, recvmmsg/sendmmsg, poll/select asleep
 * while sampler rounds go on, getrandom, the stat family, getdents64, vmsplice, a guard page,
 * dirty tracking, a read-only file mapped MAP_FIXED, preads into a phase-changing array) prints,
 * line for line, what it prints alone, under `numaplace profile` at a high rate, under `run
 * --next-touch` (its buffers armed by OpenMP regions) and under `run --profile` of its own
 * profile, where its phase-changing array (checked: so advised) is re-armed by next-touch at
 * each of its regions, and exits with the same status. Threads pinned scatter: two threads,
 * two nodes. Lines
 * are matched by their first 22 characters (the case's name).
 *   guest_contract --nodes N --cpus-per-node K */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY 22

/* the line of text whose first KEY characters (trailing blanks dropped) are key's, or NULL */
static const char *line_of(const char *text, const char *key, size_t klen)
{
    for (const char *l = text; l && *l;) {
        const char *end = strchr(l, '\n');
        size_t n = end ? (size_t)(end - l) : strlen(l), k = n < KEY ? n : KEY;
        while (k && l[k - 1] == ' ')
            k--;
        if (k == klen && !memcmp(l, key, k))
            return l;
        l = end ? end + 1 : NULL;
    }
    return NULL;
}

static int lines(const char *t)
{
    int n = 0;
    for (; t && *t; t++)
        n += *t == '\n';
    return n;
}

/* every line of ref is in got, the same; as many lines; the same status */
static void same(const char *mode, const char *prog, const char *ref, int ref_rc, const char *got,
                 int rc, const char *err)
{
    int bad = 0, n = 0;
    for (const char *l = ref; l && *l; n++) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l), k = len < KEY ? len : KEY;
        while (k && l[k - 1] == ' ')
            k--;
        const char *g = line_of(got, l, k);
        size_t glen = g ? strcspn(g, "\n") : 0;
        if (!g || glen != len || memcmp(g, l, len)) {
            bad++;
            printf("  %s %s: want \"%.*s\"\n  %*s got  \"%.*s\"\n", mode, prog, (int)len, l,
                   (int)(strlen(mode) + strlen(prog) + 1), "", (int)glen, g ? g : "");
        }
        l = end ? end + 1 : NULL;
    }
    CHECK(n > 0 && bad == 0, "%s %s: %d of %d lines as in the plain run", mode, prog, n - bad, n);
    CHECK(lines(got) == lines(ref), "%s %s: as many lines (%d, plain %d)", mode, prog, lines(got),
          lines(ref));
    CHECK(rc == ref_rc, "%s %s: status %d, as plain (%d)%s%s", mode, prog, rc, ref_rc,
          rc != ref_rc && err ? ":\n" : "", rc != ref_rc && err ? err : "");
}

/* the profile's array of 2 MiB (contract_calls' phase_changing) is advised phase-changing with
 * next-touch phases */
static int phase_advised(const char *path)
{
    char *j = slurp(path);
    const char *a = j ? strstr(j, "\"bytes\": 2097152,") : NULL;
    const char *adv = a ? strstr(a, "\"advice\": {") : NULL, *next = a ? strstr(a + 1, "\"site\"") : NULL;
    int ok = adv && (!next || adv < next) &&
             !strncmp(adv, "\"advice\": {\"pattern\": \"phase-changing\"", 38);
    const char *ph = ok ? strstr(adv, "\"next_touch_phases\": [") : NULL;
    ok = ok && ph && ph[strlen("\"next_touch_phases\": [")] != ']';
    if (!ok)
        printf("  the 2 MiB array's advice: %.300s\n", adv ? adv : "(none)");
    free(j);
    return ok;
}

int main(int argc, char **argv)
{
    int N = 1, K = 1;
    guest_args(argc, argv, &N, &K);
    CHECK(N >= 2, "a guest of two nodes or more, where pages move (%d)", N);
    if (N < 2)
        return check_summary("guest_contract");
    static const char *const progs[] = {"contract_calls_f3"};
    int found = 0;
    for (size_t i = 0; i < sizeof progs / sizeof *progs; i++) {
        char path[256];
        snprintf(path, sizeof path, "/usr/local/bin/%s", progs[i]);
        if (access(path, X_OK)) {
            CHECK(0, "%s is in the guest", path);
            continue;
        }
        found++;
        int ref_rc = spawn_to("/tmp/gc_ref.txt", "/tmp/gc_ref_err.txt", (char *const[]){path, NULL});
        char *ref = slurp("/tmp/gc_ref.txt");
        CHECK(ref && lines(ref) >= 10, "%s alone: its lines (%d)", progs[i], lines(ref));
        char *const profile[] = {"numaplace", "profile", "--pin", "scatter", "--rate", "50000",
                                 "--out", "/tmp/gc_p.json", "--", path, NULL};
        char *const nt[] = {"numaplace", "run", "--next-touch", "--pin", "scatter", "--", path, NULL};
        char *const apply[] = {"numaplace", "run", "--pin", "scatter", "--profile", "/tmp/gc_p.json",
                               "--", path, NULL};
        char *const *modes[] = {profile, nt, apply};
        static const char *const names[] = {"profile", "next-touch", "run-profile"};
        for (int m = 0; m < 3; m++) {
            if (m == 2 && access("/tmp/gc_p.json", R_OK)) {
                CHECK(0, "%s: numaplace profile wrote /tmp/gc_p.json", progs[i]);
                continue;
            }
            if (m == 2) /* what run --profile re-arms: the phase-changing array */
                CHECK(phase_advised("/tmp/gc_p.json"), "%s: its 2 MiB array advised phase-changing, "
                      "with next-touch phases (run --profile re-arms it at its regions)", progs[i]);
            int rc = spawn_to("/tmp/gc_got.txt", "/tmp/gc_err.txt", modes[m]);
            char *got = slurp("/tmp/gc_got.txt"), *err = slurp("/tmp/gc_err.txt");
            same(names[m], progs[i], ref, ref_rc, got, rc, err);
            free(got);
            free(err);
        }
        unlink("/tmp/gc_p.json");
        free(ref);
    }
    CHECK(found > 0, "a contract_calls build is in the guest (%d)", found);
    return check_summary("guest_contract");
}
