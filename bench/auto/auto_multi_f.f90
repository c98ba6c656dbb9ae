! SPDX-License-Identifier: BSD-3-Clause
! auto_multi_f - the locality harness's Fortran program (bench/auto/locality.h, counted by
! locality.c): two allocatable arrays, one initialised by each thread's static share and one by
! the main thread, both updated by static shares. Every access of the compute phase is counted
! (AUTO_PROFILE=FILE: and written as an exact profile, the initialisation as region 0).
!   auto_multi_f [MIB [ITERS]]     MIB per array (default 4), ITERS sweeps (default 3)
program auto_multi_f
  use iso_c_binding
  use omp_lib
  implicit none
  interface
    integer(c_int) function auto_f_track(base, bytes, name, pattern) bind(C)
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: base
      integer(c_size_t), value :: bytes
      character(kind=c_char) :: name(*), pattern(*)
    end function
    subroutine auto_f_locate() bind(C)
    end subroutine
    subroutine auto_f_recheck() bind(C)
    end subroutine
    integer(c_int) function auto_f_node() bind(C)
      import :: c_int
    end function
    integer(c_int) function auto_f_rw(idx, addr, me, reads, writes) bind(C)
      import :: c_int, c_ptr
      integer(c_int), value :: idx, me, reads, writes
      type(c_ptr), value :: addr
    end function
    subroutine auto_f_region(r) bind(C)
      import :: c_int
      integer(c_int), value :: r
    end subroutine
    subroutine auto_f_init_touch(idx, addr) bind(C)
      import :: c_int, c_ptr
      integer(c_int), value :: idx
      type(c_ptr), value :: addr
    end subroutine
    subroutine auto_f_add(idx, loc, acc) bind(C)
      import :: c_int, c_long_long
      integer(c_int), value :: idx
      integer(c_long_long), value :: loc, acc
    end subroutine
    subroutine auto_f_report(prog, iters, checksum) bind(C)
      import :: c_char, c_int, c_double
      character(kind=c_char) :: prog(*)
      integer(c_int), value :: iters
      real(c_double), value :: checksum
    end subroutine
  end interface
  integer(c_size_t) :: n, i
  integer(c_int) :: ib, is, me, iters
  integer :: it, mib
  integer(c_long_long) :: lb, ls, cnt
  real(8), allocatable, target :: blk(:), sn(:)
  character(len=32) :: arg

  mib = 4
  iters = 3
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) mib
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) iters
  end if
  n = int(mib, c_size_t) * 131072_c_size_t
  allocate (blk(n), sn(n))
  ib = auto_f_track(c_loc(blk(1)), n * 8_c_size_t, "blk"//c_null_char, "blocked"//c_null_char)
  is = auto_f_track(c_loc(sn(1)), n * 8_c_size_t, "sin"//c_null_char, &
                    "serial init, blocked compute"//c_null_char)
  call auto_f_region(0)
  !$omp parallel private(me)
  me = auto_f_node()
  !$omp do schedule(static)
  do i = 1, n
    blk(i) = 1.0d0
    call auto_f_init_touch(ib, c_loc(blk(i)))
  end do
  !$omp end do
  !$omp end parallel
  do i = 1, n
    sn(i) = 3.0d0
    call auto_f_init_touch(is, c_loc(sn(i)))
  end do
  call auto_f_locate()
  do it = 1, iters
    call auto_f_region(1)
    !$omp parallel private(me, lb, ls, cnt)
    me = auto_f_node()
    lb = 0
    ls = 0
    cnt = 0
    !$omp do schedule(static)
    do i = 1, n
      blk(i) = blk(i) * 0.5d0 + 1.0d0
      sn(i) = sn(i) * 0.5d0 + 2.0d0
      lb = lb + auto_f_rw(ib, c_loc(blk(i)), me, 1, 1)
      ls = ls + auto_f_rw(is, c_loc(sn(i)), me, 1, 1)
      cnt = cnt + 2
    end do
    !$omp end do
    call auto_f_add(ib, lb, cnt)
    call auto_f_add(is, ls, cnt)
    !$omp end parallel
  end do
  call auto_f_recheck()
  call auto_f_report("auto_multi_f"//c_null_char, iters, sum(blk) + sum(sn))
end program auto_multi_f
