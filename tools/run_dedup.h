/* SPDX-License-Identifier: MIT */
/*
 * run_dedup.h - `iotap run dedup`, which cmd_run.c dispatches to
 * tools/run_dedup.c. argv[0] is "dedup". Returns the exit status.
 */
#ifndef IOTAP_RUN_DEDUP_H
#define IOTAP_RUN_DEDUP_H

int cmd_run_dedup(int argc, char **argv);

#endif /* IOTAP_RUN_DEDUP_H */
