/* SPDX-License-Identifier: BSD-3-Clause */
/* test_site.c - site identity (src/profile/site.c): an allocation site is (object, build-id,
 * offset from the object's load bias, ordinal at the site), the same on every run under address
 * randomisation; different sites differ; ordinals count per site; a call made from inside the C
 * library is walked out of to the program's frame; static arrays are split by symbol. The
 * process re-runs itself twice and compares the identities the three processes print. */
#define _GNU_SOURCE
#include "check.h"
#include "profile/profile.h"

#include <link.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

double big_static_a[300000]; /* 2.4 MB: two static arrays over the 1 MiB threshold */
double big_static_b[200000];
static double small_static[100];

/* the identity of the caller of `where` (as the interposer's malloc computes it) */
static __attribute__((noinline)) void where(char *out, size_t size)
{
    const void *ra = __builtin_return_address(0);
    struct npl_site_key k;
    struct npl_site_object o;
    if (npl__site_resolve(ra, &k, &o) < 0) {
        snprintf(out, size, "?");
        return;
    }
    uint32_t ord = npl__site_next_ordinal(&k);
    const char *base = strrchr(o.path, '/');
    int n = snprintf(out, size, "%.200s %.128s +%#llx #%u", base ? base + 1 : o.path, o.build_id,
                     (unsigned long long)k.offset, ord);
    (void)n;
}

/* two allocation sites (not tail calls: the return address must stay in them; different
 * bodies: identical functions would be folded into one) */
static volatile int ones, twos;
static __attribute__((noinline)) void site_one(char *out, size_t size)
{
    where(out, size);
    ones++;
}
static __attribute__((noinline)) void site_two(char *out, size_t size)
{
    where(out, size);
    twos += 2;
}

/* qsort calls back from inside libc: the site of the callback's "allocation" is the call to
 * qsort in this program */
static const void *walked, *qsort_ra;
static int cmp(const void *a, const void *b)
{
    if (!walked)
        walked = npl__site_caller(__builtin_return_address(0));
    return *(const int *)a - *(const int *)b;
}
static __attribute__((noinline, unused)) void call_qsort(void)
{
    int v[4] = {3, 1, 2, 0};
    qsort(v, 4, sizeof v[0], cmp);
    qsort_ra = __builtin_return_address(0); /* only to keep the frame; compared below */
}

struct statics_seen {
    char text[1024];
    int a, b, small;
    uintptr_t bias;
};
static void on_static(const char *symbol, uint64_t offset, uintptr_t addr, size_t bytes, void *ctx)
{
    struct statics_seen *s = ctx;
    size_t used = strlen(s->text);
    snprintf(s->text + used, sizeof s->text - used, " %s@%#llx:%zu", symbol,
             (unsigned long long)offset, bytes);
    if (!strcmp(symbol, "big_static_a") && addr == (uintptr_t)big_static_a &&
        bytes == sizeof big_static_a && offset == addr - s->bias)
        s->a++;
    if (!strcmp(symbol, "big_static_b") && addr == (uintptr_t)big_static_b)
        s->b++;
    if (!strcmp(symbol, "small_static"))
        s->small++;
}

/* everything this process identifies, one line */
static void identities(char *out, size_t size)
{
    char s1[600], s1b[600], s2[600];
    site_one(s1, sizeof s1);
    site_one(s1b, sizeof s1b);
    site_two(s2, sizeof s2);
    struct statics_seen st = {"", 0, 0, 0, 0};
    struct npl_site_object me;
    if (npl__site_main_object(&me) == 0)
        st.bias = me.bias;
    npl__site_statics(NULL, (size_t)1 << 20, on_static, &st);
    snprintf(out, size, "one=[%s] one'=[%s] two=[%s] statics=[%s]", s1, s1b, s2, st.text);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child")) {
        char id[4096];
        identities(id, sizeof id);
        struct npl_site_object me;
        npl__site_main_object(&me);
        printf("%s\nbias %#lx\n", id, (unsigned long)me.bias);
        return 0;
    }
    char id[4096];
    identities(id, sizeof id);
    printf("this run: %s\n", id);

    /* the pieces */
    struct npl_site_object me;
    CHECK(npl__site_main_object(&me) == 0 && me.main, "the program is the first object");
    char file_bid[200];
    CHECK(npl__elf_build_id("/proc/self/exe", file_bid, sizeof file_bid) == 0 &&
              !strcmp(file_bid, me.build_id) && strlen(me.build_id) >= 16,
          "the build-id read from the loaded notes (%s) is the file's (%s)", me.build_id, file_bid);
    char a[600], b[600], c[600], d[600];
    site_one(a, sizeof a);
    site_one(b, sizeof b);
    site_two(c, sizeof c);
    site_two(d, sizeof d);
    /* ordinals count per site: identities() already made 2 at site_one and 1 at site_two */
    CHECK(strstr(a, "#2") && strstr(b, "#3") && strstr(c, "#1") && strstr(d, "#2"),
          "ordinals per site: %s | %s | %s | %s", a, b, c, d);
    char a_off[64], c_off[64];
    sscanf(strchr(a, '+'), "%63s", a_off);
    sscanf(strchr(c, '+'), "%63s", c_off);
    CHECK(strcmp(a_off, c_off) != 0, "two sites differ: %s vs %s", a_off, c_off);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* the sanitizer's runtime intercepts qsort: the comparator is called from it, not libc */
    SKIP("sanitizer-interceptors", "a call from inside libc walked out to the program: qsort is "
         "the sanitizer runtime's interceptor in this build");
#else
    call_qsort();
    struct npl_site_object wo;
    CHECK(walked && npl__site_object(walked, &wo) == 0 && wo.main &&
              (uintptr_t)walked > (uintptr_t)call_qsort &&
              (uintptr_t)walked < (uintptr_t)call_qsort + 256,
          "a call from inside libc is walked out to the program's call of qsort (%p, call_qsort "
          "at %p)", walked, (void *)call_qsort);
#endif
    struct statics_seen st = {"", 0, 0, 0, me.bias};
    int n = npl__site_statics(NULL, (size_t)1 << 20, on_static, &st);
    CHECK(n == 2 && st.a == 1 && st.b == 1 && st.small == 0,
          "static arrays by symbol: %d found:%s", n, st.text);
    small_static[0] = 1;

    /* the same identities in two more processes (fresh address layouts) */
    char runs[2][4096];
    unsigned long bias[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        int pfd[2];
        if (pipe(pfd) < 0)
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            dup2(pfd[1], 1);
            execl("/proc/self/exe", argv[0], "--child", (char *)NULL);
            _exit(127);
        }
        close(pfd[1]);
        char buf[4096];
        size_t got = 0;
        ssize_t k;
        while ((k = read(pfd[0], buf + got, sizeof buf - 1 - got)) > 0)
            got += (size_t)k;
        buf[got] = 0;
        close(pfd[0]);
        waitpid(pid, NULL, 0);
        char *nl = strchr(buf, '\n');
        if (nl)
            *nl = 0;
        memcpy(runs[r], buf, sizeof runs[r]);
        if (nl)
            sscanf(nl + 1, "bias %lx", &bias[r]);
    }
    CHECK(!strcmp(runs[0], id) && !strcmp(runs[1], id),
          "the same identities in every run:\n  %s\n  %s\n  %s", id, runs[0], runs[1]);
    FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
    int aslr = 0;
    if (f) {
        if (fscanf(f, "%d", &aslr) != 1)
            aslr = 0;
        fclose(f);
    }
    /* the runs inherit this process's personality: ADDR_NO_RANDOMIZE (setarch -R, or a
     * sanitizer's re-exec) turns randomisation off for them too */
    int persona = personality(0xffffffff);
    if (aslr && persona != -1 && !(persona & ADDR_NO_RANDOMIZE))
        CHECK(bias[0] != bias[1] || bias[0] != me.bias,
              "address randomisation moved the program (%#lx %#lx %#lx)", me.bias, bias[0], bias[1]);
    else
        SKIP("aslr", "the same identities at different addresses: address randomisation is off "
             "(randomize_va_space %d, personality %#x)", aslr, (unsigned)persona);
    return check_summary("site");
}
