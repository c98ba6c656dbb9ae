/* SPDX-License-Identifier: BSD-3-Clause */
/* cxx_align - C++17 allocation at every alignment: operator new and new[] with std::align_val_t
 * from 8 bytes to 2 MiB (plain, nothrow, and freed with the sized and the aligned deletes),
 * new T[] of alignas(64) and alignas(4096) types, nothrow new of a plain array, std::vector of an
 * over-aligned type, and std::aligned_alloc from worker threads. Each block is written whole,
 * checked and freed. Prints one line per block and a checksum that `numaplace run` must not change
 * (tests/cli/test_run_progs.sh, also linked with jemalloc, tcmalloc and mimalloc).
 *   cxx_align [--nodes] [KIB]   --nodes: each line also gets the node of each page (align_styles.c) */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>
#include <sys/syscall.h>
#include <unistd.h>

static bool show_nodes;
static uint64_t total = 1469598103934665603ull;
static const size_t PSZ = 4096;

struct alignas(64) Line { double v[8]; };
struct alignas(4096) Page { char c[4096]; };

static void print_nodes(const unsigned char *p, size_t n)
{
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(PSZ - 1);
    size_t np = ((uintptr_t)p + n - lo + PSZ - 1) / PSZ;
    std::vector<void *> pages(np);
    std::vector<int> st(np);
    std::string s(np, '-');
    for (size_t i = 0; i < np; i++)
        pages[i] = (void *)(lo + i * PSZ);
    long rc = syscall(SYS_move_pages, 0, np, pages.data(), nullptr, st.data(), 0);
    for (size_t i = 0; i < np; i++)
        if (rc >= 0 && st[i] >= 0)
            s[i] = st[i] < 10 ? (char)('0' + st[i]) : (char)('a' + st[i] - 10);
    std::printf(" offset %zu nodes %s", (size_t)((uintptr_t)p - lo), s.c_str());
}

/* write and check one block, report it (the caller frees it) */
static void check(const char *style, size_t align, void *v, size_t n)
{
    unsigned char *p = (unsigned char *)v;
    bool ok = p != nullptr, aligned = p && (uintptr_t)p % align == 0;
    for (size_t i = 0; ok && i < n; i++)
        p[i] = (unsigned char)(i * 13 + align);
    uint64_t s = 1469598103934665603ull;
    for (size_t i = 0; ok && i < n; i += 61)
        s = (s ^ p[i]) * 1099511628211ull;
    total = (total ^ s) * 1099511628211ull;
    std::printf("%s %zu ok %d aligned %d", style, align, ok, aligned);
    if (show_nodes && p)
        print_nodes(p, n);
    std::printf("\n");
}

int main(int argc, char **argv)
{
    size_t kib = 1024 + 20;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--nodes"))
            show_nodes = true;
        else
            kib = (size_t)std::atol(argv[i]);
    }
    size_t n = kib << 10;
    for (size_t a = 8; a <= (size_t)2 << 20; a *= 2) {
        std::align_val_t al{a};
        void *p = ::operator new(n, al);
        check("new_align", a, p, n);
        ::operator delete(p, n, al); /* sized and aligned */
        p = ::operator new[](n, al);
        check("new[]_align", a, p, n);
        ::operator delete[](p, al);
        p = ::operator new(n, al, std::nothrow);
        check("new_align_nothrow", a, p, n);
        ::operator delete(p, al, std::nothrow);
        p = ::operator new[](n, al, std::nothrow);
        check("new[]_align_nothrow", a, p, n);
        ::operator delete[](p, al);
    }
    void *p = ::operator new(n);
    check("new", 16, p, n);
    ::operator delete(p, n);
    p = ::operator new(n, std::nothrow);
    check("new_nothrow", 16, p, n);
    ::operator delete(p);
    Line *l = new Line[n / sizeof(Line)];
    check("new_Line[]", alignof(Line), l, n);
    delete[] l;
    Page *g = new (std::nothrow) Page[n / sizeof(Page)];
    check("new_nothrow_Page[]", alignof(Page), g, n);
    delete[] g;
    double *d = new (std::nothrow) double[n / sizeof(double)];
    check("new_nothrow_double[]", alignof(double), d, n);
    delete[] d;
    {
        std::vector<Line> v(n / sizeof(Line));
        check("vector<Line>", alignof(Line), v.data(), n);
    }
    std::vector<std::thread> th;
    std::vector<int> oks(4);
    for (int t = 0; t < 4; t++)
        th.emplace_back([&oks, n, t] {
            unsigned char *q = (unsigned char *)std::aligned_alloc(65536, n);
            oks[t] = q && (uintptr_t)q % 65536 == 0;
            if (q)
                std::memset(q, t, n);
            std::free(q);
        });
    for (auto &t : th)
        t.join();
    std::printf("threads aligned_alloc ok %d\n", oks[0] + oks[1] + oks[2] + oks[3]);
    std::printf("checksum %016llx\n", (unsigned long long)total);
    return 0;
}
