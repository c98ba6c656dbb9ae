/* SPDX-License-Identifier: BSD-3-Clause */
/* cxx_styles - C++ the usual way: std::vector growth by push_back, new[] (also over-aligned),
 * std::thread workers reading shared data, unique_ptr<int[]>, shrink_to_fit. Prints a sum that
 * numaplace run must not change (tests/cli/test_run_progs.sh). */
#include <cstdio>
#include <cstdint>
#include <thread>
#include <vector>
#include <memory>
#include <new>
struct alignas(128) Big { double v[16]; };
int main() {
    std::vector<double> v; for (int i = 0; i < 3000000; i++) v.push_back(i * 0.5);
    double *a = new double[1 << 20]; for (int i = 0; i < 1 << 20; i++) a[i] = i;
    Big *bb = new Big[20000]; for (int i = 0; i < 20000; i++) bb[i].v[3] = i;
    std::vector<std::thread> th; std::vector<double> part(4);
    for (int t = 0; t < 4; t++) th.emplace_back([&, t] { double s = 0; for (size_t i = t; i < v.size(); i += 4) s += v[i] + a[i % (1 << 20)]; part[t] = s; });
    for (auto &t : th) t.join();
    double s = part[0] + part[1] + part[2] + part[3] + bb[1234].v[3];
    std::unique_ptr<int[]> u(new int[500000]()); s += u[1000];
    v.resize(10); v.shrink_to_fit();
    delete[] a; delete[] bb;
    std::printf("sum %.1f size %zu\n", s, v.size());
}
