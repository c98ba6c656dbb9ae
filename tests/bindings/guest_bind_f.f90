! SPDX-License-Identifier: BSD-3-Clause
! guest_bind_f --nodes N --cpus-per-node K: the numaplace Fortran module in the multi-node guest,
! page by page against independent formulas: columns of a 2D REAL(8) array under cyclic_block,
! bind_block columns on the node of the OpenMP thread that owns them (static schedule), planes
! of a 3D INTEGER array under cyclic, set_policy and migrate. Prints
! "guest_bind_f: N passed, M failed, 0 skipped".
program guest_bind_f
    use numaplace
    use omp_lib
    use, intrinsic :: iso_c_binding, only: c_double, c_int
    implicit none
    real(c_double), pointer :: a(:,:), v(:)
    integer(c_int), pointer :: c(:,:,:)
    integer, allocatable :: owner_node(:)
    integer :: n, i, j, k, ierr, passed, failed, bad, cpu, node, t, ncols, local(64), nlocal
    character(len=16) :: arg
    passed = 0
    failed = 0
    n = 0
    do i = 1, command_argument_count() - 1
        call get_command_argument(i, arg)
        if (arg == '--nodes') then
            call get_command_argument(i + 1, arg)
            read (arg, *) n
        end if
    end do
    if (n < 1 .or. npl_node_count() /= n) then
        print '(a)', 'guest_bind_f: --nodes does not match this machine'
        print '(a)', 'guest_bind_f: 0 passed, 1 failed, 0 skipped'
        error stop 1
    end if

    ! one column = one page (512 REAL(8)); blocks of 2 columns cycle over the nodes
    call npl_allocate(a, 512, 8 * n, 'cyclic_block:units=2', ierr)
    call ok(ierr == 0, 'allocate 2D cyclic_block')
    bad = 0
    do j = 1, 8 * n
        if (npl_node_of(a(1, j)) /= npl_node_id(mod((j - 1) / 2, n))) bad = bad + 1
    end do
    call ok(bad == 0, '2D cyclic_block: column j on node ((j-1)/2) mod N')
    a = 1d0
    call npl_set_policy(a, 'cyclic', ierr)
    bad = 0
    do j = 1, 8 * n
        if (npl_node_of(a(512, j)) /= npl_node_id(mod(j - 1, n))) bad = bad + 1
    end do
    call ok(ierr == 0 .and. bad == 0 .and. sum(a) == 512d0 * 8 * n, 'set_policy(cyclic): column j on node j-1 mod N')
    call npl_set_policy_part(a, 4 * n + 1, 4 * n, 'bind_all:'//trim(itoa(npl_node_id(0))), ierr)
    bad = 0
    do j = 1, 8 * n
        if (j <= 4 * n .and. npl_node_of(a(1, j)) /= npl_node_id(mod(j - 1, n))) bad = bad + 1
        if (j > 4 * n .and. npl_node_of(a(1, j)) /= npl_node_id(0)) bad = bad + 1
    end do
    call ok(ierr == 0 .and. bad == 0 .and. sum(a) == 512d0 * 8 * n, 'set_policy_part: last half of the columns on the first node')
    call npl_migrate(a, npl_node_id(n - 1), ierr)
    bad = 0
    do j = 1, 8 * n
        if (npl_node_of(a(256, j)) /= npl_node_id(n - 1)) bad = bad + 1
    end do
    call ok(ierr == 0 .and. bad == 0, 'migrate: every column on the last node')
    call npl_deallocate(a)

    ! bind_block: threads pinned scatter; column j on the node of the thread that owns it
    t = omp_get_max_threads()
    ncols = 4 * t
    allocate(owner_node(ncols))
    call npl_pin_omp_threads('scatter', ierr)
    call ok(ierr == 0, 'pin the OpenMP team (scatter)')
    write (arg, '(i0)') t
    call npl_allocate(a, 512, ncols, 'bind_block:threads='//trim(arg)//',pin=scatter', ierr)
    call ok(ierr == 0, 'allocate 2D bind_block')
    !$omp parallel do schedule(static) private(cpu, node, ierr)
    do j = 1, ncols
        call npl_where_am_i(cpu, node, ierr)
        owner_node(j) = node
        a(:, j) = j
    end do
    !$omp end parallel do
    bad = 0
    do j = 1, ncols
        if (npl_node_of(a(1, j)) /= owner_node(j)) bad = bad + 1
    end do
    call ok(bad == 0, 'bind_block: each column on the node of the thread that wrote it')
    call npl_deallocate(a)

    ! 3D INTEGER: one plane = one page (1024 ints)
    call npl_allocate(c, 32, 32, 3 * n, 'cyclic', ierr)
    c = 7
    bad = 0
    do k = 1, 3 * n
        if (npl_node_of(c(1, 1, k)) /= npl_node_id(mod(k - 1, n))) bad = bad + 1
    end do
    call ok(ierr == 0 .and. bad == 0 .and. sum(c) == 7 * 1024 * 3 * n, '3D cyclic: plane k on node k-1 mod N')
    call npl_deallocate(c)

    ! 1D skew_mapp: page i (from 0) on (i + i/N + 1) mod N
    call npl_allocate(v, 512 * 16 * n, 'skew_mapp', ierr)
    bad = 0
    do i = 0, 16 * n - 1
        if (npl_node_of(v(i * 512 + 1)) /= npl_node_id(mod(i + i / n + 1, n))) bad = bad + 1
    end do
    call ok(ierr == 0 .and. bad == 0, '1D skew_mapp')
    call npl_deallocate(v)

    call npl_local_nodes(local, nlocal)
    call ok(nlocal == n .and. local(1) == npl_node_id(0) .and. local(n) == npl_node_id(n - 1), 'npl_local_nodes')

    print '(a,i0,a,i0,a)', 'guest_bind_f: ', passed, ' passed, ', failed, ' failed, 0 skipped'
    if (failed /= 0 .or. passed == 0) error stop 1
contains
    function itoa(i) result(txt)
        integer, intent(in) :: i
        character(len=12) :: txt
        write (txt, '(i0)') i
    end function
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
