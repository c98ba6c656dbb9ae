/* SPDX-License-Identifier: BSD-3-Clause */
/* rearm_race.h - re-arming a next-touch array while other threads write to it must finish, and
 * every write must survive (tests/host/test_nexttouch.c on the host, tests/guest/guest_hostile.c
 * in the multi-node guest, where every resolved chunk moves pages between nodes).
 *
 * In a forked child (a crash or a hang ends the child, not the test): `writers` threads each add
 * 1 to their own word of every page of a library array, pass after pass, at least `passes`
 * passes and until the re-armer is done; one thread re-arms the whole array for next-touch again
 * and again, at least `min_arms` times and until every writer is done, so the two overlap
 * throughout (writers sleep `pause_us` after each pass: on a small emulated machine seven
 * writers that never stop take every CPU from the re-armer); alarm(timeout) turns a hang into
 * SIGALRM. The child exits 0 when both sides
 * finished, every arm succeeded and every word holds exactly the passes its writer made (no
 * write lost, none doubled); 2 setup failed, 3 an arm failed, 4 a word is wrong, 5 the final
 * disarm failed. */
#ifndef NPL_REARM_RACE_H
#define NPL_REARM_RACE_H
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REARM_RACE_MAX_WRITERS 15
struct rearm_race {
    uint64_t *buf;
    size_t pages, chunk;
    int writers, passes, min_arms, pause_us;
    _Atomic int writers_done;
    _Atomic long arms, arm_failures;
};
struct rearm_writer {
    struct rearm_race *r;
    int id;
    uint64_t passes; /* made */
};

static void *rearm_race_writer(void *arg)
{
    struct rearm_writer *w = arg;
    struct rearm_race *r = w->r;
    while (w->passes < (uint64_t)r->passes || atomic_load(&r->arms) < r->min_arms) {
        for (size_t p = 0; p < r->pages; p++)
            r->buf[p * 512 + (size_t)w->id * 8]++; /* its own word: 64 bytes from the next */
        w->passes++;
        if (r->pause_us)
            usleep((useconds_t)r->pause_us);
    }
    atomic_fetch_add(&r->writers_done, 1);
    return NULL;
}

static void *rearm_race_armer(void *arg)
{
    struct rearm_race *r = arg;
    while (atomic_load(&r->arms) < r->min_arms || atomic_load(&r->writers_done) < r->writers) {
        if (npl_next_touch_arm_array(r->buf, r->chunk) < 0)
            atomic_fetch_add(&r->arm_failures, 1);
        atomic_fetch_add(&r->arms, 1);
    }
    return NULL;
}

static int rearm_race_child(size_t pages, size_t chunk, int writers, int passes, int min_arms,
                            int pause_us)
{
    struct rearm_race r = {NULL, pages, chunk, writers, passes, min_arms, pause_us, 0, 0, 0};
    npl_policy *cyc;
    if (writers < 1 || writers > REARM_RACE_MAX_WRITERS || npl_policy_parse(&cyc, "cyclic") < 0)
        return 2;
    r.buf = npl_alloc(pages * 4096, cyc);
    npl_policy_free(cyc);
    if (!r.buf || npl_next_touch_arm_array(r.buf, chunk) < 0)
        return 2;
    struct npl_next_touch_stats st0 = {0}, st = {0};
    npl_next_touch_get_stats(&st0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th[REARM_RACE_MAX_WRITERS + 1];
    struct rearm_writer w[REARM_RACE_MAX_WRITERS];
    for (int i = 0; i < writers; i++) {
        w[i] = (struct rearm_writer){&r, i, 0};
        pthread_create(&th[i], NULL, rearm_race_writer, &w[i]);
    }
    pthread_create(&th[writers], NULL, rearm_race_armer, &r);
    for (int i = 0; i <= writers; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t wrong = 0;
    uint64_t made = 0;
    for (int i = 0; i < writers; i++) {
        made += w[i].passes * pages;
        for (size_t p = 0; p < pages; p++)
            wrong += r.buf[p * 512 + (size_t)i * 8] != w[i].passes;
    }
    npl_next_touch_get_stats(&st);
    printf("  re-arm race: %zu pages, %zu-byte chunks, %d writers (>= %d passes): %ld arms, "
           "%llu writes, %zu of %zu words wrong, %llu chunks resolved, %llu pages moved, %.2f s\n",
           pages, chunk, writers, passes, atomic_load(&r.arms), (unsigned long long)made, wrong,
           (size_t)writers * pages, (unsigned long long)(st.chunks - st0.chunks),
           (unsigned long long)(st.pages_moved - st0.pages_moved),
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    fflush(stdout);
    if (atomic_load(&r.arm_failures))
        return 3;
    if (wrong)
        return 4;
    return npl_next_touch_disarm(r.buf) == 0 && npl_free(r.buf) == 0 ? 0 : 5;
}

/* the race in a child with a watchdog: its wait status */
static int rearm_race(size_t pages, size_t chunk, int writers, int passes, int min_arms,
                      int pause_us, unsigned timeout)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(timeout); /* a hang ends as SIGALRM */
        _exit(rearm_race_child(pages, chunk, writers, passes, min_arms, pause_us));
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return st;
}
#endif
