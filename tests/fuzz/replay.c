/* SPDX-License-Identifier: BSD-3-Clause */
/* Replays a libFuzzer target's inputs without libFuzzer: `replay FILE|DIR...` calls
 * LLVMFuzzerTestOneInput once per file. Built with gcc in every build (normal, ASan+UBSan, TSan)
 * and run by ctest (fuzz.<target>) over tests/fuzz/corpus/<target>/: every seed, and every crash
 * a fuzzing run found (saved there as a regression input), is a regression test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap * 2);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return 1;
    LLVMFuzzerTestOneInput(buf, n); /* a failure aborts (or the sanitizer reports) */
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += replay_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            bad += replay_file(path);
            files++;
        }
        if (d)
            closedir(d);
    }
    /* each input replayed without a crash is a check passed; an unreadable one failed */
    printf("replay %s: %d passed, %d failed, 0 skipped\n", argc > 1 ? argv[1] : "(nothing)",
           files - bad, bad + (files == 0));
    return bad != 0 || files == 0;
}
