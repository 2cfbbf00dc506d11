// SPDX-License-Identifier: MIT
/*
 * metaloop.c - create/stat/unlink loop over N files, reporting ops/s
 *
 * The metadata job of tests/bench/fs-bench.sh. Each pass creates N empty
 * files in DIR (open O_CREAT|O_EXCL, close), stats each one by path, then
 * unlinks each one, like the sequential create/stat/delete phases of
 * bonnie++ -n. Passes repeat until -t seconds have gone by (checked between
 * passes, so a pass is never cut short) or -p passes are done.
 *
 * Every create, stat and unlink counts as one op; through a FUSE mount each
 * costs one or more round trips to the daemon (LOOKUP, CREATE, FLUSH,
 * RELEASE, GETATTR, UNLINK, FORGET), which is what the job is there to
 * measure. Stat goes by path, not fstat, so it exercises name lookup too.
 *
 * Output is one line of key=value pairs for the harness to parse:
 *   files=N passes=P ops=X secs=S ops_per_s=R create_per_s=.. stat_per_s=.. unlink_per_s=..
 *
 * Exit status: 0 on success, 1 when an operation fails, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { PH_CREATE, PH_STAT, PH_UNLINK, PH_MAX };

static const char *const phase_name[PH_MAX] = { "create", "stat", "unlink" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: metaloop [-n FILES] [-t SECONDS | -p PASSES] DIR\n"
		"  -n FILES    files per pass (default 1000)\n"
		"  -t SECONDS  run passes until this much time has gone by (default 5)\n"
		"  -p PASSES   run exactly this many passes instead\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * One phase over all files. Return: 0, or -errno of the first failure
 * (reported to stderr with the path).
 */
static int run_phase(int phase, int dfd, const char *dir, unsigned long nfiles)
{
	char name[32];
	struct stat st;
	unsigned long i;
	int fd, ret;

	for (i = 0; i < nfiles; i++) {
		snprintf(name, sizeof(name), "m.%07lu", i);
		switch (phase) {
		case PH_CREATE:
			fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
			ret = fd < 0 ? -errno : close(fd) ? -errno : 0;
			break;
		case PH_STAT:
			ret = fstatat(dfd, name, &st, 0) ? -errno : 0;
			break;
		default:
			ret = unlinkat(dfd, name, 0) ? -errno : 0;
			break;
		}
		if (ret) {
			fprintf(stderr, "metaloop: %s '%s/%s' failed: %s\n",
				phase_name[phase], dir, name, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long nfiles = 1000, seconds = 5, passes = 0, v, done = 0;
	double phase_s[PH_MAX] = { 0 }, t0, t1, total;
	const char *dir;
	int c, dfd, ph;

	while ((c = getopt(argc, argv, "n:t:p:h")) != -1) {
		switch (c) {
		case 'n':
			if (parse_uint(optarg, 10000000, &nfiles))
				goto err_usage;
			break;
		case 't':
			if (parse_uint(optarg, 86400, &seconds))
				goto err_usage;
			break;
		case 'p':
			if (parse_uint(optarg, ULONG_MAX / 2, &v))
				goto err_usage;
			passes = v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto err_usage;
		}
	}
	if (argc - optind != 1)
		goto err_usage;
	dir = argv[optind];

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "metaloop: cannot open directory '%s': %s\n", dir, strerror(errno));
		return 1;
	}

	t0 = now_s();
	for (;;) {
		for (ph = 0; ph < PH_MAX; ph++) {
			t1 = now_s();
			if (run_phase(ph, dfd, dir, nfiles))
				goto err_close;
			phase_s[ph] += now_s() - t1;
		}
		done++;
		if (passes ? done >= passes : now_s() - t0 >= seconds)
			break;
	}
	total = now_s() - t0;
	close(dfd);

	printf("files=%lu passes=%lu ops=%lu secs=%.3f ops_per_s=%.1f", nfiles, done,
	       3 * nfiles * done, total, 3 * nfiles * done / total);
	for (ph = 0; ph < PH_MAX; ph++)
		printf(" %s_per_s=%.1f", phase_name[ph],
		       phase_s[ph] > 0 ? nfiles * done / phase_s[ph] : 0.0);
	printf("\n");
	return 0;

err_close:
	close(dfd);
	return 1;
err_usage:
	usage(stderr);
	return 2;
}
