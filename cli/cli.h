/* cli.h - the numaplace command: one file per subcommand, all on the public API. */
#ifndef NPL_CLI_H
#define NPL_CLI_H
#include <numaplace.h>
#include <stdio.h>

/* Exit codes (documented in docs/numaplace.1): */
#define EXIT_USAGE 2   /* bad command line or bad policy string */
#define EXIT_FAILED 1  /* the operation failed (message on stderr) */

int cmd_topo(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_where(int argc, char **argv);

/* "numaplace: <what>: <library message>" on stderr; returns EXIT_FAILED. */
int cli_fail(const char *what);
/* Load a synthetic topology when desc != NULL, else this machine's. */
int cli_topo(npl_topo **out, const char *synthetic, const npl_topo **use);
#endif
