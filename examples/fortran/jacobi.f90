! SPDX-License-Identifier: BSD-3-Clause
! jacobi - a Jacobi sweep on a 2D grid in Fortran: u and unew allocated with bind_block over
! their columns (the distribution unit of a column-major array), OpenMP threads pinned compact,
! loops over columns with a static schedule, so each thread's columns stay on its node.
! Exits 1 if the result is wrong.
!
! Build: gfortran -fopenmp -I<dir of numaplace.mod> jacobi.f90 -lnumaplace_fortran -lnumaplace
program jacobi
    use numaplace
    use, intrinsic :: iso_c_binding, only: c_double, c_size_t
    implicit none
    integer, parameter :: m = 512, n = 512, sweeps = 20
    real(c_double), pointer :: u(:,:), unew(:,:)
    integer(c_size_t) :: pages, placed, misplaced, absent
    integer :: i, j, it
    call npl_pin_omp_threads('compact')
    call npl_allocate(u, m, n, 'bind_block:pin=compact')
    call npl_allocate(unew, m, n, 'bind_block:pin=compact')
    !$omp parallel do schedule(static) private(i)
    do j = 1, n
        do i = 1, m
            u(i, j) = 0d0
            unew(i, j) = 0d0
        end do
    end do
    !$omp end parallel do
    u(:, 1) = 1d0 ! boundary
    unew(:, 1) = 1d0
    do it = 1, sweeps
        !$omp parallel do schedule(static) private(i)
        do j = 2, n - 1
            do i = 2, m - 1
                unew(i, j) = 0.25d0 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
            end do
        end do
        !$omp end parallel do
        u(2:m-1, 2:n-1) = unew(2:m-1, 2:n-1)
    end do
    call npl_check(u, pages, placed, misplaced, absent)
    print '(a,i0,a,i0,a,f0.6)', 'jacobi: ', placed, ' of ', pages, ' pages of u placed; u(256,2) = ', u(256, 2)
    ! heat spreads one column per sweep: after 20 sweeps column 22 is still cold
    if (misplaced /= 0 .or. u(256, 2) <= 0d0 .or. u(256, 22) /= 0d0 .or. u(256, 2) >= 1d0) error stop 1
    call npl_deallocate(u)
    call npl_deallocate(unew)
end program
