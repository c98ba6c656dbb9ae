! SPDX-License-Identifier: BSD-3-Clause
! test_fortran - the numaplace Fortran module on the host (one node: the guest program
! guest_bind_f checks placement page by page): checksums, 1D/2D/3D pointers in column-major
! order, policy changes, migration, OpenMP pinning, error codes. Prints
! "test_fortran: N passed, M failed, 0 skipped".
program test_fortran
    use numaplace
    use omp_lib
    use, intrinsic :: iso_c_binding, only: c_size_t, c_double, c_int, c_float, c_int64_t, &
        c_double_complex, c_float_complex
    implicit none
    real(c_double), pointer :: a(:), b(:,:), bad(:)
    integer(c_int), pointer :: c(:,:,:)
    real(c_float), pointer :: r4(:,:)
    integer(c_int64_t), pointer :: i8(:)
    complex(c_double_complex), pointer :: z8(:,:,:)
    complex(c_float_complex), pointer :: z4(:)
    integer(c_size_t) :: pages, placed, misplaced, absent
    integer :: i, j, k, ierr, passed, failed, node0, cpu, node, pin_err, local(64), nlocal
    real(8) :: s
    integer(8) :: si
    passed = 0
    failed = 0
    node0 = npl_node_id(0)

    ! 1D: checksum survives a policy change and a migration
    call npl_allocate(a, 1000003, 'cyclic', ierr)
    call ok(ierr == 0 .and. associated(a) .and. size(a) == 1000003 .and. lbound(a, 1) == 1, '1D cyclic')
    call ok(all(a == 0d0), 'zero-filled')
    do i = 1, size(a)
        a(i) = mod(i, 1000)
    end do
    s = sum(a)
    call npl_set_policy(a, 'skew_mapp', ierr)
    call ok(ierr == 0 .and. sum(a) == s, 'set_policy keeps the data')
    call npl_check(a, pages, placed, misplaced, absent, ierr)
    call ok(ierr == 0 .and. pages == 1954 .and. misplaced == 0, 'check')
    call npl_migrate(a, node0, ierr)
    call ok(ierr == 0 .and. sum(a) == s .and. npl_node_of(a(500000)) == node0, 'migrate')
    call npl_deallocate(a, ierr)
    call ok(ierr == 0 .and. .not. associated(a), 'deallocate nullifies')

    ! 2D column-major: columns are the units; OpenMP threads pinned, static schedule over j
    call npl_pin_omp_threads('compact', ierr)
    call ok(ierr == 0, 'pin the OpenMP team')
    pin_err = 0
    !$omp parallel private(cpu, node, ierr) reduction(+:pin_err)
    call npl_where_am_i(cpu, node, ierr)
    if (ierr /= 0 .or. node /= node0) pin_err = pin_err + 1
    !$omp end parallel
    call ok(pin_err == 0, 'every pinned thread knows where it is')
    call npl_allocate(b, 1000, 300, 'bind_block', ierr)
    call ok(ierr == 0 .and. size(b, 1) == 1000 .and. size(b, 2) == 300, '2D bind_block')
    !$omp parallel do schedule(static) private(i)
    do j = 1, 300
        do i = 1, 1000
            b(i, j) = i + 1000 * j
        end do
    end do
    !$omp end parallel do
    call ok(sum(b) == 300d0 * 1000 * 1001 / 2 + 1000d0 * 1000 * 300 * 301 / 2, '2D checksum')
    call ok(loc(b(2, 1)) - loc(b(1, 1)) == 8 .and. loc(b(1, 2)) - loc(b(1, 1)) == 8000, 'column-major')
    call npl_deallocate(b)

    ! 3D integer: planes are the units
    call npl_allocate(c, 50, 40, 30, 'cyclic_block:2', ierr)
    call ok(ierr == 0 .and. size(c) == 60000, '3D integer cyclic_block')
    do k = 1, 30
        c(:, :, k) = k
    end do
    si = sum(int(c, 8))
    call ok(si == 2000_8 * (30 * 31 / 2), '3D checksum')
    call npl_set_policy_part(c, 11, 20, 'cyclic', ierr)
    call ok(ierr == 0 .and. sum(int(c, 8)) == si, '3D set_policy_part keeps the data')
    call npl_set_policy_part(c, 0, 5, 'cyclic', ierr)
    call ok(ierr == 22, 'set_policy_part from plane 0: EINVAL')
    call npl_set_policy_part(c, 25, 10, 'cyclic', ierr)
    call ok(ierr == 22, 'set_policy_part past the last plane: EINVAL')
    call npl_set_policy(c, 'prime_mapp', ierr)
    call ok(ierr == 0 .and. sum(int(c, 8)) == si .and. c(50, 40, 30) == 30, '3D set_policy')
    call npl_deallocate(c, ierr)

    ! the other kinds: element sizes, column-major strides, data kept through policy changes
    call npl_allocate(r4, 1000, 300, 'cyclic', ierr)
    call ok(ierr == 0 .and. loc(r4(1, 2)) - loc(r4(1, 1)) == 4000, 'REAL(4) 2D: 4-byte elements')
    r4 = 1.5
    call npl_set_policy_part(r4, 101, 100, 'skew_mapp', ierr)
    call ok(ierr == 0 .and. sum(real(r4, 8)) == 1.5d0 * 300000, 'REAL(4) set_policy_part keeps the data')
    call npl_check(r4, pages, placed, misplaced, absent, ierr)
    call ok(ierr == 0 .and. pages == 293 .and. misplaced == 0, 'REAL(4) check: 293 pages')
    call npl_deallocate(r4, ierr)
    call ok(ierr == 0 .and. .not. associated(r4), 'REAL(4) deallocate')
    call npl_allocate(i8, 600000, 'cyclic_block:3', ierr)
    call ok(ierr == 0 .and. loc(i8(2)) - loc(i8(1)) == 8, 'INTEGER(8) 1D: 8-byte elements')
    do i = 1, size(i8)
        i8(i) = int(i, 8) * 4000000000_8
    end do
    call npl_migrate(i8, node0, ierr)
    call ok(ierr == 0 .and. i8(600000) == 600000_8 * 4000000000_8 .and. &
            npl_node_of(i8(300000)) == node0, 'INTEGER(8) migrate keeps 64-bit values')
    call npl_deallocate(i8)
    call npl_allocate(z8, 64, 32, 16, 'bind_block', ierr)
    call ok(ierr == 0 .and. loc(z8(1, 2, 1)) - loc(z8(1, 1, 1)) == 64 * 16, 'COMPLEX(8) 3D: 16-byte elements')
    z8 = (1d0, -2d0)
    call npl_set_policy(z8, 'cyclic', ierr)
    call ok(ierr == 0 .and. sum(z8) == cmplx(32768d0, -65536d0, kind=c_double_complex), &
            'COMPLEX(8) set_policy keeps the data')
    call npl_deallocate(z8)
    call npl_allocate(z4, 5000, 'random', ierr)
    call ok(ierr == 0 .and. loc(z4(2)) - loc(z4(1)) == 8 .and. size(z4) == 5000, 'COMPLEX(4) 1D: 8-byte elements')
    call npl_deallocate(z4)

    call npl_local_nodes(local, nlocal)
    call ok(nlocal == npl_node_count() .and. local(1) == node0, 'npl_local_nodes: every node has CPUs here')

    ! errors: ierr is the errno, the pointer stays null, the message says why
    call npl_allocate(bad, 10, 'no_such_policy', ierr)
    call ok(ierr == 22 .and. .not. associated(bad) .and. len(npl_error_message()) > 0, 'bad policy: EINVAL')
    call npl_allocate(bad, 10, 'bind_all:4095', ierr)
    call ok(ierr == 22 .and. .not. associated(bad), 'node that does not exist: EINVAL')
    call npl_allocate(bad, 0, 'cyclic', ierr)
    call ok(ierr == 22 .and. .not. associated(bad), '0 elements: EINVAL')
    call npl_pin_thread('no_such_strategy', 0, cpu, ierr)
    call ok(ierr == 22, 'bad pin strategy: EINVAL')
    call npl_allocate(a, 100, 'cyclic')
    call npl_migrate(a, 4095, ierr)
    call ok(ierr == 22, 'migrate to a node that does not exist: EINVAL')
    call npl_deallocate(a)

    print '(a,i0,a,i0,a)', 'test_fortran: ', passed, ' passed, ', failed, ' failed, 0 skipped'
    if (failed /= 0 .or. passed == 0) error stop 1
contains
    subroutine ok(cond, what)
        logical, intent(in) :: cond
        character(len=*), intent(in) :: what
        if (cond) then
            passed = passed + 1
        else
            failed = failed + 1
            print '(a,a,a,i0)', 'FAIL: ', what, ' ierr=', ierr
        end if
    end subroutine
end program
