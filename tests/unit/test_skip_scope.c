/* SPDX-License-Identifier: BSD-3-Clause */
/* test_skip_scope - the expected skips are per program: a key listed with in=PROG,... lets only
 * those programs skip it (tests/unit/skip.h's skip_listed; tests/unit/test_skip_scope.sh checks
 * tests/check.sh's the same way), read from the suite's own tests/expected-skips.txt. */
#include "check.h"

static int listed(const char *key, const char *file)
{
    char prog[256], why[1024];
    skip_program(file, prog, sizeof prog);
    return skip_listed(key, prog, why, sizeof why);
}

int main(void)
{
    CHECK(listed("tsan-exhaustion", "/src/tests/guest/guest_soak.c") &&
              listed("tsan-exhaustion", "tests/guest/guest_placement.c"),
          "tsan-exhaustion: expected in guest_soak and guest_placement");
    CHECK(!listed("tsan-exhaustion", "tests/guest/guest_mai.c") &&
              !listed("tsan-exhaustion", "tests/guest/guest_soak_extra.c"),
          "tsan-exhaustion: not in guest_mai, nor in a program whose name begins with guest_soak");
    CHECK(listed("sanitizer-interceptors", "tests/host/test_site.c") &&
              !listed("sanitizer-interceptors", "tests/host/test_place.c"),
          "sanitizer-interceptors: test_site only");
    CHECK(listed("sanitizer-no-interposer", "tests/cli/test_run.sh") &&
              listed("sanitizer-no-interposer", "tests/skip_test.sh") &&
              !listed("sanitizer-no-interposer", "tests/host/test_place.c"),
          "sanitizer-no-interposer: the interposer's shell tests and skip_test, not test_place");
    CHECK(!listed("nope", "tests/cli/test_run.sh") && !listed("in=test_run", "tests/cli/test_run.sh"),
          "an unlisted key, or the in= field taken as a key: not listed");
    char prog[64];
    skip_program("a/b/guest_bind_mpi.cpp", prog, sizeof prog);
    CHECK(!strcmp(prog, "guest_bind_mpi"), "a program's name: its file's base name (%s)", prog);
    return check_summary("test_skip_scope");
}
