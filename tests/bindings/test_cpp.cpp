/* SPDX-License-Identifier: BSD-3-Clause */
// test_cpp - numaplace.hpp on the host (one node: placement is trivial here, the guest program
// guest_bind_cpp checks it page by page): RAII, checksums, views, policies as values,
// exceptions carrying errno and text, the allocator with std::vector.
#include <numaplace.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <sstream>
#include <vector>

static int passed, failed;
#define CHECK(cond, what)                                                                         \
    do {                                                                                          \
        if (cond) {                                                                               \
            passed++;                                                                             \
        } else {                                                                                  \
            failed++;                                                                             \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what);                          \
        }                                                                                         \
    } while (0)

// Runs f, which must throw numaplace::error with errno `want`; returns the message.
template <class F> static std::string expect_error(F f, int want, const char *what)
{
    try {
        f();
    } catch (const numaplace::error &e) {
        CHECK(e.code().value() == want && e.code().category() == std::generic_category(), what);
        return e.what();
    } catch (...) {
        CHECK(false, what);
        return "";
    }
    CHECK(false, what);
    return "";
}

static std::uint64_t live_arrays()
{
    npl_stats s{};
    npl_get_stats(&s);
    return s.arrays_live;
}

static void test_policies()
{
    numaplace::policy p = numaplace::policy::cyclic_block(4);
    CHECK(p.str() == "cyclic_block:pages=4" || p.str().rfind("cyclic_block", 0) == 0, "cyclic_block str");
    numaplace::policy q = p; // independent copy
    q.block_pages(8);
    CHECK(p.str() != q.str(), "copies are independent values");
    CHECK(numaplace::policy::parse(q.str()).str() == q.str(), "str() parses back to the same policy");
    CHECK(numaplace::policy::skew_mapp().get_kind() == numaplace::kind::skew_mapp, "kind");
    CHECK(numaplace::policy::bind_all().wants_pinning(), "bind_all wants pinning");
    CHECK(!numaplace::policy::cyclic().wants_pinning(), "cyclic does not");
    std::ostringstream os;
    os << numaplace::policy::random(42);
    CHECK(os.str().find("seed=42") != std::string::npos, "operator<< prints the seed");
    std::string msg = expect_error([] { numaplace::policy::parse("no_such_policy"); }, EINVAL,
                                   "parse of a bad name: EINVAL");
    CHECK(msg.find("npl_policy_parse") != std::string::npos && msg.size() > 18,
          "the message names the call and carries the library's text");
    expect_error([] { numaplace::policy::prime_mapp(4); }, EINVAL, "prime_mapp:4: EINVAL");
    expect_error([] { numaplace::policy::weighted({0, 1}, {1}); }, EINVAL, "weighted sizes differ");
    expect_error([] { numaplace::policy::cyclic().block_pages(4); }, EINVAL,
                 "block size on a non-block policy: EINVAL");
}

static void test_array()
{
    std::uint64_t before = live_arrays();
    {
        numaplace::array<double> a(1000003, numaplace::policy::cyclic());
        CHECK(a.size() == 1000003 && a.rows() == 1 && a.cols() == 1000003, "1D size");
        CHECK(std::all_of(a.begin(), a.end(), [](double x) { return x == 0.0; }), "zero-filled");
        for (std::size_t i = 0; i < a.size(); i++)
            a[i] = static_cast<double>(i % 1000);
        double sum = std::accumulate(a.begin(), a.end(), 0.0);
        CHECK(live_arrays() == before + 1, "one library array while in scope");
        a.set_policy(numaplace::policy::skew_mapp());
        CHECK(std::accumulate(a.begin(), a.end(), 0.0) == sum, "set_policy keeps the data");
        CHECK(a.policy_string() == "skew_mapp", "the array's policy is skew_mapp");
        numaplace::check_result c = a.check();
        CHECK(c.pages == (a.bytes() + 4095) / 4096 && c.misplaced == 0, "check: nothing misplaced");
        numaplace::migrate_result r = a.migrate(npl_topo_node_id(npl_topo_self(), 0));
        CHECK(r.failed == 0 && std::accumulate(a.begin(), a.end(), 0.0) == sum, "migrate keeps data");
        std::vector<int> nodes = a.nodes();
        CHECK(nodes.size() == c.pages && nodes[0] == npl_topo_node_id(npl_topo_self(), 0),
              "nodes(): one entry per page");
        expect_error([&] { a.migrate(4095); }, EINVAL, "migrate to a node that does not exist");

        numaplace::array<double> moved = std::move(a);
        CHECK(a.data() == nullptr && a.size() == 0 && moved.size() == 1000003, "move empties");
        CHECK(live_arrays() == before + 1, "a move allocates nothing");
    }
    CHECK(live_arrays() == before, "freed at scope exit");

    numaplace::array<int> m(300, 257, numaplace::policy::bind_block(4));
    for (std::size_t i = 0; i < m.rows(); i++)
        for (std::size_t j = 0; j < m.cols(); j++)
            m(i, j) = static_cast<int>(i * 1000 + j);
    CHECK(m[5 * 257 + 7] == 5007 && m.data()[m.size() - 1] == 299256, "2D view is row-major");
    long long sum = 0;
    for (int x : m)
        sum += x;
    CHECK(sum == 257LL * 1000 * (299 * 300 / 2) + 300LL * (256 * 257 / 2), "2D checksum");
    m.set_policy_rows(0, 150, numaplace::policy::cyclic());
    CHECK(m(299, 256) == 299256, "set_policy_rows keeps data");

    expect_error([] { numaplace::array<char> bad(0, numaplace::policy()); }, EINVAL, "0 elements");
    expect_error([] { numaplace::array<char> bad(16, numaplace::policy::bind_all({4095})); }, EINVAL,
                 "a node that does not exist");
    expect_error([] { numaplace::array<char> bad(SIZE_MAX / 2, SIZE_MAX / 2, numaplace::policy()); },
                 EOVERFLOW, "size overflow");
    CHECK(live_arrays() == before + 1, "failed constructions leak nothing");
}

static void test_allocator()
{
    std::uint64_t before = live_arrays();
    {
        numaplace::allocator<double> al(numaplace::policy::cyclic());
        std::vector<double, numaplace::allocator<double>> v(al);
        for (int i = 0; i < 200000; i++)
            v.push_back(i * 0.5);
        double sum = std::accumulate(v.begin(), v.end(), 0.0);
        CHECK(sum == 0.5 * (199999.0 * 200000.0 / 2), "vector checksum after growth");
        numaplace::array_info info{};
        CHECK(npl_array_info(v.data(), &info) == 0 && info.bytes >= v.size() * sizeof(double),
              "the vector's buffer is a library array");
        char buf[64];
        npl_array_policy(v.data(), buf, sizeof buf);
        CHECK(std::strcmp(buf, "cyclic") == 0, "placed under the allocator's policy");
        CHECK(live_arrays() == before + 1, "growth freed the old buffers");

        std::vector<double, numaplace::allocator<double>> w(v); // copy: same allocator policy
        CHECK(w == v && w.get_allocator().get_policy().str() == "cyclic", "copy");
        std::vector<double, numaplace::allocator<double>> z{numaplace::allocator<double>(numaplace::policy::skew_mapp())};
        z = std::move(w); // propagate on move: z now holds w's memory and policy
        CHECK(z.get_allocator().get_policy().str() == "cyclic" && z.size() == v.size(), "move-assign");
        numaplace::allocator<int> ai(al); // rebind keeps the policy
        CHECK(ai == al && ai.get_policy().str() == "cyclic", "rebind; all allocators are equal");
        std::vector<int, numaplace::allocator<int>> empty(ai);
        empty.reserve(0);
        empty.shrink_to_fit();
        std::vector<char, numaplace::allocator<char>> one(1, 'x');
        CHECK(one[0] == 'x', "a one-byte vector");
    }
    CHECK(live_arrays() == before, "all buffers freed");
    numaplace::allocator<char> bad(numaplace::policy::bind_all({4095}));
    expect_error([&] { std::vector<char, numaplace::allocator<char>> v(10, 0, bad); }, EINVAL,
                 "allocator with a bad node throws numaplace::error");
    numaplace::allocator<char> any;
    bool threw = false;
    try {
        (void)any.allocate(SIZE_MAX / 2);
    } catch (const std::bad_alloc &) {
        threw = true;
    } catch (const numaplace::error &e) {
        threw = e.code().value() == EOVERFLOW;
    }
    CHECK(threw, "a huge allocate() throws (bad_alloc or EOVERFLOW)");
}

static void test_threads()
{
    int cpu = -1;
    std::thread t = numaplace::pinned_thread("compact", 0, [&cpu](int add) { cpu = numaplace::where_am_i().cpu + add; }, 0);
    t.join();
    CHECK(cpu == npl_pin_cpu(nullptr, "compact", 0), "pinned_thread runs on thread 0's CPU");
    bool ran = false;
    expect_error([&] { numaplace::pinned_thread("no_such_strategy", 0, [&ran] { ran = true; }).join(); },
                 EINVAL, "bad strategy throws");
    CHECK(!ran, "and the function never ran");
    std::vector<int> local = numaplace::local_nodes();
    CHECK(!local.empty() && local[0] == npl_topo_node_id(npl_topo_self(), 0), "local_nodes");
    CHECK(numaplace::node_of(&local) >= 0, "node_of a stack address");
}

int main()
{
    test_policies();
    test_array();
    test_allocator();
    test_threads();
    std::printf("test_cpp: %d passed, %d failed, 0 skipped\n", passed, failed);
    return failed != 0 || passed == 0;
}
