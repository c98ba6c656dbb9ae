/* SPDX-License-Identifier: BSD-3-Clause */
/* test_config - the platform config parser (src/config.c): good files, every kind of bad file. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int parse(const char *text, npl_config **c)
{
    return npl_config_parse(c, text, strlen(text), "t.conf");
}

/* a bad text must fail with EINVAL and a message naming "t.conf:LINE" and containing `what` */
/* what: text of the message that the file's text does not contain (the message explains, it
 * does not only echo the bad line) */
static void bad(const char *text, int line, const char *what)
{
    npl_config *c = NULL;
    errno = 0;
    int rc = parse(text, &c);
    char want[32];
    snprintf(want, sizeof want, "t.conf:%d:", line);
    CHECK(rc == -1 && c == NULL && errno == EINVAL && strstr(npl_last_error(), want) &&
              strstr(npl_last_error(), what) && !strstr(text, what),
          "bad file rejected at line %d with \"%s\": rc %d errno %d msg [%s]", line, what, rc,
          errno, npl_last_error());
    npl_config_free(c);
}

/* A file without read permission (as root: in a child that became nobody) and a FIFO with no
 * writer (would block a plain fopen forever): clear errors naming the file. */
static void unreadable_files(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/npl_cfg_noread.%d", (int)getpid());
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("[policy]\ndefault = cyclic\n", f);
        fclose(f);
    }
    CHECK(f && chmod(path, 0) == 0, "a mode-000 file");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
            _exit(3);
        npl_config *c = NULL;
        int ok = npl_config_load(&c, path) == -1 && errno == EACCES && c == NULL &&
                 strstr(npl_last_error(), path) != NULL;
        if (!ok)
            printf("unreadable: %s\n", npl_last_error());
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
        SKIP("drop-root", "an unreadable config file: cannot drop root privileges");
    else
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "a file without read permission: EACCES, named (status %d)", st);
    unlink(path);

    snprintf(path, sizeof path, "/tmp/npl_cfg_fifo.%d", (int)getpid());
    CHECK(mkfifo(path, 0600) == 0, "mkfifo");
    npl_config *c = NULL;
    CHECK(npl_config_load(&c, path) == -1 && errno == EINVAL && c == NULL &&
              strstr(npl_last_error(), path) && strstr(npl_last_error(), "not a regular file"),
          "a FIFO: EINVAL at once, named (%s)", npl_last_error());
    setenv("NUMAPLACE_CONFIG", path, 1);
    CHECK(npl_config_load(&c, NULL) == -1 && errno == EINVAL, "a FIFO as NUMAPLACE_CONFIG");
    unsetenv("NUMAPLACE_CONFIG");
    unlink(path);
}

int main(void)
{
    const char *good = "# a platform\n"
                       "[machine]\nnodes = 0-3\ncpus = 0-7   # all\n\n"
                       "[threads]\n pin = auto \n"
                       "[policy]\ndefault = cyclic@0-3\nthreshold = 2097152\n"
                       "[factors]\nnodes = 0,1\nlatency_ns.0 = 80.5 120\nlatency_ns.1 = 121 79.5\n"
                       "bandwidth_mbs.0 = 9000 5000\nbandwidth_mbs.1 = 5100 8900\n"
                       "migrate_pages_s = 250000\n"
                       "measured = numaplace measure on a test\n";
    npl_config *c = NULL;
    CHECK(parse(good, &c) == 0 && c, "good file parses: %s", npl_last_error());
    if (!c)
        return 1;
    CHECK(!strcmp(npl_config_get(c, "machine", "nodes"), "0-3"), "nodes value");
    CHECK(!strcmp(npl_config_get(c, "machine", "cpus"), "0-7"), "comment stripped after value");
    CHECK(!strcmp(npl_config_get(c, "threads", "pin"), "auto"), "blanks trimmed");
    CHECK(npl_config_get(c, "machine", "nope") == NULL && errno == ENOENT, "missing key: ENOENT");
    CHECK(!strcmp(npl_config_get(c, "factors", "migrate_pages_s"), "250000"),
          "the migration rate measure writes");
    int l[16];
    CHECK(npl_config_list(c, "machine", "cpus", l, 16) == 8 && l[7] == 7, "cpu list expands");
    int nodes[4];
    double lat[16], bw[16];
    int n = npl_config_factors(c, nodes, lat, bw, 4);
    CHECK(n == 2 && nodes[1] == 1 && lat[0] == 80.5 && lat[1] == 120 && lat[2] == 121 &&
              bw[3] == 8900, "factor matrix read row-major (n %d)", n);
    char s[64];
    npl_policy *cyc = pol("cyclic"), *bb = pol("bind_block");
    CHECK(npl_config_pin_for(c, cyc, s, sizeof s) == 0, "auto: no pinning for cyclic (MAi)");
    CHECK(npl_config_pin_for(c, bb, s, sizeof s) == 1 && !strcmp(s, "compact"),
          "auto: compact pinning for bind_block");
    /* round trip */
    int need = npl_config_format(c, NULL, 0);
    char *text = malloc((size_t)need + 1);
    CHECK(npl_config_format(c, text, (size_t)need + 1) == need, "format length");
    npl_config *c2 = NULL;
    CHECK(npl_config_parse(&c2, text, strlen(text), "round") == 0 &&
              !strcmp(npl_config_get(c2, "factors", "latency_ns.1"), "121 79.5"),
          "formatted text parses again: %s", npl_last_error());
    free(text);
    CHECK(npl_config_set(c2, "threads", "pin", "none") == 0 &&
              npl_config_pin_for(c2, bb, s, sizeof s) == 0, "pin = none: never");
    CHECK(npl_config_set(c2, "threads", "pin", "scatter") == 0 &&
              npl_config_pin_for(c2, cyc, s, sizeof s) == 1 && !strcmp(s, "scatter"),
          "explicit strategy for every policy");
    CHECK(npl_config_set(c2, "policy", "default", "nonsense") == -1 && errno == EINVAL,
          "set validates");
    CHECK(npl_config_set(c2, "policy", "default", "a\nb") == -1, "set refuses newlines");
    npl_config_free(c2);
    npl_config_free(c);
    npl_policy_free(cyc);
    npl_policy_free(bb);

    /* empty and comment-only files are fine */
    CHECK(parse("", &c) == 0 && npl_config_factors(c, NULL, NULL, NULL, 0) == 0, "empty file");
    npl_config_free(c);
    CHECK(parse("# nothing\n\n   \n", &c) == 0, "comments only");
    npl_config_free(c);
    CHECK(parse("[policy]\r\ndefault = skew_mapp\r\n", &c) == 0 &&
              !strcmp(npl_config_get(c, "policy", "default"), "skew_mapp"), "CRLF lines");
    npl_config_free(c);

    /* bad files: line numbers and reasons */
    bad("[machine]\nnodes = 0-3\n[machin]\n", 3, "unknown section");
    bad("nodes = 1\n", 1, "outside any [section]");
    bad("[machine]\nnodes 0-3\n", 2, "key = value");
    bad("[machine]\nnodes =\n", 2, "no value");
    bad("[machine]\nnodes = 0\nnodes = 1\n", 3, "given twice");
    bad("[machine]\ncores = 4\n", 2, "unknown key");
    bad("[machine]\nnodes = 3-1\n", 2, "[machine] nodes");
    bad("[threads]\npin = sideways\n", 2, "compact, scatter");
    bad("[policy]\ndefault = cyclik\n", 2, "unknown policy \"cyclik\"");
    bad("[policy]\nthreshold = -5\n", 2, "positive byte count");
    /* the threshold reads numaplace run's sizes (src/base/number.h): never wrapped, 1 to 2^63-1 */
    bad("[policy]\nthreshold = 0\n", 2, "positive byte count");
    bad("[policy]\nthreshold = 18446744073709551615\n", 2, "positive byte count");
    bad("[policy]\nthreshold = 9223372036854775808\n", 2, "positive byte count");
    bad("[policy]\nthreshold = 18014398509481985K\n", 2, "positive byte count");
    bad("[policy]\nthreshold = 1e3\n", 2, "positive byte count");
    CHECK(parse("[policy]\nthreshold = 64K\n", &c) == 0 &&
              !strcmp(npl_config_get(c, "policy", "threshold"), "64K"),
          "threshold = 64K: a size with a suffix, as --threshold");
    npl_config_free(c);
    CHECK(parse("[policy]\nthreshold = 9223372036854775807\n", &c) == 0, "threshold = 2^63-1");
    npl_config_free(c);
    bad("[factors\n", 1, "section header");
    bad("[factors]\nnodes = 0,1\nlatency_ns.0 = 80 x\n", 3, "non-negative numbers");
    bad("[factors]\nnodes = 0,1\nlatency_ns.0 = 80\n", 3, "truncated or contradictory");
    bad("[factors]\nnodes = 0,1\nlatency_ns.2 = 80 90\n", 3, "not in [factors] nodes");
    bad("[factors]\nlatency_ns.0 = 80\n", 2, "without [factors] nodes");
    bad("[factors]\nnodes = 0,1\n", 2, "without any latency_ns");
    bad("[factors]\nnodes = 0\nbandwidth_mbs.0 = inf\n", 3, "non-negative");
    bad("[factors]\nmigrate_pages_s = 0\n", 2, "one positive number");
    bad("[factors]\nmigrate_pages_s = 1e3 5\n", 2, "one positive number");
    bad("[factors]\nmigrate_pages_s = fast\n", 2, "one positive number");
    bad("[factors]\nmigrate_pages_s = nan\n", 2, "one positive number");
    bad("[machine]\ncpus = 0-3\n[threads]\npin = 2,9\n", 4, "contradictory");
    bad("[machine]\nnodes = 0-1\n[policy]\ndefault = bind_all:3\n", 4, "contradictory");
    bad("[machine]\nnodes = 0-1\n[policy]\ndefault = cyclic@1-2\n", 4, "node 2");
    bad("[machine]\nnodes = 0\x01\n", 2, "control character");

    /* binary data with NUL bytes, and a huge file */
    static const char bin[] = "[machine]\0\x7f" "ELF";
    errno = 0;
    CHECK(npl_config_parse(&c, bin, sizeof bin, "bin") == -1 && errno == EINVAL &&
              strstr(npl_last_error(), "binary"), "NUL bytes: binary file (%s)", npl_last_error());
    size_t big = (2u << 20);
    char *huge = malloc(big);
    memset(huge, '#', big);
    errno = 0;
    CHECK(npl_config_parse(&c, huge, big, "huge") == -1 && errno == EFBIG, "2 MiB file: EFBIG");
    memset(huge, 'a', 8192);
    memcpy(huge, "[machine]\nnodes = ", 18);
    errno = 0;
    CHECK(npl_config_parse(&c, huge, 8192, "long") == -1 && strstr(npl_last_error(), "long:2:"),
          "over-long line: %s", npl_last_error());
    free(huge);

    /* files */
    CHECK(npl_config_load(&c, "/nonexistent/numaplace.conf") == -1 && errno == ENOENT,
          "missing explicit file: ENOENT");
    CHECK(npl_config_load(&c, "/tmp") == -1 && errno == EISDIR && c == NULL &&
              strstr(npl_last_error(), "/tmp"),
          "a directory: EISDIR, named (%s)", npl_last_error());
    CHECK(npl_config_load(&c, "/proc/self/status") == -1 && errno == EINVAL &&
              strstr(npl_last_error(), "/proc/self/status:1:"),
          "a file that is not a config: EINVAL at its line 1 (%s)", npl_last_error());
    unreadable_files();
    const char *tmp = "/tmp/npl_test_config.conf";
    FILE *f = fopen(tmp, "w");
    fputs("[policy]\ndefault = prime_mapp:7\n", f);
    fclose(f);
    setenv("NUMAPLACE_CONFIG", tmp, 1);
    CHECK(npl_config_load(&c, NULL) == 0 && !strcmp(npl_config_source(c), tmp) &&
              !strcmp(npl_config_get(c, "policy", "default"), "prime_mapp:7"),
          "NUMAPLACE_CONFIG is read");
    npl_config_free(c);
    const npl_config *self = npl_config_self();
    CHECK(self && !strcmp(npl_config_get(self, "policy", "default"), "prime_mapp:7"),
          "npl_config_self loads it once");
    /* the library's default policy: [policy] default, unless NUMAPLACE_POLICY says otherwise */
    unsetenv("NUMAPLACE_POLICY");
    char polstr[256] = "";
    void *arr = npl_alloc(1 << 20, NULL);
    CHECK(arr && npl_array_policy(arr, polstr, sizeof polstr) > 0 && !strncmp(polstr, "prime_mapp:7", 12),
          "npl_alloc(NULL policy) uses [policy] default: [%s]", arr ? polstr : npl_last_error());
    npl_free(arr);
    setenv("NUMAPLACE_POLICY", "cyclic", 1);
    arr = npl_alloc(1 << 20, NULL);
    CHECK(arr && npl_array_policy(arr, polstr, sizeof polstr) > 0 && !strncmp(polstr, "cyclic", 6),
          "NUMAPLACE_POLICY wins over the file: [%s]", arr ? polstr : npl_last_error());
    npl_free(arr);
    unsetenv("NUMAPLACE_POLICY");
    unlink(tmp);
    setenv("NUMAPLACE_CONFIG", "", 1);
    setenv("HOME", "/nonexistent", 1);
    if (access("/etc/numaplace.conf", R_OK) != 0) {
        CHECK(npl_config_load(&c, NULL) == 0 && !strcmp(npl_config_source(c), ""),
              "no file anywhere: an empty config");
        npl_config_free(c);
        /* a HOME whose config path cannot exist is no file either: 5,000 characters (the first
         * 4,095 name an existing directory: a cut path would be read), below a regular file */
        char home[5001];
        for (int i = 0; i < 5000; i += 2)
            memcpy(home + i, "/.", 2);
        home[5000] = 0;
        setenv("HOME", home, 1);
        c = NULL;
        CHECK(npl_config_load(&c, NULL) == 0 && c && !strcmp(npl_config_source(c), ""),
              "HOME of 5,000 characters: an empty config (%s)", c ? "" : npl_last_error());
        npl_config_free(c);
        setenv("HOME", "/proc/self/status", 1);
        c = NULL;
        CHECK(npl_config_load(&c, NULL) == 0 && c && !strcmp(npl_config_source(c), ""),
              "HOME below a regular file: an empty config (%s)", c ? "" : npl_last_error());
        npl_config_free(c);
    }
    return check_summary("test_config");
}
