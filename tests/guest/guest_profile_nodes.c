/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_profile_nodes - stored advice naming a node this machine lacks (issue 36, item 7), in a
 * guest of N nodes: a profile taken here, each array's stored policy rewritten to bind_all:N (as
 * from a larger machine: bind_all:7 from 8 nodes on 4), applied with run --verbose --profile.
 * Checks (exact):
 *   1. one line per array says its advice is not applied here (node N), without --verbose too;
 *   2. --verbose's last line counts them ("K arrays' advice not applied here");
 *   3. the program's status and checksum are those of a plain run.
 *   guest_profile_nodes --child      the child: two 8 MiB arrays written and summed */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int child(void)
{
    size_t n = (size_t)1 << 20;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), s = 0;
    if (!a || !b)
        return 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (double)i, b[i] = 0.5 * (double)i;
    for (size_t i = 0; i < n; i++)
        s += a[i] - b[i];
    printf("sum %.1f\n", s);
    return 0;
}

/* copy the profile with every "policy": "..." made pol; the count of those rewritten */
static int rewrite_policies(const char *from, const char *to, const char *pol)
{
    static const char key[] = "\"policy\": \"";
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    int c, matched = 0, n = 0;
    while (in && out && (c = getc(in)) != EOF) {
        putc(c, out);
        matched = c == key[matched] ? matched + 1 : c == key[0];
        if (key[matched])
            continue;
        fprintf(out, "%s\"", pol); /* the old value is skipped */
        while ((c = getc(in)) != EOF && c != '"')
            ;
        matched = 0;
        n++;
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return in && out ? n : -1;
}

/* lines of the file holding text */
static int lines_with(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return n;
}

static int same_file(const char *a, const char *b)
{
    FILE *f = fopen(a, "r"), *g = fopen(b, "r");
    int c, d, same = f && g;
    while (same && ((c = getc(f)) != EOF) + ((d = getc(g)) != EOF))
        same = c == d;
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return same;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--child"))
        return child();
    int N = 1, KC = 1;
    guest_args(argc, argv, &N, &KC);
    char self[512];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0) {
        printf("FAIL guest_profile_nodes: /proc/self/exe cannot be read\n");
        return 1;
    }
    self[l] = 0;
    char pol[32], line[128]; /* node N: one past this machine's 0..N-1 */
    snprintf(pol, sizeof pol, "bind_all:%d", N);
    snprintf(line, sizeof line, "its advised policy %s is not applied here", pol);
    int rc = spawn_to("/tmp/gn_plain.txt", NULL, (char *const[]){self, "--child", NULL});
    CHECK(rc == 0, "plain run: status %d", rc);
    rc = spawn_to("/tmp/gn_out1.txt", "/tmp/gn_err1.txt",
                  (char *const[]){"numaplace", "profile", "--out", "/tmp/gn.json", "--", self,
                                  "--child", NULL});
    CHECK(rc == 0, "numaplace profile: status %d", rc);
    int narr = rewrite_policies("/tmp/gn.json", "/tmp/gn7.json", pol);
    CHECK(narr >= 2, "the profile's stored policies rewritten: %d (two arrays at least)", narr);
    char said[160];
    rc = spawn_to("/tmp/gn_out2.txt", "/tmp/gn_err2.txt",
                  (char *const[]){"numaplace", "run", "--profile", "/tmp/gn7.json", "--", self,
                                  "--child", NULL});
    CHECK(rc == 0 && same_file("/tmp/gn_plain.txt", "/tmp/gn_out2.txt"),
          "run --profile (%s): status %d, the plain run's output", pol, rc);
    int lines = lines_with("/tmp/gn_err2.txt", line);
    CHECK(lines == narr, "one line per array without --verbose: %d, want %d", lines, narr);
    rc = spawn_to("/tmp/gn_out3.txt", "/tmp/gn_err3.txt",
                  (char *const[]){"numaplace", "run", "--verbose", "--profile", "/tmp/gn7.json",
                                  "--", self, "--child", NULL});
    snprintf(said, sizeof said, "; %d arrays' advice not applied here (a node this machine lacks",
             narr);
    CHECK(rc == 0 && lines_with("/tmp/gn_err3.txt", said) == 1,
          "--verbose: status %d, the last line counts %d arrays not applied here", rc, narr);
    return check_summary("guest_profile_nodes");
}
