#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# census.sh TABLE LIMITS - every function libc.so.6 exports whose name says it hands the kernel
# (or libc, from inside) a buffer of the caller's is either wrapped by the interposer (a line of
# preload/io_calls.def) or a limit with its reason (tests/contract/limits.txt). The patterns
# below are the classes of such calls; a new glibc export of a class fails until it is one or
# the other. Also checked: the census catches a wrapper taken out of the table.
set -u
TABLE=$1 LIMITS=$2
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh"
LIBC=$(${CC:-cc} -print-file-name=libc.so.6 2>/dev/null)
[ -f "$LIBC" ] || LIBC=$(ldconfig -p 2>/dev/null | awk '/libc\.so\.6 / {print $NF; exit}')
if [ ! -f "$LIBC" ] || ! command -v nm >/dev/null; then
    skip census "the census: no libc.so.6 or no nm"; summary census; exit
fi
T=$(mktemp -d /tmp/npl_census.XXXXXX)
trap 'rm -rf "$T"' EXIT
# the classes: read/write and their vector, 64, v2 and fortified forms; sockets; stdio's direct
# copies; the stat family; directories; names the kernel writes; xattrs; waiting for events;
# pipes and copies; random bytes; message queues; small results (descriptors, statuses, times,
# limits, masks); asynchronous I/O; calls whose argument layout the caller decides
cat >"$T/patterns" <<'P'
^(__)?(p)?(read|write)(v|v2|64|v64|v64v2)?(_chk)?$
^(__)?(recv|send)(from|to|msg|mmsg)?(_chk)?$
^(accept4?|getsockname|getpeername|[gs]etsockopt|bind|connect)$
^(_IO_|__)?f(read|write)(_unlocked)?(_chk)?$
^(__)?(f|l)?(x)?stat(at|x)?(64)?$
^(f)?stat(v)?fs(64)?$
^(getdents|getdirentries)(64)?$
^(__)?(readlink(at)?|getcwd|getwd|ttyname_r|realpath)(_chk)?$
^(l|f)?(get|set|list)xattr$
^(__)?p?poll(_chk)?$
^(__)?p?select$
^epoll_(wait|pwait2?|ctl)$
^(vmsplice|splice|tee|sendfile(64)?|copy_file_range)$
^process_vm_(read|write)v$
^(getrandom|getentropy|arc4random_buf)$
^(mq_(timed)?(send|receive)|msg(rcv|snd)|eventfd_(read|write))$
^(pipe2?|socketpair|wait[34]?|waitpid|waitid|getrusage|[gs]etrlimit(64)?|prlimit(64)?|sysinfo|times|uname)$
^(__)?getgroups(_chk)?$
^(sched_[gs]etaffinity|sched_getparam|(clock_)?nanosleep|[gs]etitimer|timer(fd)?_[gs]ettime)$
^(sigtimedwait|sigwaitinfo|signalfd|mincore|futimens|utimensat)$
^(aio_(read|write|suspend)|lio_listio)(64)?$
^(io_uring_.*|io_submit|io_getevents)$
^(syscall|ioctl|fcntl(64)?|prctl|ptrace|semctl|shmctl|msgctl|semop|semtimedop)$
P
nm -D --defined-only "$LIBC" | awk '$3 !~ /@GLIBC_PRIVATE/ {sub(/@.*/, "", $3); print $3}' |
    sort -u | grep -E -f "$T/patterns" >"$T/found"
names() { # the wrapped names of a table
    sed -n 's/^IO(\([^,]*\), *\([A-Za-z0-9_]*\),.*/\2/p; s/^IO_\(VOID\|HAND\)(\([A-Za-z0-9_]*\).*/\2/p' "$1" | sort -u
}
names "$TABLE" >"$T/wrapped"
awk '!/^#/ && NF {print $1}' "$LIMITS" | sort -u >"$T/limits"
# a limit has a reason; a name is not both wrapped and a limit
check "every limit has a reason" "" "$(awk '!/^#/ && NF == 1 {print $1}' "$LIMITS")"
check "no name both wrapped and a limit" "" "$(comm -12 "$T/wrapped" "$T/limits" | tr '\n' ' ')"
sort -u "$T/wrapped" "$T/limits" >"$T/known"
missing=$(comm -23 "$T/found" "$T/known" | tr '\n' ' ')
check "glibc's buffer-taking exports are wrapped or limits" "" "$missing"
# the census can fail: the table without read and statx leaves those two out
grep -v -E '^IO\([^,]*, *(read|statx),' "$TABLE" >"$T/cut.def"
names "$T/cut.def" | sort -u - "$T/limits" >"$T/cut.known"
check "the census catches a wrapper taken out" "read statx" "$(comm -23 "$T/found" "$T/cut.known" | tr '\n' ' ' | sed 's/ $//')"
echo "census: $(wc -l <"$T/found") found in $(basename "$LIBC"), $(comm -12 "$T/found" "$T/wrapped" | wc -l) wrapped, $(comm -12 "$T/found" "$T/limits" | wc -l) limits"
summary census
