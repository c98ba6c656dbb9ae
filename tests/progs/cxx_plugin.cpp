/* SPDX-License-Identifier: BSD-3-Clause */
/* cxx_plugin - a C++ plugin that a C program loads with dlopen(RTLD_LOCAL), as Python loads its
 * extension modules: its operator new binds to the interposer's, while its C++ runtime is not in
 * the global scope (tests/progs/dlopen_cxx.c). */
#include <cstddef>
#include <cstring>
#include <new>
#include <vector>
extern "C" long plugin_work(size_t n)
{
    std::vector<double> v(n, 1.5);              /* operator new */
    double *a = new (std::align_val_t(4096)) double[n]; /* aligned new */
    for (size_t i = 0; i < n; i++)
        a[i] = v[i] * 2;
    long s = (long)a[n / 2] + (long)v.size();
    ::operator delete[](a, std::align_val_t(4096));
    try {
        (void)::operator new((size_t)1 << 62); /* throws through the interposer */
    } catch (const std::bad_alloc &) {
        s += 1;
    }
    return s;
}
