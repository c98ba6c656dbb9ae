! SPDX-License-Identifier: BSD-3-Clause
! omp_alloc_f.f90 - OpenMP allocators with omp_atk_partition from Fortran (gfortran, libgomp):
! omp_init_allocator (libgomp's omp_init_allocator_, by reference) and omp_alloc / omp_free
! (bind(c)), run under `numaplace run`. Each array of 4 MiB + 100 bytes is counted page by page
! (omp_alloc_fpages.c, move_pages): blocked, interleaved, and nearest from the main thread. One
! line per case as tests/progs/omp_alloc.c prints them; exit status 1 when a page is elsewhere.
program omp_alloc_f
    use omp_lib
    use iso_c_binding
    implicit none
    interface
        function pages_right(p, bytes, kind) bind(c, name="omp_alloc_pages_right") result(r)
            import :: c_ptr, c_size_t, c_int
            type(c_ptr), value :: p
            integer(c_size_t), value :: bytes
            integer(c_int), value :: kind
            integer(c_int) :: r
        end function
    end interface
    integer(c_size_t), parameter :: bytes = 4_c_size_t * 1048576_c_size_t + 100_c_size_t
    integer :: wrong
    wrong = 0
    call one(omp_atv_blocked, 1, "blocked")
    call one(omp_atv_interleaved, 2, "interleaved")
    call one(omp_atv_nearest, 3, "nearest")
    print '(a, i0, a)', "omp_alloc_f: 3 cases, ", wrong, " wrong"
    if (wrong /= 0) stop 1
contains
    subroutine one(partition, kind, name)
        integer(omp_alloctrait_val_kind), intent(in) :: partition
        integer, intent(in) :: kind
        character(*), intent(in) :: name
        type(omp_alloctrait) :: traits(1)
        integer(omp_allocator_handle_kind) :: al
        type(c_ptr) :: p
        real(c_double), pointer :: a(:)
        integer(c_size_t) :: n, i
        logical :: ok
        traits(1) = omp_alloctrait(omp_atk_partition, partition)
        al = omp_init_allocator(omp_default_mem_space, 1, traits)
        p = omp_alloc(bytes, al)
        ok = c_associated(p)
        if (ok) then
            n = (bytes - 4) / 8
            call c_f_pointer(p, a, [n])
            do i = 1, n
                a(i) = real(i, c_double)
            end do
            ok = nint(a(n)) == n
            if (pages_right(p, bytes, int(kind, c_int)) /= 1) ok = .false.
            call omp_free(p, al)
        end if
        call omp_destroy_allocator(al)
        if (.not. ok) wrong = wrong + 1
        print '(3a, l1)', "omp_alloc_f ", name, ": every page where the trait says: ", ok
    end subroutine
end program
