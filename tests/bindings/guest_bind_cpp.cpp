/* SPDX-License-Identifier: BSD-3-Clause */
// guest_bind_cpp --nodes N --cpus-per-node K: numaplace.hpp in the multi-node guest, page by page
// against independent formulas (not the library's map): array<T> 1D and 2D, set_policy,
// migrate, the allocator under std::vector, pinned threads. Prints
// "guest_bind_cpp: N passed, M failed, 0 skipped".
#include <numaplace.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

static int passed, failed;
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (cond) {                                                                               \
            passed++;                                                                             \
        } else {                                                                                  \
            failed++;                                                                             \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                    \
            std::printf(__VA_ARGS__);                                                             \
            std::printf("\n");                                                                    \
        }                                                                                         \
    } while (0)

static int N;
static const std::size_t PSZ = 4096;

// Pages whose node differs from want(i); the first one in *first.
template <class F> static std::size_t wrong(const std::vector<int> &have, F want, std::size_t *first)
{
    std::size_t bad = 0;
    for (std::size_t i = 0; i < have.size(); i++)
        if (have[i] != want(i) && bad++ == 0)
            *first = i;
    return bad;
}

static int node(std::size_t idx) { return npl_topo_node_id(npl_topo_self(), static_cast<int>(idx)); }

static void test_array_1d()
{
    std::size_t pages = 64 * static_cast<std::size_t>(N), first = 0;
    numaplace::array<double> a(pages * PSZ / sizeof(double), numaplace::policy::cyclic());
    std::iota(a.begin(), a.end(), 1.0);
    double sum = std::accumulate(a.begin(), a.end(), 0.0);
    std::size_t bad = wrong(a.nodes(), [](std::size_t i) { return node(i % N); }, &first);
    CHECK(bad == 0, "array<double> cyclic: %zu of %zu pages wrong (first %zu)", bad, pages, first);
    a.set_policy(numaplace::policy::skew_mapp());
    bad = wrong(a.nodes(), [](std::size_t i) { return node((i + i / N + 1) % N); }, &first);
    CHECK(bad == 0 && std::accumulate(a.begin(), a.end(), 0.0) == sum,
          "set_policy(skew_mapp): %zu pages wrong (first %zu), data %s", bad, first,
          std::accumulate(a.begin(), a.end(), 0.0) == sum ? "kept" : "CHANGED");
    numaplace::migrate_result r = a.migrate(node(N - 1));
    bad = wrong(a.nodes(), [](std::size_t) { return node(N - 1); }, &first);
    CHECK(bad == 0 && r.failed == 0, "migrate to the last node: %zu pages wrong", bad);
    numaplace::check_result c = a.check();
    CHECK(c.placed == pages && c.misplaced == 0, "check after migrate: %zu placed", c.placed);
}

static void test_array_2d()
{
    // one row = one page (1024 ints); blocks of 2 rows cycle over the nodes
    std::size_t rows = 8 * static_cast<std::size_t>(N), first = 0;
    numaplace::array<int> m(rows, PSZ / sizeof(int), numaplace::policy::cyclic_block().block_units(2));
    for (std::size_t i = 0; i < rows; i++)
        m(i, 5) = static_cast<int>(i);
    std::size_t bad = wrong(m.nodes(), [](std::size_t i) { return node(i / 2 % N); }, &first);
    CHECK(bad == 0, "2D cyclic_block of 2 rows: %zu pages wrong (first %zu)", bad, first);
    m.set_policy_rows(0, rows / 2, numaplace::policy::bind_all({node(N - 1)}));
    bad = wrong(m.nodes(), [rows](std::size_t i) { return i < rows / 2 ? node(N - 1) : node(i / 2 % N); },
                &first);
    CHECK(bad == 0 && m(rows - 1, 5) == static_cast<int>(rows - 1),
          "first half re-placed on the last node: %zu pages wrong (first %zu)", bad, first);
}

static void test_allocator()
{
    numaplace::allocator<double> al(numaplace::policy::bind_all({node(N - 1)}));
    std::vector<double, numaplace::allocator<double>> v(al);
    for (int i = 0; i < 100000; i++)
        v.push_back(i);
    std::size_t first = 0;
    std::vector<int> have = numaplace::page_nodes(v.data(), v.size() * sizeof(double));
    std::size_t bad = wrong(have, [](std::size_t) { return node(N - 1); }, &first);
    CHECK(bad == 0, "vector under bind_all(last node): %zu of %zu pages wrong", bad, have.size());
    std::vector<double, numaplace::allocator<double>> w{numaplace::allocator<double>(numaplace::policy::cyclic())};
    w.assign(v.begin(), v.end());
    have = numaplace::page_nodes(w.data(), w.size() * sizeof(double));
    bad = wrong(have, [](std::size_t i) { return node(i % N); }, &first);
    CHECK(bad == 0, "vector under cyclic: %zu of %zu pages wrong (first %zu)", bad, have.size(), first);
}

static void test_threads()
{
    for (int k = 0; k < N; k++) {
        numaplace::place where{-1, -1};
        numaplace::pinned_thread("scatter", k, [&where] { where = numaplace::where_am_i(); }).join();
        CHECK(where.node == node(k), "scatter thread %d runs on node %d (want %d)", k, where.node, node(k));
    }
    CHECK(numaplace::local_nodes().size() == static_cast<std::size_t>(N), "local_nodes: all %d", N);
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!std::strcmp(argv[i], "--nodes"))
            N = std::atoi(argv[i + 1]);
    if (N < 1 || npl_topo_self() == nullptr || npl_topo_node_count(npl_topo_self(), 0) != N) {
        std::printf("guest_bind_cpp: --nodes %d does not match this machine\nguest_bind_cpp: 0 passed, 1 failed, 0 skipped\n", N);
        return 1;
    }
    try {
        test_array_1d();
        test_array_2d();
        test_allocator();
        test_threads();
    } catch (const numaplace::error &e) {
        CHECK(false, "exception: %s (errno %d)", e.what(), e.code().value());
    }
    std::printf("guest_bind_cpp: %d passed, %d failed, 0 skipped\n", passed, failed);
    return failed != 0 || passed == 0;
}
