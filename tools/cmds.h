/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the iotap subcommands
 *
 * Every command is one file, tools/cmd_<name>.c, defining
 *
 *	int cmd_<name>(int argc, char **argv);
 *
 * argv[0] is the command name; the command parses its own options with an
 * option table (opt.h) so that `iotap <name> --help` is generated from the
 * same table that parses. It returns the process exit status: 0 ok,
 * 1 runtime error, 2 usage error (see tools/iotap.c).
 *
 * To add a command: write cmd_<name>.c with its usage text at the top, add
 * one line below, one row to commands[] in iotap.c and the file to
 * tools/meson.build.
 */
#ifndef IOTAP_CMDS_H
#define IOTAP_CMDS_H

int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif /* IOTAP_CMDS_H */
