/* SPDX-License-Identifier: BSD-3-Clause */
/* common.h - what every part of the numaplace command shares: exit codes, error lines, files it
 * ships, the topology to work on. Calls the public API and the library's few
 * exported internals (base/base.h; never a subcommand). */
#ifndef NPL_CLI_COMMON_H
#define NPL_CLI_COMMON_H
#include "base/base.h" /* npl__now, npl__utf8_len: the library's (NUMAPLACE_PRIVATE) */

#include <numaplace.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes (documented in docs/numaplace.1): */
#define EXIT_USAGE 2   /* bad command line or bad policy string */
#define EXIT_FAILED 1  /* the operation failed (message on stderr) */
/* run and profile, which run a program and exit with its status, fail on their own with 125, as
 * env(1), timeout(1) and nice(1) do (126: the program cannot be executed, 127: not found), so
 * that numaplace's own failure is never taken for the program's 1 or 2 */
#define EXIT_OWN 125
static inline int cli_own_status(int rc) { return rc == EXIT_USAGE || rc == EXIT_FAILED ? EXIT_OWN : rc; }

/* "numaplace: <what>: <library message>" on stderr; returns EXIT_FAILED. */
int cli_fail(const char *what);
/* A file numaplace ships: $env_name if set, else the first readable of rel[0..n-1], each a path
 * relative to the directory of this executable; a bare file name is also looked for in
 * ../lib/numaplace/ and ../LIBDIR/numaplace/ (installed tree). 0 and the path in out, or -1 and
 * in out "NAME (looked for PATH, PATH, ...; ENV unset)". */
int cli_find_file(const char *env_name, const char *const *rel, int n, char *out, size_t size);
/* getopt_long's '?' or ':' for subcommand cmd: prints what was wrong; returns EXIT_USAGE.
 * Every subcommand's optstring starts with ':' (missing values reported as ':'). */
int cli_bad_option(const char *cmd, int c, char **argv);
/* Load a synthetic topology when desc != NULL, else this machine's. */
int cli_topo(npl_topo **out, const char *synthetic, const npl_topo **use);
/* Every output file of the command (a profile, an advice file, a page, a config) goes to a
 * regular file, or to a character device (/dev/null, a terminal) written in place: never a FIFO,
 * socket, block device or directory, never through a symbolic link to a file, never by renaming
 * over a device. cli_out_check says before any work which: 0 a regular file or none yet (its
 * directory exists and is writable), 1 a character device, -1 after "numaplace CMD: cannot write
 * PATH: why". */
int cli_out_check(const char *cmd, const char *path);
/* text written to path as cli_out_check allows: a regular file through a temporary file beside it
 * renamed over it, a character device in place. 0, or EXIT_FAILED after one line. */
int cli_write_out(const char *cmd, const char *path, const char *text, size_t len);
/* An output file of subcommand cmd, as cli_out_check allows (a regular file created or
 * truncated). The stream, or NULL after "numaplace CMD: cannot write PATH: why". */
FILE *cli_open_out(const char *cmd, const char *path);
/* Close what cli_open_out opened: 0, or EXIT_FAILED after "numaplace CMD: error writing PATH: why"
 * when bad is set, a write failed or the close did. */
int cli_close_out(const char *cmd, FILE *f, const char *path, int bad);
/* An output or input name of an MPI job's or a launcher's processes: pattern with %r the MPI
 * rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID, the first set), %p pid, %h
 * the host name, %% a percent sign; pid < 0 leaves %p and %% as they are (for a second pass
 * with each process's pid). 0 and the name in out, or EXIT_USAGE after one line
 * ("numaplace CMD: OPT PATTERN: why": another %, %r outside a launcher, too long). */
int cli_expand_name(const char *cmd, const char *opt, const char *pattern, int pid, char *out,
                    size_t size);
/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 if it is invalid. */
size_t cli_utf8_len(const unsigned char *s);
#endif
