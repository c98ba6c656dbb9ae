/* SPDX-License-Identifier: BSD-3-Clause */
/* The profile format v1 reader and writer (src/profile/format.c): a table of bad inputs, each
 * rejected with EINVAL and a message naming the problem (never a crash); the limits at their
 * edges; files that cannot be profiles; every profile of tests/profiles/ read, written and read
 * again to the same text.  Usage: test_profile_format SOURCE_DIR */
#include "check.h"
#include "profile/profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *BASE =
    "{\"format\":\"numaplace-profile\",\"version\":1,"
    "\"program\":{\"path\":\"/bin/x\",\"build_id\":null},"
    "\"machine\":{\"nodes\":[0,1],\"page_size\":4096},"
    "\"run\":{\"threads\":2,\"thread_nodes\":[0,1],\"thread_cpus\":null,"
    "\"binding\":{\"source\":\"none\",\"detail\":null}},"
    "\"sampling\":{\"backend\":\"fault\",\"rate\":100,\"samples\":6,\"seconds\":0.5,\"rw_known\":true},"
    "\"phases\":[{\"id\":0,\"kind\":\"window\",\"site\":null,\"entries\":1}],"
    "\"arrays\":[{\"site\":{\"object\":\"/bin/x\",\"build_id\":null,\"offset\":16,\"ordinal\":0,"
    "\"kind\":\"heap\"},\"bytes\":8192,\"chunk_bytes\":4096,\"nchunks\":2,\"first_touch\":[0,-1],"
    "\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]}]}";

/* text with the first `from` replaced by `to` (malloc'ed) */
static char *edit_in(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) {
        printf("test bug: \"%s\" is not in the text\n", from);
        exit(2);
    }
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return s;
}

/* BASE with the first `from` replaced by `to` (malloc'ed) */
static char *edit(const char *from, const char *to) { return edit_in(BASE, from, to); }


static void expect_bad(const char *name, const char *text, size_t len, const char *msg)
{
    struct npl_profile *p = (struct npl_profile *)1;
    char err[1024] = "";
    errno = 0;
    int rc = npl__profile_parse(text, len, &p, err, sizeof err);
    CHECK(rc == -1 && errno == EINVAL && p == NULL, "%s: rc %d errno %d", name, rc, errno);
    CHECK(strstr(err, msg) != NULL, "%s: message \"%s\" does not say \"%s\"", name, err, msg);
    CHECK(!strcmp(npl_last_error(), err), "%s: npl_last_error() is not the message", name);
}

static void bad_edit(const char *from, const char *to, const char *msg)
{
    char *s = edit(from, to), name[160];
    snprintf(name, sizeof name, "%.60s -> %.60s", from, to);
    expect_bad(name, s, strlen(s), msg);
    free(s);
}

static struct npl_profile *good(const char *name, const char *text)
{
    struct npl_profile *p = NULL;
    char err[1024] = "";
    int rc = npl__profile_parse(text, strlen(text), &p, err, sizeof err);
    CHECK(rc == 0 && p, "%s: rejected: %s", name, err);
    return p;
}

/* format -> parse -> format gives the same text */
static void round_trip(const char *name, const struct npl_profile *p)
{
    size_t n1, n2;
    char *t1 = npl__profile_format(p, &n1), err[1024] = "";
    struct npl_profile *q = NULL;
    CHECK(t1 && npl__profile_parse(t1, n1, &q, err, sizeof err) == 0, "%s: written text does not "
          "parse: %s", name, err);
    char *t2 = q ? npl__profile_format(q, &n2) : NULL;
    CHECK(t2 && n1 == n2 && !memcmp(t1, t2, n1), "%s: written twice differs", name);
    if (q) {
        CHECK(q->narrays == p->narrays && q->threads == p->threads && q->nphases == p->nphases,
              "%s: counts differ after a round trip", name);
        for (uint32_t i = 0; i < q->narrays && i < p->narrays; i++)
            CHECK(q->arrays[i].nsamples == p->arrays[i].nsamples &&
                  q->arrays[i].has_advice == p->arrays[i].has_advice &&
                  (!q->arrays[i].has_advice ||
                   !strcmp(q->arrays[i].advice.policy, p->arrays[i].advice.policy)),
                  "%s: array %u differs after a round trip", name, i);
    }
    free(t1);
    free(t2);
    npl__profile_free(q);
}

/* The warning when threads did not run together (npl__profile_run_warning), on BASE with
 * sampling.concurrency {rounds, together} (rounds < 0: none) and 3 threads whose exposures are
 * exp (NULL: none), each sampled; 1 when it warns, the line in why */
static int run_warning(int rounds, int together, const char *exp, char *why, size_t size)
{
    char conc[128] = "", ex[128] = "";
    if (rounds >= 0)
        snprintf(conc, sizeof conc, "\"rw_known\":true,\"concurrency\":{\"rounds\":%d,"
                 "\"together\":%d}", rounds, together);
    snprintf(ex, sizeof ex, "\"threads\":3,\"thread_nodes\":[0,1,1]%s%s",
             exp ? ",\"thread_exposure\":" : "", exp ? exp : "");
    char *a = edit("\"threads\":2,\"thread_nodes\":[0,1]", ex);
    char *b = edit_in(a, "[0,1,1,0,3]", "[0,1,1,0,3],[0,1,2,1,0]");
    char *c = rounds >= 0 ? edit_in(b, "\"rw_known\":true", conc) : strdup(b);
    struct npl_profile *p = good("run warning", c);
    int w = p ? npl__profile_run_warning(p, why, size) : -1;
    if (p && rounds >= 0)
        round_trip("concurrency", p);
    npl__profile_free(p);
    free(a);
    free(b);
    free(c);
    return w;
}

/* Each phase's duration (phases[].seconds) written, read back and weighed (and its barrier
 * rounds, phases[].barriers, written where not 0 and read back): the phase-changing
 * profile of tests/profiles/ (64 KiB whose owners change at every one of 20 region entries,
 * about 16 pages moved at each change, 0.25 of locality gained) with phases of 1 ms gets no
 * next-touch (it would save 0.25 x 0.002 s x 0.5, less than moving the pages at 262,144
 * pages/s), with phases of 1 s it does; the reason says the figures. Without the field: the
 * gain rule alone, said. The machine's migration rate (machine.migrate_pages_s) written, read
 * back and weighed: at 100 pages/s, phases of 1 s get no next-touch either, said. */
static void phase_seconds(const char *src)
{
    char f[4200], err[1024] = "";
    snprintf(f, sizeof f, "%s/tests/profiles/phase_changing.json", src);
    static const double secs[4] = {-1, 0.001, 1.0, 1.0}, rate[4] = {0, 0, 0, 100};
    for (int k = 0; k < 4; k++) {
        struct npl_profile *p = NULL, *q = NULL;
        CHECK(npl__profile_load(f, &p, err, sizeof err) == 0, "phase_changing.json: %s", err);
        if (!p)
            return;
        for (uint32_t i = 0; secs[k] >= 0 && i < p->nphases; i++) {
            p->phases[i].has_seconds = 1;
            p->phases[i].seconds = secs[k];
            p->phases[i].barriers = k == 2 ? 2 * i : 0; /* barrier rounds: written where not 0 */
        }
        p->migrate_rate = rate[k];
        size_t n;
        char *t = npl__profile_format(p, &n);
        CHECK(t && (secs[k] >= 0) == (strstr(t, "\"entries\": 10, \"seconds\": ") != NULL),
              "durations %g: written", secs[k]);
        CHECK(t && npl__profile_parse(t, n, &q, err, sizeof err) == 0, "durations %g: %s", secs[k],
              err);
        if (q) {
            round_trip("phase durations", q);
            CHECK(q->migrate_rate == rate[k] &&
                      (rate[k] > 0) == (strstr(t, "\"migrate_pages_s\": 100}") != NULL),
                  "migration rate %g: read back %g", rate[k], q->migrate_rate);
            CHECK(q->phases[0].has_seconds == (secs[k] >= 0) &&
                      (secs[k] < 0 || q->phases[1].seconds == secs[k]),
                  "durations %g: read back %d %g", secs[k], q->phases[0].has_seconds,
                  q->phases[1].seconds);
            CHECK(q->nphases == 2 && q->phases[0].barriers == 0 &&
                      q->phases[1].barriers == (k == 2 ? 2u : 0u) &&
                      (k == 2) == (strstr(t, "\"seconds\": 1, \"barriers\": 2}") != NULL) &&
                      (k == 2 || !strstr(t, "\"barriers\"")),
                  "barrier rounds %s: read back %llu", k == 2 ? "2" : "absent",
                  q->nphases == 2 ? (unsigned long long)q->phases[1].barriers : 0ull);
            struct npl_prof_advice adv;
            struct npl_prof_advice *one = &adv;
            CHECK(npl__advise_profile(q, &one, NULL, err, sizeof err) == 0, "advise: %s", err);
            const char *want = k == 0   ? "the phases' durations are not recorded"
                               : k == 1 ? "would not pay; next-touch moves about"
                               : k == 2 ? "at 262144 pages/s (the default figure: numaplace "
                                          "measure measures the machine's), to save"
                                        : "at 100 pages/s (the machine's, measured), to save";
            CHECK((adv.nnext_touch > 0) == (k == 0 || k == 2) && strstr(adv.reason, want),
                  "phases of %g s: next-touch %u: %s", secs[k], adv.nnext_touch, adv.reason);
            npl__advice_clear(&adv);
        }
        free(t);
        npl__profile_free(p);
        npl__profile_free(q);
    }
}

static char *nest(int levels) /* "extra": an object holding levels-2 nested arrays */
{
    char *s = malloc((size_t)levels * 2 + 64);
    int k = sprintf(s, "\"version\":1,\"extra\":{\"a\":");
    for (int i = 0; i < levels - 2; i++)
        s[k++] = '[';
    for (int i = 0; i < levels - 2; i++)
        s[k++] = ']';
    strcpy(s + k, "},");
    return s;
}

int main(int argc, char **argv)
{
    const char *src = argc > 1 ? argv[1] : ".";

    /* ---- the base profile is good, and reads as written ---- */
    struct npl_profile *p = good("base", BASE);
    if (p) {
        CHECK(p->nnodes == 2 && p->threads == 2 && p->narrays == 1 && p->arrays[0].nsamples == 2 &&
              p->arrays[0].samples[1].chunk == 1 && p->arrays[0].samples[1].writes == 3 &&
              p->arrays[0].first_touch[1] == -1 && p->rate == 100 && p->seconds == 0.5 &&
              p->rw_known == 1 && p->binding == NPL_BIND_NONE && !p->thread_cpus,
              "base: fields read back");
        round_trip("base", p);
        npl__profile_free(p);
    }

    /* ---- "measured" (optional): a profile without it loads and is written without it; one
     * with it reads back and round-trips ---- */
    p = good("no measured", BASE);
    if (p) {
        CHECK(!p->has_measured && !p->arrays[0].has_measured, "no measured: none read");
        char *t = npl__profile_format(p, NULL);
        CHECK(t && !strstr(t, "measured"), "no measured: none written");
        free(t);
        npl__profile_free(p);
    }
    {
        char *s1 = edit("\"rw_known\":true}",
                        "\"rw_known\":true,\"measured\":{\"unknown\":1,\"local\":7,\"remote\":3}}");
        size_t n1 = strlen(s1), k = strlen("\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]");
        const char *at = strstr(s1, "\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]");
        char *s2 = malloc(n1 + 80);
        snprintf(s2, n1 + 80, "%.*s,\"measured\":{\"local\":5,\"remote\":1,\"unknown\":0}%s",
                 (int)(at + k - s1), s1, at + k);
        p = good("measured", s2);
        if (p) {
            CHECK(p->has_measured && p->measured[NPL_MEASURED_LOCAL] == 7 &&
                      p->measured[NPL_MEASURED_REMOTE] == 3 &&
                      p->measured[NPL_MEASURED_UNKNOWN] == 1,
                  "measured: the total read back");
            CHECK(p->arrays[0].has_measured && p->arrays[0].measured[NPL_MEASURED_LOCAL] == 5 &&
                      p->arrays[0].measured[NPL_MEASURED_REMOTE] == 1 &&
                      p->arrays[0].measured[NPL_MEASURED_UNKNOWN] == 0,
                  "measured: the array's read back");
            char *t = npl__profile_format(p, NULL);
            CHECK(t && strstr(t, "\"measured\": {\"local\": 7, \"remote\": 3, \"unknown\": 1}") &&
                      strstr(t, "\"measured\": {\"local\": 5, \"remote\": 1, \"unknown\": 0}"),
                  "measured: written: %s", t ? t : "(null)");
            free(t);
            round_trip("measured", p);
            npl__profile_free(p);
        }
        free(s2);
        free(s1);
    }
    bad_edit("\"rw_known\":true}", "\"rw_known\":true,\"measured\":{\"local\":1,\"remote\":2}}",
             "sampling.measured: member \"unknown\" is missing");
    /* ---- advice.local.err: the prediction's +/- (optional; -1 when absent, not written) */
    for (int k = 0; k < 2; k++) {
        char adv[400];
        snprintf(adv, sizeof adv, "\"advice\":{\"pattern\":\"blocked\",\"policy\":\"cyclic\","
                 "\"confidence\":1,\"local\":{\"policy\":0.5,\"first_touch\":null,\"best\":1%s},"
                 "\"reason\":\"r\",\"replicate\":false,\"next_touch_phases\":[],\"samples\":1},"
                 "\"samples\":[[", k ? ",\"err\":0.125" : "");
        char *s1 = edit("\"samples\":[[", adv);
        p = good(k ? "advice.local.err" : "advice.local without err", s1);
        if (p) {
            double e = p->arrays[0].advice.local_err;
            char *t = npl__profile_format(p, NULL);
            int written = t && strstr(t, "\"err\": 0.125") != NULL;
            CHECK(p->arrays[0].has_advice && (k ? e == 0.125 : e == -1) && written == k &&
                      (k || !strstr(t, "\"err\"")),
                  "advice.local.err %s: read %g, written %d", k ? "0.125" : "absent", e, written);
            free(t);
            round_trip(k ? "advice.local.err" : "advice.local without err", p);
            npl__profile_free(p);
        }
        free(s1);
    }
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"blocked\",\"policy\":\"cyclic\",\"confidence\":1,"
             "\"local\":{\"policy\":1,\"first_touch\":null,\"best\":1,\"err\":1.5},\"reason\":\"r\","
             "\"replicate\":false,\"next_touch_phases\":[],\"samples\":1},\"samples\":[[",
             "advice.local.err: 1.5 is out of range");
    /* ---- the rows' own measured counts: [phase, chunk, thread, reads, writes, local, remote] */
    {
        static const char *rows7 = "\"samples\":[[0,0,0,2,1,2,1],[0,1,1,0,3,3,0]],"
                                   "\"measured\":{\"local\":5,\"remote\":1,\"unknown\":1}";
        char *s1 = edit("\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]", rows7);
        p = good("rows with local and remote", s1);
        if (p) {
            const struct npl_prof_sample *x = p->arrays[0].samples;
            CHECK(p->arrays[0].nsamples == 2 && x[0].local == 2 && x[0].remote == 1 &&
                      x[1].local == 3 && x[1].remote == 0 && x[0].reads == 2 && x[1].writes == 3,
                  "rows' local and remote read back");
            char *t = npl__profile_format(p, NULL);
            CHECK(t && strstr(t, "[0, 0, 0, 2, 1, 2, 1], [0, 1, 1, 0, 3, 3, 0]"),
                  "rows' local and remote written: %s", t ? t : "(null)");
            free(t);
            round_trip("rows with local and remote", p);
            npl__profile_free(p);
        }
        free(s1);
        p = good("rows without local and remote: 0", BASE);
        if (p) {
            CHECK(p->arrays[0].samples[1].local == 0 && p->arrays[0].samples[1].remote == 0,
                  "5-value rows: local and remote 0");
            npl__profile_free(p);
        }
    }
    bad_edit("\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]", "\"samples\":[[0,0,0,2,1,1,0],[0,1,1,0,3,0,0]]",
             "arrays[0]: samples count local and remote accesses, but measured is missing");
    bad_edit("\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]",
             "\"samples\":[[0,0,0,2,1,3,1],[0,1,1,0,3,0,0]],"
             "\"measured\":{\"local\":9,\"remote\":9,\"unknown\":0}",
             "samples[0]: local + remote (4) exceed its accesses (3)");
    bad_edit("\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]",
             "\"samples\":[[0,0,0,2,1,2,1],[0,1,1,0,3,3,0]],"
             "\"measured\":{\"local\":4,\"remote\":1,\"unknown\":0}",
             "the samples count 5 local and 1 remote accesses, more than measured (4, 1)");
    bad_edit("\"samples\":[[0,0,0,2,1],[0,1,1,0,3]]",
             "\"samples\":[[0,0,0,2,1,2,1],[0,1,1,0,3]],"
             "\"measured\":{\"local\":4,\"remote\":1,\"unknown\":0}",
             "arrays[0].samples[1]: 5 values in a row, not 7 (as in the first row)");
    bad_edit("\"rw_known\":true}",
             "\"rw_known\":true,\"measured\":{\"local\":1,\"remote\":2,\"unknown\":0,\"lost\":1}}",
             "sampling.measured.lost: unknown member \"lost\"");
    bad_edit("\"first_touch\":[0,-1]",
             "\"first_touch\":[0,-1],\"measured\":{\"local\":-1,\"remote\":0,\"unknown\":0}",
             "arrays[0].measured.local");
    bad_edit("\"first_touch\":[0,-1]",
             "\"first_touch\":[0,-1],\"measured\":[1,2,3]", "arrays[0].measured");

    /* ---- a table of bad inputs: each names its problem ---- */
    bad_edit("\"numaplace-profile\"", "\"chrome-trace\"", "not a numaplace profile: format \"chrome-trace\"");
    bad_edit("\"version\":1", "\"version\":2", "version 2 is not supported");
    bad_edit("\"version\":1", "\"version\":1,\"version\":1", "\"version\" given twice");
    bad_edit("\"version\":1", "\"version\":1,\"traceEvents\":[]", "not a numaplace profile: unknown member \"traceEvents\"");
    bad_edit("\"threads\":2", "\"threads\":\"2\"", "run.threads: expected a number, found a string");
    bad_edit("\"threads\":2", "\"threads\":2.5", "run.threads: expected an integer");
    bad_edit("\"threads\":2", "\"threads\":0", "run.threads: 0 is out of range");
    bad_edit("\"threads\":2", "\"threads\":2000", "out of range (1..1024)");
    bad_edit("\"rate\":100", "\"rate\":NaN", "sampling.rate: expected a number, found something that is not JSON");
    bad_edit("\"rate\":100", "\"rate\":Infinity", "sampling.rate: expected a number");
    bad_edit("\"rate\":100", "\"rate\":1e400", "sampling.rate: an absurd number");
    bad_edit("\"rate\":100", "\"rate\":-1", "sampling.rate: -1 is out of range");
    bad_edit("\"rate\":100", "\"rate\":1.", "no digit after '.'");
    bad_edit("\"rate\":100", "\"rate\":+1", "expected a number");
    bad_edit("\"nchunks\":2", "\"nchunks\":3", "nchunks is 3; 8192 bytes in chunks of 4096 make 2");
    bad_edit("\"nchunks\":2", "\"nchunks\":99999999999", "arrays[0].nchunks: 99999999999 is out of range");
    bad_edit("\"bytes\":8192", "\"bytes\":0", "arrays[0]: bytes is 0");
    bad_edit("\"bytes\":8192", "\"bytes\":8192,\"bytes\":8192", "\"bytes\" given twice");
    bad_edit("\"bytes\":8192", "\"bytes\":8192,\"colour\":1", "arrays[0].colour: unknown member \"colour\"");
    bad_edit("\"chunk_bytes\":4096", "\"chunk_bytes\":4000", "nchunks is 2; 8192 bytes in chunks of 4000 make 3");
    bad_edit("\"chunk_bytes\":4096,\"nchunks\":2", "\"chunk_bytes\":6144,\"nchunks\":2", "chunk_bytes 6144 is not a multiple of the page size 4096");
    bad_edit("\"page_size\":4096", "\"page_size\":4097", "not a power of two");
    bad_edit("[0,1,1,0,3]", "[0,2,1,0,3]", "arrays[0].samples[1]: its chunk is past nchunks");
    bad_edit("[0,1,1,0,3]", "[0,1,2,0,3]", "arrays[0].samples[1]: its thread is not one of the run's");
    bad_edit("[0,1,1,0,3]", "[0,1,1,0,0]", "it counts no access");
    bad_edit("[0,1,1,0,3]", "[5,1,1,0,3]", "its phase is not in phases");
    bad_edit("[0,1,1,0,3]", "[0,1,1,0]", "arrays[0].samples[1]: 4 values in a row, not 5");
    bad_edit("[0,1,1,0,3]", "[0,1,1,0,3,9]", "6 values in a row, not 5 (as in the first row)");
    bad_edit("[0,0,0,2,1]", "[0,0,0,2,1,0]", "arrays[0].samples[0]: 6 values in a row, not 5 or 7");
    bad_edit("[0,0,0,2,1]", "[0,0,0,2,1,0,0,0]", "more than 7 values in a row");
    bad_edit("[0,1,1,0,3]", "[0,1,1,0,1099511627777]", "out of range");
    bad_edit("[0,1,1,0,3]", "{}", "expected an array of integers, found an object");
    bad_edit("\"first_touch\":[0,-1]", "\"first_touch\":[0]", "first_touch has 1 entries for 2 chunks");
    bad_edit("\"first_touch\":[0,-1]", "\"first_touch\":[0,-2]", "arrays[0].first_touch[1]: -2 is out of range");
    bad_edit("\"first_touch\":[0,-1]", "\"first_touch\":[0,5]", "thread 5 is not one of the run's 2 threads");
    bad_edit("\"thread_nodes\":[0,1]", "\"thread_nodes\":[0,7]", "run.thread_nodes[1]: node 7 is not one of machine.nodes");
    bad_edit("\"thread_nodes\":[0,1]", "\"thread_nodes\":[0]", "thread_nodes has 1 entries for 2 threads");
    bad_edit("\"thread_cpus\":null", "\"thread_cpus\":[3]", "thread_cpus has 1 entries for 2 threads");
    bad_edit("\"nodes\":[0,1]", "\"nodes\":[1,0]", "distinct and ascending");
    bad_edit("\"nodes\":[0,1]", "\"nodes\":[]", "machine.nodes: no node");
    bad_edit("\"kind\":\"heap\"", "\"kind\":\"stack\"", "\"stack\" is not heap or static");
    bad_edit("\"source\":\"none\"", "\"source\":\"taskset\"", "is not pin, omp or none");
    bad_edit("\"backend\":\"fault\"", "\"backend\":\"pebs\"", "is not fault or perf");
    bad_edit("\"build_id\":null},\"machine\"", "\"build_id\":\"XYZ\"},\"machine\"", "hexadecimal");
    bad_edit("\"build_id\":null},\"machine\"", "\"build_id\":\"abc\"},\"machine\"", "an even number");
    bad_edit(",\"rw_known\":true", "", "sampling: member \"rw_known\" is missing");
    bad_edit("\"program\":{\"path\":\"/bin/x\",\"build_id\":null},", "", "member \"program\" is missing");
    bad_edit("\"path\":\"/bin/x\"", "\"path\":\"/bin/\x01x\"", "a control character in a string");
    bad_edit("\"path\":\"/bin/x\"", "\"path\":\"/bin/\xff\"", "invalid UTF-8");
    bad_edit("\"path\":\"/bin/x\"", "\"path\":\"/bin/\xc0\xaf\"", "invalid UTF-8"); /* overlong '/' */
    bad_edit("\"path\":\"/bin/x\"", "\"path\":\"/bin/\\u0000\"", "a NUL character");
    bad_edit("\"path\":\"/bin/x\"", "\"path\":\"\\ud800\"", "a lone surrogate");
    bad_edit("\"path\":\"/bin/x\"", "\"path\":\"\\q\"", "a bad escape \\q");
    bad_edit("\"offset\":16", "\"offset\":016", "a number with a leading zero");
    bad_edit("\"offset\":16", "\"offset\":99999999999999999999", "out of range");
    bad_edit("\"arrays\":[", "\"arrays\":{", "arrays: expected an array, found an object");
    bad_edit("\"phases\":[{\"id\":0", "\"phases\":[{\"id\":0},{\"id\":0", "phases[0]: member \"kind\" is missing");
    bad_edit("\"entries\":1}]", "\"entries\":1},{\"id\":0,\"kind\":\"window\",\"site\":null,\"entries\":1}]",
             "phase id 0 given twice");
    bad_edit("\"arrays\":[", "\"transitions\":[[0,9,1]],\"arrays\":[", "transitions[0]: phase 9 is not in phases");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"blocked\",\"policy\":\"explicit\",\"confidence\":1,"
             "\"local\":{\"policy\":1,\"first_touch\":null,\"best\":1},\"reason\":\"r\",\"replicate\":false,"
             "\"next_touch_phases\":[],\"samples\":1},\"samples\":[[", "policy \"explicit\" needs chunk_nodes");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"striped\",\"policy\":\"cyclic\"},\"samples\":[[",
             "unknown pattern \"striped\"");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"blocked\",\"policy\":\"cyclic:9\",\"confidence\":1,"
             "\"local\":{\"policy\":1,\"first_touch\":null,\"best\":1},\"reason\":\"r\",\"replicate\":false,"
             "\"next_touch_phases\":[],\"samples\":1},\"samples\":[[", "advice.policy: policy \"cyclic:9\"");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"blocked\",\"policy\":\"cyclic\",\"confidence\":1.5},"
             "\"samples\":[[", "advice.confidence: 1.5 is out of range");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"irregular\",\"policy\":\"explicit\",\"confidence\":1,"
             "\"local\":{\"policy\":1,\"first_touch\":null,\"best\":1},\"reason\":\"r\",\"replicate\":false,"
             "\"next_touch_phases\":[3],\"samples\":1,\"chunk_nodes\":[0,1]},\"samples\":[[",
             "next_touch_phases: phase 3 is not in phases");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"irregular\",\"policy\":\"explicit\",\"confidence\":1,"
             "\"local\":{\"policy\":1,\"first_touch\":null,\"best\":1},\"reason\":\"r\",\"replicate\":false,"
             "\"next_touch_phases\":[],\"samples\":1,\"chunk_nodes\":[0,4]},\"samples\":[[",
             "chunk_nodes: node 4 is not one of machine.nodes");
    bad_edit("\"samples\":[[", "\"advice\":{\"pattern\":\"irregular\",\"policy\":\"explicit\",\"confidence\":1,"
             "\"local\":{\"policy\":1,\"first_touch\":null,\"best\":1},\"reason\":\"r\",\"replicate\":false,"
             "\"next_touch_phases\":[],\"samples\":1,\"chunk_nodes\":[0]},\"samples\":[[",
             "advice.chunk_nodes has 1 entries for 2 chunks");
    {   /* whole-text problems */
        size_t n = strlen(BASE);
        char *s = malloc(n + 8);
        snprintf(s, n + 8, "%s x", BASE);
        expect_bad("text after", s, strlen(s), "text after the profile's object");
        expect_bad("truncated", BASE, n / 2, "(truncated?)");
        expect_bad("truncated at the last brace", BASE, n - 1, "(truncated?)");
        expect_bad("empty", "", 0, "profile: empty");
        expect_bad("a JSON array", "[]", 2, "not a numaplace profile: expected a JSON object, found an array");
        expect_bad("text", "numaplace profile", 17, "found something that is not JSON");
        expect_bad("NUL byte", "{\0}", 3, "expected a member name");
        free(s);
    }
    {   /* nesting: 16 levels are read (inside "extra", skipped), 17 are not */
        char *n16 = nest(16), *n17 = nest(17);
        char *s16 = edit("\"version\":1,", n16), *s17 = edit("\"version\":1,", n17);
        struct npl_profile *q = good("16 levels", s16);
        npl__profile_free(q);
        expect_bad("17 levels", s17, strlen(s17), "extra: nesting deeper than 16 levels");
        free(n16);
        free(n17);
        free(s16);
        free(s17);
        /* a million opening brackets: an error, not a stack overflow */
        size_t big = 1 << 20;
        char *deep = malloc(big + 64);
        int k = sprintf(deep, "{\"extra\":{\"a\":");
        memset(deep + k, '[', big);
        deep[k + big] = 0;
        expect_bad("a million brackets", deep, strlen(deep), "nesting deeper than 16 levels");
        free(deep);
    }
    {   /* good variants: a byte order mark, extra members kept out, UTF-8 and escapes */
        size_t n = strlen(BASE);
        char *bom = malloc(n + 4);
        snprintf(bom, n + 4, "\xEF\xBB\xBF%s", BASE);
        npl__profile_free(good("byte order mark", bom));
        free(bom);
        char *s = edit("\"version\":1,", "\"version\":1,\"extra\":{\"tool\":\"x\",\"v\":[1,{\"a\":null}]},");
        npl__profile_free(good("extra", s));
        free(s);
        s = edit("\"kind\":\"heap\"}", "\"kind\":\"heap\",\"symbol\":\"caf\\u00e9\",\"where\":\"r\\u00e9seau.c:7 \\ud83d\\ude00\"}");
        struct npl_profile *q = good("escapes", s);
        if (q) {
            CHECK(!strcmp(q->arrays[0].site.symbol, "caf\xc3\xa9") &&
                  !strcmp(q->arrays[0].site.where, "r\xc3\xa9seau.c:7 \xf0\x9f\x98\x80"),
                  "escapes decoded: %s %s", q->arrays[0].site.symbol, q->arrays[0].site.where);
            round_trip("escapes", q);
            char label[128];
            npl__site_label(&q->arrays[0].site, label, sizeof label);
            CHECK(!strcmp(label, q->arrays[0].site.where), "label is the source line: %s", label);
            free(q->arrays[0].site.where);
            q->arrays[0].site.where = NULL;
            q->arrays[0].site.ordinal = 2;
            npl__site_label(&q->arrays[0].site, label, sizeof label);
            CHECK(!strcmp(label, "x+0x10#2"), "label without a source line: %s", label);
        }
        npl__profile_free(q);
        free(s);
        /* -0 is 0; 1E2 is a number; fractions are read without the locale */
        s = edit("\"seconds\":0.5", "\"seconds\":2.5E-1");
        q = good("exponent", s);
        CHECK(q && q->seconds == 0.25, "2.5E-1 read as 0.25");
        npl__profile_free(q);
        free(s);
        s = edit("\"offset\":16", "\"offset\":-0");
        q = good("minus zero", s);
        CHECK(q && q->arrays[0].site.offset == 0, "-0 read as 0");
        npl__profile_free(q);
        free(s);
        /* a written invalid UTF-8 path comes out as U+FFFD, still JSON */
        q = good("base", BASE);
        if (q) {
            free(q->program_path);
            q->program_path = strdup("/bin/\xff\xfe\"quote\\");
            size_t n1;
            char *t = npl__profile_format(q, &n1);
            struct npl_profile *r = NULL;
            char err[512];
            CHECK(t && npl__profile_parse(t, n1, &r, err, sizeof err) == 0 &&
                  !strcmp(r->program_path, "/bin/\xef\xbf\xbd\xef\xbf\xbd\"quote\\"),
                  "invalid UTF-8 written as U+FFFD: %s", t ? err : "no text");
            npl__profile_free(r);
            free(t);
        }
        npl__profile_free(q);
    }

    /* ---- files ---- */
    {
        struct npl_profile *q = NULL;
        char err[1024];
        errno = 0;
        CHECK(npl__profile_load("/nonexistent/profile.json", &q, err, sizeof err) == -1 &&
              errno == ENOENT && strstr(err, "/nonexistent/profile.json"), "missing file: %s", err);
        CHECK(npl__profile_load("/", &q, err, sizeof err) == -1 && errno == EISDIR, "a directory");
        char fifo[] = "/tmp/npl_profile_fifo_XXXXXX";
        int fd = mkstemp(fifo);
        if (fd >= 0) {
            close(fd);
            unlink(fifo);
            if (mkfifo(fifo, 0600) == 0) {
                CHECK(npl__profile_load(fifo, &q, err, sizeof err) == -1 && errno == EINVAL,
                      "a FIFO is refused without waiting: %s", err);
                unlink(fifo);
            }
        }
        char big[] = "/tmp/npl_profile_big_XXXXXX";
        fd = mkstemp(big);
        if (fd >= 0) {
            CHECK(ftruncate(fd, (off_t)NPL_PROF_MAX_TEXT + 1) == 0, "sparse file");
            close(fd);
            CHECK(npl__profile_load(big, &q, err, sizeof err) == -1 && errno == EFBIG,
                  "over 256 MiB: EFBIG: %s", err);
            unlink(big);
        }
    }

    /* ---- every profile of tests/profiles/ reads and round-trips; every bad one fails ---- */
    const char *dirs[2] = {"tests/profiles", "tests/profiles/bad"};
    int seen[2] = {0, 0};
    for (int d = 0; d < 2; d++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", src, dirs[d]);
        DIR *dir = opendir(path);
        struct dirent *e;
        while (dir && (e = readdir(dir))) {
            if (e->d_name[0] == '.' || !strcmp(e->d_name, "bad"))
                continue;
            char f[4400], err[1024] = "";
            snprintf(f, sizeof f, "%s/%s", path, e->d_name);
            struct npl_profile *q = NULL;
            int rc = npl__profile_load(f, &q, err, sizeof err);
            seen[d]++;
            if (d == 0) {
                CHECK(rc == 0, "%s: %s", e->d_name, err);
                if (q)
                    round_trip(e->d_name, q);
            } else {
                CHECK(rc == -1 && (errno == EINVAL) && strstr(err, e->d_name) && !strchr(err, '\n'),
                      "%s: a bad profile gives one line naming the file: rc %d: %s", e->d_name, rc, err);
            }
            npl__profile_free(q);
        }
        if (dir)
            closedir(dir);
    }
    CHECK(seen[0] >= 10 && seen[1] >= 12, "profiles found: %d good, %d bad (run with the source "
          "directory as argument)", seen[0], seen[1]);

    phase_seconds(src);

    /* ---- threads that did not run together: one line (npl__profile_run_warning) ---- */
    {
        char why[400] = "";
        CHECK(run_warning(10, 2, NULL, why, sizeof why) == 1 &&
                  strstr(why, "did not run together: in 8 of 10 sampler rounds") && !strchr(why, '\n'),
              "8 of 10 crowded rounds apart: one line: %s", why);
        CHECK(run_warning(10, 5, NULL, why, sizeof why) == 0, "5 of 10 together: no warning");
        CHECK(run_warning(4, 0, NULL, why, sizeof why) == 0, "4 rounds only: no warning");
        CHECK(run_warning(-1, 0, NULL, why, sizeof why) == 0, "no concurrency: no warning");
        CHECK(run_warning(10, 9, "[0.1,2,0.2]", why, sizeof why) == 1 &&
                  strstr(why, "thread 1 ran 2 s while pages were armed, thread 2 0.2 s, more than 8x"),
              "workers' exposures 10x apart: %s", why);
        CHECK(run_warning(10, 9, "[0.01,2,0.3]", why, sizeof why) == 0,
              "workers' exposures 6.7x apart, the main thread's 200x less: no warning");
        CHECK(run_warning(-1, 0, "[1,2,1.1]", why, sizeof why) == 0, "exposures 2x apart: none");
        bad_edit("\"rw_known\":true", "\"rw_known\":true,\"concurrency\":{\"rounds\":3,\"together\":4}",
                 "together (4) exceeds rounds (3)");
        bad_edit("\"rw_known\":true", "\"rw_known\":true,\"concurrency\":{\"rounds\":3}",
                 "together");
    }

    /* ---- OMP_WAIT_POLICY as the program ran (sampling.omp_wait, optional) ---- */
    {
        const char *v[2] = {"passive", "active"};
        for (int k = 0; k < 2; k++) {
            char to[96];
            snprintf(to, sizeof to, "\"rw_known\":true,\"omp_wait\":\"%s\"", v[k]);
            char *t = edit("\"rw_known\":true", to);
            struct npl_profile *q = good("omp_wait", t);
            size_t n = 0;
            char *w = q ? npl__profile_format(q, &n) : NULL;
            CHECK(q && q->idle_sleep == !k && w &&
                      (strstr(w, "\"omp_wait\": \"passive\"") != NULL) == !k,
                  "omp_wait %s: idle threads slept %d, written back %d", v[k],
                  q ? q->idle_sleep : -1, w && strstr(w, "omp_wait") != NULL);
            if (q)
                round_trip("omp_wait", q);
            npl__profile_free(q);
            free(w);
            free(t);
        }
        bad_edit("\"rw_known\":true", "\"rw_known\":true,\"omp_wait\":1", "omp_wait");
    }

    /* ---- each thread's exposure (run.thread_exposure, optional): read, written, checked ---- */
    {
        char *t = edit("\"thread_cpus\":null,", "\"thread_cpus\":null,\"thread_exposure\":[0.5,0.25],");
        struct npl_profile *q = good("thread_exposure", t);
        CHECK(q && q->thread_exposure && q->thread_exposure[0] == 0.5 &&
                  q->thread_exposure[1] == 0.25, "thread_exposure read back");
        if (q)
            round_trip("thread_exposure", q);
        npl__profile_free(q);
        free(t);
        bad_edit("\"thread_cpus\":null,", "\"thread_cpus\":null,\"thread_exposure\":[0.5],",
                 "thread_exposure has 1 entries for 2 threads");
        bad_edit("\"thread_cpus\":null,", "\"thread_cpus\":null,\"thread_exposure\":[],",
                 "thread_exposure has 0 entries for 2 threads");
        bad_edit("\"thread_cpus\":null,", "\"thread_cpus\":null,\"thread_exposure\":[0.5,-1],",
                 "run.thread_exposure[1]");
        struct npl_profile *b = good("base", BASE);
        CHECK(b && !b->thread_exposure && !b->phase_exposure, "no thread_exposure: NULL");
        npl__profile_free(b);
    }

    /* ---- the exposures by phase (run.phase_exposure, optional): [phase id, thread, seconds],
     * ids made indexes, sorted; every reference checked ---- */
    {
        const char *two = "\"phases\":[{\"id\":0,\"kind\":\"window\",\"site\":null,\"entries\":1},"
                          "{\"id\":7,\"kind\":\"window\",\"site\":null,\"entries\":1}]";
        char *a = edit("\"phases\":[{\"id\":0,\"kind\":\"window\",\"site\":null,\"entries\":1}]", two);
        char *t = edit_in(a, "\"thread_cpus\":null,", "\"thread_cpus\":null,\"thread_exposure\":"
                          "[0.5,0.25],\"phase_exposure\":[[7,1,0.125],[0,0,0.5],[7,0,0.25]],");
        struct npl_profile *q = good("phase_exposure", t);
        CHECK(q && q->nphase_exposure == 3 && q->phase_exposure[0].phase == 0 &&
                  q->phase_exposure[0].thread == 0 && q->phase_exposure[1].phase == 1 &&
                  q->phase_exposure[1].thread == 0 && q->phase_exposure[1].seconds == 0.25 &&
                  q->phase_exposure[2].phase == 1 && q->phase_exposure[2].thread == 1 &&
                  q->phase_exposure[2].seconds == 0.125,
              "phase_exposure read back: phase 7 is index 1, sorted by phase and thread");
        if (q) {
            round_trip("phase_exposure", q);
            size_t n;
            char *w = npl__profile_format(q, &n);
            CHECK(w && strstr(w, "\"phase_exposure\": [[0, 0, 0.5], [7, 0, 0.25], [7, 1, 0.125]]"),
                  "phase_exposure written with phase ids: %.200s", w && strstr(w, "phase_exposure")
                  ? strstr(w, "phase_exposure") : "(none)");
            free(w);
        }
        npl__profile_free(q);
        static const char *const bad[][2] = {
            {"[[9,1,0.125]]", "run.phase_exposure[0]: phase 9 is not in phases"},
            {"[[7,2,0.125]]", "thread 2 is not one of the run's 2"},
            {"[[7,1,0.1],[7,1,0.2]]", "phase 7, thread 1 given twice"},
            {"[[7,1,-0.1]]", "run.phase_exposure[0][2]"},
            {"[[7,1]]", "2 values, not 3"},
            {"[[7,1,0.1,4]]", "more than 3 values"}};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            char with[160];
            snprintf(with, sizeof with, "\"thread_cpus\":null,\"thread_exposure\":[0.5,0.25],"
                     "\"phase_exposure\":%s,", bad[i][0]);
            char *u = edit_in(a, "\"thread_cpus\":null,", with);
            struct npl_profile *x = NULL;
            char err[1024] = "";
            int rc = npl__profile_parse(u, strlen(u), &x, err, sizeof err);
            CHECK(rc < 0 && strstr(err, bad[i][1]), "phase_exposure %s refused: %s", bad[i][0], err);
            npl__profile_free(x);
            free(u);
        }
        char *u = edit_in(a, "\"thread_cpus\":null,", "\"thread_cpus\":null,"
                          "\"phase_exposure\":[[7,1,0.1]],");
        struct npl_profile *x = NULL;
        char err[1024] = "";
        CHECK(npl__profile_parse(u, strlen(u), &x, err, sizeof err) < 0 &&
                  strstr(err, "phase_exposure without thread_exposure"),
              "phase_exposure alone refused: %s", err);
        npl__profile_free(x);
        free(u);
        free(t);
        free(a);
    }
    return check_summary("test_profile_format");
}
