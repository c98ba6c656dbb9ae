/* SPDX-License-Identifier: BSD-3-Clause */
/* cli.h - the numaplace command's subcommands, one file each (cli/report/ for measure and
 * report), all on the public API. main.c dispatches to them; they call only common.c, json.c,
 * html.c, the advice's table and chart (advise.h) and their own parts, never main.c or one
 * another's command. */
#ifndef NPL_CLI_H
#define NPL_CLI_H

int cmd_topo(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_where(int argc, char **argv);
int cmd_measure(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_profile(int argc, char **argv);
#endif
