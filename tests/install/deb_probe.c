/* SPDX-License-Identifier: BSD-3-Clause */
/* deb_probe - run under `numaplace run --policy cyclic` in the guest by tests/install/test_deb.sh:
 * prints which libnumaplace_preload.so is mapped, then mallocs 8 MiB (placed by the interposer),
 * touches it and counts its pages per node with move_pages(2) (no libnuma in the guest). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGES 2048

static void print_preload(void)
{
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, " /");
        if (p && strstr(p, "libnumaplace_preload.so")) {
            printf("preload:%s", p);
            break;
        }
    }
    if (f)
        fclose(f);
}

int main(void)
{
    print_preload();
    long psz = sysconf(_SC_PAGESIZE);
    char *a = malloc((size_t)(PAGES + 1) * psz);
    if (!a)
        return 1;
    memset(a, 1, (size_t)(PAGES + 1) * psz);
    char *first = (char *)(((unsigned long)a + psz - 1) & ~(unsigned long)(psz - 1));
    static void *pages[PAGES];
    static int status[PAGES];
    for (int i = 0; i < PAGES; i++)
        pages[i] = first + (long)i * psz;
    if (syscall(SYS_move_pages, 0, PAGES, pages, NULL, status, 0) < 0)
        return 1;
    int count[8] = {0};
    for (int i = 0; i < PAGES; i++)
        if (status[i] >= 0 && status[i] < 8)
            count[status[i]]++;
    printf("pages per node: %d %d\n", count[0], count[1]);
    free(a);
    return 0;
}
