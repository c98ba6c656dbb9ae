/* perf.h - numaplace profile's hardware backend (cli/perf.c, docs/PROFILE.md §8). */
#ifndef NPL_CLI_PERF_H
#define NPL_CLI_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct npl_raw;
struct perf_set;

/* The test hook: NUMAPLACE_PERF_EVENT=page-faults samples the software page-fault event instead
 * of the memory-address events (every fault, with its address; no read/write). */
#define NPL_ENV_PERF_EVENT "NUMAPLACE_PERF_EVENT"

/* Whether the backend can sample here: 0 and the event's description in what, or -1 and why
 * not in why (one line). Opens the event on this process once and closes it. */
int perf_probe(char *what, size_t wsize, char *why, size_t size);
/* Open the events for the child pid (stopped before its exec: they start at its exec and follow
 * its threads and children), one per CPU, each with its ring buffer. rate: samples per second in
 * all (the hardware events; the stand-in samples every fault). NULL and why on failure. */
struct perf_set *perf_open(pid_t pid, uint64_t rate, char *why, size_t size);
/* Read the samples waiting in the ring buffers into r (array, chunk, thread, node, phase). */
void perf_drain(struct perf_set *s, struct npl_raw *r);
/* Samples read, lost (the ring was full), outside every tracked array, of threads numaplace did
 * not number (another process, or before the interposer's start); reads and writes told apart. */
void perf_stats(const struct perf_set *s, uint64_t *read, uint64_t *lost, uint64_t *outside,
                uint64_t *unknown, int *rw_known);
void perf_close(struct perf_set *s);

#endif
