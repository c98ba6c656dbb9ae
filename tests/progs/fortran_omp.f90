! SPDX-License-Identifier: BSD-3-Clause
! fortran_omp - Fortran ALLOCATE with OpenMP loops; prints a sum numaplace run must not change
! (tests/cli/test_run_progs.sh).
program fo
  use omp_lib
  implicit none
  real(8), allocatable :: a(:), b(:)
  integer :: i, n
  real(8) :: s = 0
  n = 3000000
  allocate(a(n), b(n))
  !$omp parallel do
  do i = 1, n
    a(i) = mod(i, 1000)
    b(i) = 0
  end do
  !$omp parallel do reduction(+:s)
  do i = 1, n
    s = s + a(i) * 2
  end do
  deallocate(b)
  print '(a,f20.1)', 'sum ', s
  deallocate(a)
end program
