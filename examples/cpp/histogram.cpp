/* SPDX-License-Identifier: BSD-3-Clause */
// histogram - C++ threads over numaplace arrays: a std::vector placed by numaplace::allocator
// (bind_block for 4 threads: each thread's quarter on its node), 4 std::threads pinned compact
// with numaplace::pinned_thread, each counting its quarter; a numaplace::array 2D view
// re-placed after a phase change. Exits 1 if a count is wrong.
//
// Build: c++ -std=c++17 histogram.cpp -lnumaplace -lpthread
#include <numaplace.hpp>

#include <cstdio>
#include <thread>
#include <vector>

int main()
{
    const int threads = 4;
    const std::size_t n = std::size_t(1) << 22;
    try {
        numaplace::allocator<unsigned> alloc(numaplace::policy::bind_block(threads, "compact"));
        std::vector<unsigned, numaplace::allocator<unsigned>> data(alloc);
        data.resize(n); // placed when allocated: block k on the node of thread k
        std::vector<std::size_t> bins(threads * 16, 0);
        std::vector<std::thread> team;
        for (int t = 0; t < threads; t++)
            team.push_back(numaplace::pinned_thread("compact", t, [&, t] {
                std::size_t lo = n / threads * t, hi = t + 1 == threads ? n : lo + n / threads;
                for (std::size_t i = lo; i < hi; i++)
                    data[i] = static_cast<unsigned>(i * 2654435761u) >> 28;
                for (std::size_t i = lo; i < hi; i++)
                    bins[t * 16 + data[i]]++;
            }));
        for (auto &t : team)
            t.join();
        std::size_t total = 0;
        for (std::size_t b : bins)
            total += b;

        // a 2D view: rows computed by one phase, then read by all threads: spread it over the nodes
        numaplace::array<double> grid(512, 1024, numaplace::policy::bind_all());
        for (std::size_t i = 0; i < grid.rows(); i++)
            for (std::size_t j = 0; j < grid.cols(); j++)
                grid(i, j) = static_cast<double>(i + j);
        grid.set_policy(numaplace::policy::cyclic());
        numaplace::check_result c = grid.check();
        std::printf("histogram: %zu values in %d pinned threads; grid %s: %zu of %zu pages placed\n",
                    total, threads, grid.policy_string().c_str(), c.placed, c.pages);
        return total != n || grid(511, 1023) != 1534.0 || c.misplaced != 0;
    } catch (const numaplace::error &e) {
        std::fprintf(stderr, "histogram: %s\n", e.what());
        return 2;
    }
}
