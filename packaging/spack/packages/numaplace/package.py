# SPDX-License-Identifier: BSD-3-Clause
# numaplace's Spack recipe (docs/INSTALL.md: the commands, tested with Spack 0.23.0.dev0)
import os

from spack.package import *


class Numaplace(CMakePackage):
    """Places the memory pages and threads of programs on NUMA machines: a C11 library
    (array placement policies, next-touch, migration), the numaplace command (topology,
    characterization report, `numaplace run` with an LD_PRELOAD interposer, access profiles and
    per-array advice), a MAi-compatible library and a Fortran module."""

    # no public home page or repository yet: install from a source tarball (`spack install
    # numaplace@0.3.0` with NUMAPLACE_TARBALL, or a mirror) or from a checkout (`spack
    # dev-build -d SRC numaplace@0.3.0`)
    url = "file:///numaplace-0.3.0.tar.gz"

    license("BSD-3-Clause")

    version("0.3.0")

    variant("fortran", default=True, description="Fortran module (use numaplace) and its library")
    variant("mai", default=True, description="libnumaplace_mai, the MAi-compatible API")
    variant("mpi", default=False, description="MPI examples and tests (with +tests)")
    variant("man", default=True, description="section-3 man pages of the API (doxygen)")
    variant("tests", default=False,
            description="build the test suite, benchmarks and examples (ctest in the build tree)")

    conflicts("~mai", when="+tests", msg="the test suite uses libnumaplace_mai")
    conflicts("+mpi", when="~tests", msg="MPI is used by the examples and tests only")

    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("doxygen", type="build", when="+man")
    depends_on("hwloc@2:")
    depends_on("cjson")
    depends_on("mpi", when="+mpi")

    def url_for_version(self, version):
        # a local tarball (git archive --prefix=numaplace-0.3.0/ HEAD): NUMAPLACE_TARBALL
        tarball = os.environ.get("NUMAPLACE_TARBALL", "/tmp/numaplace-{0}.tar.gz".format(version))
        return "file://" + tarball

    def cmake_args(self):
        tests = self.spec.satisfies("+tests")
        args = [
            self.define("BUILD_TESTING", tests),
            self.define("NPL_BUILD_BENCH", tests),
            self.define("NPL_BUILD_EXAMPLES", tests),
            self.define_from_variant("NPL_BUILD_FORTRAN", "fortran"),
            self.define_from_variant("NPL_BUILD_MAI", "mai"),
            self.define_from_variant("NPL_BUILD_MAN", "man"),
            self.define("NPL_WERROR", False),
        ]
        if self.spec.satisfies("~mpi"):
            args.append(self.define("CMAKE_DISABLE_FIND_PACKAGE_MPI", True))
        return args
