/* SPDX-License-Identifier: BSD-3-Clause */
/* test_hostile_mai.c - hostile input to the MAi-compatible API (round 3): a policy or migration
 * call that fails must leave the array as it was: no page faulted in or moved by a first block
 * before a later node is found bad, and next-touch still armed when the arguments are bad. */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <mai.h>
#include <numaplace.h>
#include <stdint.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* pages of [p, p+len) present in memory (mincore) */
static size_t present_pages(void *p, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = len / page, k = 0;
    unsigned char *v = calloc(n, 1);
    if (v && mincore(p, len, v) == 0)
        for (size_t i = 0; i < n; i++)
            k += v[i] & 1;
    free(v);
    return k;
}

/* protection of the mapping holding p, as in /proc/self/maps ("rw-p", "---p") */
static void perms_of(const void *p, char out[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    strcpy(out, "?");
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        char perm[5];
        if (sscanf(line, "%lx-%lx %4s", &s, &e, perm) == 3 && (uintptr_t)p >= s &&
            (uintptr_t)p < e) {
            strcpy(out, perm);
            break;
        }
    }
    if (f)
        fclose(f);
}

/* a node list whose second node does not exist: the old code placed the first block, then
 * failed (pages faulted in on the first node, the policy code left as before) */
static void bad_node_after_good(void)
{
    const npl_topo *t = npl_topo_self();
    int missing = npl_topo_max_node_id(t) + 1, good = npl_topo_node_id(t, 0);
    int nodes[2] = {good, missing};
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    double **a = mai_alloc_2D(64, 512, sizeof(double), DOUBLE); /* 64 rows of one page */
    CHECK(a != NULL, "alloc 2D");
    if (!a)
        return;
    char *data = mai_get_realpointer(a);
    size_t len = 64 * page;
    struct {
        const char *name;
        void (*fn)(void *, int, int, int *);
    } calls[] = {{"cyclic_rows_sn", mai_cyclic_rows_sn}, {"skew_mapp_rows_sn", mai_skew_mapp_rows_sn},
                 {"ibind_rows_sn", mai_ibind_rows_sn}, {"cyclic_columns_sn", mai_cyclic_columns_sn}};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        errno = 0;
        calls[i].fn(a, 1, 2, nodes);
        int e = errno;
        CHECK(e == EINVAL && mai_last_errno() == EINVAL, "%s with node %d: EINVAL (%d)",
              calls[i].name, missing, e);
        CHECK(present_pages(data, len) == 0, "%s: no page faulted in before the bad node (%zu)",
              calls[i].name, present_pages(data, len));
        CHECK(mai_get_mempol(a) == -1, "%s: no policy recorded", calls[i].name);
    }
    errno = 0;
    mai_bind_rows_sn(a, 2, nodes);
    CHECK(errno == EINVAL && present_pages(data, len) == 0, "bind_rows_sn: nothing placed");
    /* the good call still works afterwards, every row then on the good node */
    mai_cyclic_rows_sn(a, 1, 1, nodes);
    CHECK(mai_last_errno() == 0 && mai_get_mempol(a) == CYCLIC_B, "good node list placed");
    CHECK(present_pages(data, len) == 64, "64 pages placed (%zu)", present_pages(data, len));
    mai_free_array(a);
}

/* bad arguments to an armed array: it stays armed (PROT_NONE, policy NEXTOUCH); the old code
 * disarmed it before checking them */
static void armed_stays_armed(void)
{
    const npl_topo *t = npl_topo_self();
    int missing = npl_topo_max_node_id(t) + 1;
    double **a = mai_alloc_2D(16, 512, sizeof(double), DOUBLE);
    if (!a)
        return;
    char *data = mai_get_realpointer(a);
    data[0] = 42;
    mai_next_touch(a);
    char perm[5];
    perms_of(data, perm);
    CHECK(mai_last_errno() == 0 && mai_get_mempol(a) == NEXTOUCH && !strcmp(perm, "---p"),
          "armed (%s)", perm);
    mai_migrate_rows(a, 9999, 2, 0);    /* node past MAXNODES */
    mai_migrate_rows(a, 0, 2, 15);      /* rows past the end */
    mai_migrate_gather(a, (unsigned long)missing);
    mai_bind_all_sn(a, 1, &missing);
    mai_cyclic_rows(a, 0);
    mai_prime_mapp_rows(a, 4, 1);       /* not a prime */
    int bad_list[2] = {0, missing};
    mai_skew_mapp_rows_sn(a, 1, 2, bad_list);
    perms_of(data, perm);
    CHECK(mai_get_mempol(a) == NEXTOUCH && !strcmp(perm, "---p"),
          "still armed after 7 failed calls (%s, policy %d)", perm, mai_get_mempol(a));
    CHECK(data[0] == 42, "data kept through the next-touch fault");
    mai_free_array(a);
}

/* config files that are not regular files: the old mai_init opened a FIFO with fopen and waited
 * for a writer forever (here: killed by the alarm in the child) */
static void bad_config_files(void)
{
    char dir[] = "/tmp/npl_hostile_mai_XXXXXX", fifo[64];
    int made = mkdtemp(dir) != NULL;
    CHECK(made, "mkdtemp %s: %s", dir, strerror(errno));
    if (!made)
        return;
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    made = mkfifo(fifo, 0600) == 0;
    CHECK(made, "mkfifo %s: %s", fifo, strerror(errno));
    if (!made) {
        rmdir(dir);
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        mai_init(fifo);
        int e1 = mai_last_errno();
        mai_init(dir);
        int e2 = mai_last_errno();
        mai_init("/dev/zero");
        int e3 = mai_last_errno();
        _exit(e1 == EINVAL && e2 == EISDIR && e3 == EINVAL && mai_get_num_nodes() == -1 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "mai_init on a FIFO, a directory, /dev/zero: EINVAL/EISDIR/EINVAL at once (status 0x%x%s)",
          st, WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? ": hung on the FIFO" : "");
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    bad_config_files();
    mai_init(NULL);
    CHECK(mai_last_errno() == 0, "mai_init(NULL) on this machine: errno %d", mai_last_errno());
    if (mai_last_errno())
        return check_summary("test_hostile_mai");
    bad_node_after_good();
    armed_stays_armed();
    mai_final();
    return check_summary("test_hostile_mai");
}
