! SPDX-License-Identifier: BSD-3-Clause
!> numaplace - Fortran interface to libnumaplace (ISO_C_BINDING over include/numaplace.h).
!>
!> Arrays of REAL(8), REAL(4), INTEGER (C int), INTEGER(8), COMPLEX(8) and COMPLEX(4) (the C
!> kinds c_double, c_float, c_int, c_int64_t, c_double_complex, c_float_complex) with 1, 2 or 3
!> dimensions are allocated under a policy
!> string (the C syntax: "cyclic", "bind_block", "cyclic_block:4@0,1", ...) and returned as
!> Fortran pointers with lower bounds 1. Storage is Fortran's, column-major: the distribution
!> unit of a(m,n) is a COLUMN a(:,j) (n units of m elements) and of a(m,n,p) a PLANE a(:,:,k);
!> a block policy's "units" are columns/planes, and bind_block gives each thread of a static
!> schedule over the LAST index its own columns/planes.
!>
!> Every routine has an optional ierr: 0 on success, else the errno value (22 EINVAL,
!> 12 ENOMEM, 18 EXDEV, 2 ENOENT...); npl_error_message() gives the library's text. Without
!> ierr a failure stops the program with that text. Node and CPU numbers are OS ids.
module numaplace
    use, intrinsic :: iso_c_binding
    implicit none
    private

    public :: npl_allocate, npl_deallocate, npl_set_policy, npl_set_policy_part, npl_migrate, npl_check
    public :: npl_node_of, npl_pin_thread, npl_pin_omp_threads, npl_where_am_i
    public :: npl_node_count, npl_node_id, npl_error_message, npl_local_nodes

    !> struct npl_shape
    type, bind(c) :: c_shape
        integer(c_size_t) :: elem_size
        integer(c_int) :: ndims
        integer(c_size_t) :: dims(3)
        integer(c_int) :: order
    end type
    !> struct npl_check
    type, bind(c) :: t_check
        integer(c_size_t) :: pages, placed, misplaced, absent
    end type
    !> struct npl_node_info
    type, bind(c) :: t_node_info
        integer(c_int) :: os_id, allowed, ncpus, ncpus_allowed
        integer(c_int64_t) :: memory_bytes, free_bytes
    end type
    integer(c_int), parameter :: NPL_COL_MAJOR = 1

    interface
        function c_policy_parse(out, str) bind(c, name="npl_policy_parse") result(rc)
            import :: c_ptr, c_char, c_int
            type(c_ptr), intent(out) :: out
            character(kind=c_char), intent(in) :: str(*)
            integer(c_int) :: rc
        end function
        subroutine c_policy_free(p) bind(c, name="npl_policy_free")
            import :: c_ptr
            type(c_ptr), value :: p
        end subroutine
        function c_alloc_array(shape, pol, flags) bind(c, name="npl_alloc_array") result(p)
            import :: c_ptr, c_shape, c_int
            type(c_shape), intent(in) :: shape
            type(c_ptr), value :: pol
            integer(c_int), value :: flags
            type(c_ptr) :: p
        end function
        function c_free(p) bind(c, name="npl_free") result(rc)
            import :: c_ptr, c_int
            type(c_ptr), value :: p
            integer(c_int) :: rc
        end function
        function c_apply(p, pol, flags) bind(c, name="npl_apply") result(rc)
            import :: c_ptr, c_int
            type(c_ptr), value :: p, pol
            integer(c_int), value :: flags
            integer(c_int) :: rc
        end function
        function c_apply_part(p, first, n, pol, flags) bind(c, name="npl_apply_part") result(rc)
            import :: c_ptr, c_int, c_size_t
            type(c_ptr), value :: p
            integer(c_size_t), value :: first, n
            type(c_ptr), value :: pol
            integer(c_int), value :: flags
            integer(c_int) :: rc
        end function
        function c_migrate_array(p, node, res) bind(c, name="npl_migrate_array") result(rc)
            import :: c_ptr, c_int
            type(c_ptr), value :: p
            integer(c_int), value :: node
            type(c_ptr), value :: res
            integer(c_int) :: rc
        end function
        function c_check(p, out) bind(c, name="npl_check") result(rc)
            import :: c_ptr, t_check, c_int
            type(c_ptr), value :: p
            type(t_check), intent(out) :: out
            integer(c_int) :: rc
        end function
        function c_query_pages(addr, len, nodes, maxp) bind(c, name="npl_query_pages") result(rc)
            import :: c_ptr, c_size_t, c_int
            type(c_ptr), value :: addr
            integer(c_size_t), value :: len, maxp
            integer(c_int), intent(out) :: nodes(*)
            integer(c_int) :: rc
        end function
        function c_pin_self(strategy, n) bind(c, name="npl_pin_self") result(rc)
            import :: c_char, c_int
            character(kind=c_char), intent(in) :: strategy(*)
            integer(c_int), value :: n
            integer(c_int) :: rc
        end function
        function c_where_am_i(cpu, node) bind(c, name="npl_where_am_i") result(rc)
            import :: c_int
            integer(c_int), intent(out) :: cpu, node
            integer(c_int) :: rc
        end function
        function c_topo_self() bind(c, name="npl_topo_self") result(t)
            import :: c_ptr
            type(c_ptr) :: t
        end function
        function c_node_count(t, all) bind(c, name="npl_topo_node_count") result(n)
            import :: c_ptr, c_int
            type(c_ptr), value :: t
            integer(c_int), value :: all
            integer(c_int) :: n
        end function
        function c_node_id(t, idx) bind(c, name="npl_topo_node_id") result(n)
            import :: c_ptr, c_int
            type(c_ptr), value :: t
            integer(c_int), value :: idx
            integer(c_int) :: n
        end function
        function c_node_info(t, node, out) bind(c, name="npl_topo_node_info") result(rc)
            import :: c_ptr, c_int, t_node_info
            type(c_ptr), value :: t
            integer(c_int), value :: node
            type(t_node_info), intent(out) :: out
            integer(c_int) :: rc
        end function
        function c_last_error() bind(c, name="npl_last_error") result(p)
            import :: c_ptr
            type(c_ptr) :: p
        end function
        function c_errno() bind(c, name="npl_fortran_errno") result(e)
            import :: c_int
            integer(c_int) :: e
        end function
        function c_strlen(s) bind(c, name="strlen") result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: s
            integer(c_size_t) :: n
        end function
    end interface

    include 'numaplace_generics.inc'

contains

    ! ---- helpers ----------------------------------------------------------------------------
    !> The calling thread's last library error as text ("" if none).
    function npl_error_message() result(msg)
        character(len=:), allocatable :: msg
        type(c_ptr) :: p
        character(kind=c_char), pointer :: s(:)
        integer :: i, n
        p = c_last_error()
        n = int(c_strlen(p))
        call c_f_pointer(p, s, [n])
        allocate(character(len=n) :: msg)
        do i = 1, n
            msg(i:i) = s(i)
        end do
    end function

    !> ierr = errno of a failed call (rc < 0; err0: the errno captured right after it, else read
    !> now); without ierr, stop with the message.
    subroutine report(rc, what, ierr, err0)
        integer(c_int), intent(in) :: rc
        character(len=*), intent(in) :: what
        integer, intent(out), optional :: ierr
        integer, intent(in), optional :: err0
        integer :: e
        e = 0
        if (rc < 0) then
            e = c_errno()
            if (present(err0)) e = err0
            if (e == 0) e = 22
        end if
        if (present(ierr)) then
            ierr = e
        else if (e /= 0) then
            write(0, '(a,a,a,a)') 'numaplace: ', what, ': ', npl_error_message()
            error stop 1
        end if
    end subroutine

    function cstr(s) result(c)
        character(len=*), intent(in) :: s
        character(kind=c_char, len=len_trim(s) + 1) :: c
        c = trim(s) // c_null_char
    end function

    !> Allocate `bytes` of elem-size elements with the given Fortran extents under `policy`.
    function alloc_raw(elem, ndims, dims, policy, ierr) result(p)
        integer, intent(in) :: elem, ndims
        integer(c_size_t), intent(in) :: dims(3)
        character(len=*), intent(in) :: policy
        integer, intent(out), optional :: ierr
        type(c_ptr) :: p, pol
        type(c_shape) :: s
        integer(c_int) :: rc
        integer :: e
        p = c_null_ptr
        rc = c_policy_parse(pol, cstr(policy))
        e = c_errno()
        if (rc == 0) then
            s = c_shape(int(elem, c_size_t), int(ndims, c_int), dims, NPL_COL_MAJOR)
            p = c_alloc_array(s, pol, 0_c_int)
            e = c_errno()
            if (.not. c_associated(p)) rc = -1
            call c_policy_free(pol)
        end if
        call report(rc, 'npl_allocate('//trim(policy)//')', ierr, e)
    end function

    subroutine free_raw(p, ierr)
        type(c_ptr), intent(in) :: p
        integer, intent(out), optional :: ierr
        call report(c_free(p), 'npl_deallocate', ierr)
    end subroutine

    subroutine setpol_raw(p, policy, ierr)
        type(c_ptr), intent(in) :: p
        character(len=*), intent(in) :: policy
        integer, intent(out), optional :: ierr
        type(c_ptr) :: pol
        integer(c_int) :: rc
        integer :: e
        rc = c_policy_parse(pol, cstr(policy))
        e = c_errno()
        if (rc == 0) then
            rc = c_apply(p, pol, 0_c_int)
            e = c_errno()
            call c_policy_free(pol)
        end if
        call report(rc, 'npl_set_policy('//trim(policy)//')', ierr, e)
    end subroutine

    subroutine part_raw(p, first, count, policy, ierr)
        type(c_ptr), intent(in) :: p
        integer, intent(in) :: first, count
        character(len=*), intent(in) :: policy
        integer, intent(out), optional :: ierr
        type(c_ptr) :: pol
        integer(c_int) :: rc
        integer :: e
        rc = -1
        e = 22
        if (first >= 1 .and. count >= 1) rc = c_policy_parse(pol, cstr(policy))
        if (first >= 1 .and. count >= 1) e = c_errno()
        if (rc == 0) then
            rc = c_apply_part(p, int(first - 1, c_size_t), int(count, c_size_t), pol, 0_c_int)
            e = c_errno()
            call c_policy_free(pol)
        end if
        call report(rc, 'npl_set_policy_part('//trim(policy)//')', ierr, e)
    end subroutine

    subroutine migr_raw(p, node, ierr)
        type(c_ptr), intent(in) :: p
        integer, intent(in) :: node
        integer, intent(out), optional :: ierr
        call report(c_migrate_array(p, int(node, c_int), c_null_ptr), 'npl_migrate', ierr)
    end subroutine

    subroutine check_raw(p, pages, placed, misplaced, absent, ierr)
        type(c_ptr), intent(in) :: p
        integer(c_size_t), intent(out) :: pages, placed, misplaced, absent
        integer, intent(out), optional :: ierr
        type(t_check) :: c
        call report(c_check(p, c), 'npl_check', ierr)
        pages = c%pages
        placed = c%placed
        misplaced = c%misplaced
        absent = c%absent
    end subroutine

    ! ---- queries and threads ----------------------------------------------------------------
    !> Node OS id of the page holding x (any element: npl_node_of(a(i,j))); negative: not present.
    function npl_node_of(x) result(node)
        type(*), intent(in), target :: x
        integer :: node
        integer(c_int) :: nodes(1)
        if (c_query_pages(c_loc(x), 1_c_size_t, nodes, 1_c_size_t) < 0) then
            node = -c_errno()
        else
            node = nodes(1)
        end if
    end function

    !> Number of usable nodes (allowed, with memory).
    function npl_node_count() result(n)
        integer :: n
        n = c_node_count(c_topo_self(), 0_c_int)
    end function

    !> OS id of the idx-th node (idx from 0, ascending OS ids).
    function npl_node_id(idx) result(id)
        integer, intent(in) :: idx
        integer :: id
        id = c_node_id(c_topo_self(), int(idx, c_int))
    end function

    !> The nodes this process may allocate on and has CPUs on (inside an MPI rank bound with
    !> --bind-to numa: the rank's own nodes); n of them written to nodes.
    subroutine npl_local_nodes(nodes, n)
        integer, intent(out) :: nodes(:)
        integer, intent(out) :: n
        type(t_node_info) :: info
        integer :: i, id
        n = 0
        do i = 0, c_node_count(c_topo_self(), 1_c_int) - 1
            id = c_node_id(c_topo_self(), int(i, c_int))
            if (c_node_info(c_topo_self(), int(id, c_int), info) /= 0) cycle
            if (info%allowed == 0 .or. info%ncpus_allowed == 0 .or. info%memory_bytes == 0) cycle
            n = n + 1
            if (n <= size(nodes)) nodes(n) = id
        end do
    end subroutine

    !> Pin the calling thread as thread n (from 0) of strategy ("compact", "scatter", "0,2-3");
    !> cpu (optional) is the CPU it is bound to.
    subroutine npl_pin_thread(strategy, n, cpu, ierr)
        character(len=*), intent(in) :: strategy
        integer, intent(in) :: n
        integer, intent(out), optional :: cpu, ierr
        integer(c_int) :: rc
        rc = c_pin_self(cstr(strategy), int(n, c_int))
        if (present(cpu)) cpu = rc
        call report(min(rc, 0_c_int), 'npl_pin_thread('//trim(strategy)//')', ierr)
    end subroutine

    !> Pin every thread of an OpenMP team of the current size: thread n to entry n of strategy.
    !> Call it before the data is first touched; later parallel regions of the same size run on
    !> the same pinned threads (the module must be compiled with OpenMP for this to pin a team).
    subroutine npl_pin_omp_threads(strategy, ierr)
        !$ use omp_lib, only: omp_get_thread_num
        character(len=*), intent(in) :: strategy
        integer, intent(out), optional :: ierr
        integer(c_int) :: rc, worst
        integer :: me, e
        worst = 0
        me = 0
        e = 0
        !$omp parallel private(rc, me) reduction(min:worst)
        !$ me = omp_get_thread_num()
        rc = c_pin_self(cstr(strategy), int(me, c_int))
        worst = min(worst, rc)
        if (rc < 0) then
            !$omp critical (npl_pin_err)
            e = c_errno()
            !$omp end critical (npl_pin_err)
        end if
        !$omp end parallel
        call report(min(worst, 0_c_int), 'npl_pin_omp_threads('//trim(strategy)//')', ierr, e)
    end subroutine

    !> The CPU and node the calling thread runs on now.
    subroutine npl_where_am_i(cpu, node, ierr)
        integer, intent(out) :: cpu, node
        integer, intent(out), optional :: ierr
        integer(c_int) :: c, n
        call report(c_where_am_i(c, n), 'npl_where_am_i', ierr)
        cpu = c
        node = n
    end subroutine

    ! ---- per type and rank: thin wrappers over the *_raw helpers above ---------------------
    include 'numaplace_wrappers.inc'
end module numaplace
