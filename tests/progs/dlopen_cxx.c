/* SPDX-License-Identifier: BSD-3-Clause */
/* dlopen_cxx - a C program that loads a C++ plugin with dlopen(RTLD_LOCAL) and calls it, as an
 * interpreter loads an extension module: `numaplace run` must not change its output.
 *   dlopen_cxx PLUGIN.so */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    long (*work)(size_t) = h ? (long (*)(size_t))dlsym(h, "plugin_work") : NULL;
    if (!work) {
        printf("cannot load %s: %s\n", argc > 1 ? argv[1] : "(none)", dlerror());
        return 2;
    }
    printf("plugin %ld\n", work((size_t)1 << 20)); /* 8 MiB blocks: placed */
    return 0;
}
