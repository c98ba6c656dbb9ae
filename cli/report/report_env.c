/* SPDX-License-Identifier: BSD-3-Clause */
/* report_env.c - the machine the report ran on, and whether its timings can be trusted:
 * a hypervisor (the "hypervisor" CPU flag; its CPUID signature names it) makes them those of a
 * virtual machine; TCG (QEMU's software CPU emulation, the numavm guest) makes them emulated,
 * with no relation to real hardware (remote memory can come out faster than local). */
#define _GNU_SOURCE
#include "common.h"
#include "report_parts.h"

#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#ifndef NPL_CFLAGS
#define NPL_CFLAGS "unknown"
#endif

/* "TCGTCGTCGTCG", "KVMKVMKVM", "VMwareVMware", "Microsoft Hv"...; "" without one */
static void hypervisor_signature(char *out, size_t size)
{
    out[0] = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    if (!(c & (1u << 31)))
        return;
    __cpuid(0x40000000, a, b, c, d);
    char sig[13];
    memcpy(sig, &b, 4);
    memcpy(sig + 4, &c, 4);
    memcpy(sig + 8, &d, 4);
    sig[12] = 0;
    for (char *p = sig; *p; p++)
        if (*p < 32 || *p > 126)
            *p = '?';
    snprintf(out, size, "%s", sig);
#else
    (void)size;
#endif
}

/* the value of the first of keys (in that order of preference) that /proc/cpuinfo has */
static void cpuinfo_value(const char *const *keys, int nkeys, char *out, size_t size)
{
    out[0] = 0;
    for (int k = 0; k < nkeys && !out[0]; k++) {
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[4096];
        size_t len = strlen(keys[k]);
        while (f && !out[0] && fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (!colon || strncmp(line, keys[k], len) || strspn(line + len, " \t") !=
                                                             (size_t)(colon - line) - len)
                continue;
            colon += strspn(colon + 1, " \t") + 1;
            colon[strcspn(colon, "\n")] = 0;
            snprintf(out, size, "%s", colon);
        }
        if (f)
            fclose(f);
    }
}

static void thp_mode(char *out, size_t size)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[256] = "";
    snprintf(out, size, "unknown");
    if (f && fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) {
            *b = 0;
            snprintf(out, size, "%s", a + 1);
        }
    }
    if (f)
        fclose(f);
}

void report_host(struct host_env *h)
{
    memset(h, 0, sizeof *h);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(h->hostname, sizeof h->hostname, "%s", u.nodename);
        snprintf(h->kernel, sizeof h->kernel, "%s %s", u.sysname, u.release);
    }
    static const char *model[] = {"model name", "cpu model", "Processor", "cpu"};
    cpuinfo_value(model, 4, h->cpu_model, sizeof h->cpu_model);
    static const char *flags[] = {"flags", "Features"};
    char fl[4096];
    cpuinfo_value(flags, 2, fl, sizeof fl);
    h->cpuinfo_hypervisor = strstr(fl, " hypervisor") != NULL || !strncmp(fl, "hypervisor", 10);
    hypervisor_signature(h->hypervisor, sizeof h->hypervisor);
    /* TCG: its CPUID signature, or QEMU's emulated CPU models ("QEMU Virtual CPU", "QEMU TCG") */
    h->emulated = strstr(h->hypervisor, "TCG") != NULL ||
                  (!h->hypervisor[0] && strstr(h->cpu_model, "QEMU") != NULL);
    thp_mode(h->thp, sizeof h->thp);
    h->page_size = sysconf(_SC_PAGESIZE);
    snprintf(h->compiler, sizeof h->compiler, "%s", __VERSION__);
    snprintf(h->cflags, sizeof h->cflags, "%s", NPL_CFLAGS);
    time_t t = time(NULL);
    strftime(h->started_utc, sizeof h->started_utc, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    h->omp_threads = 1;
#ifdef _OPENMP
    h->omp_threads = omp_get_max_threads();
#endif
}
