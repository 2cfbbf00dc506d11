/* SPDX-License-Identifier: MIT */
/*
 * run_dedup.h - `iotap run dedup`, which cmd_run.c dispatches to
 * tools/run_dedup.c. argv[0] is "dedup". Returns the exit status.
 * Also what cmd_run.c shares with it, so every workload behaves alike.
 */
#ifndef IOTAP_RUN_DEDUP_H
#define IOTAP_RUN_DEDUP_H

int cmd_run_dedup(int argc, char **argv);

/*
 * SIGINT, SIGTERM and SIGHUP, however many, only ask the run to stop, so
 * that the files are removed and the traces closed (cmd_run.c).
 */
void run_install_signals(void);

/* Can --drop-caches drop the page cache? 0, or -errno after warning. */
int run_drop_check(const char *cmd);
/* --drop-caches failed with @err: the figures of 'iotap @cmd' include the cache. */
void run_drop_warning(const char *cmd, int err);

#endif /* IOTAP_RUN_DEDUP_H */
