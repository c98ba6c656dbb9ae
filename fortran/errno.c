/* SPDX-License-Identifier: BSD-3-Clause */
/* errno for the Fortran module (fortran/numaplace.f90): Fortran cannot read C's errno. */
#include <errno.h>

int npl_fortran_errno(void);

int npl_fortran_errno(void)
{
    return errno;
}
