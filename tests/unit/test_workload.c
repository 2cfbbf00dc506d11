// SPDX-License-Identifier: MIT
/*
 * test_workload.c - workload/: generators, report layouts, and traces
 * whose every operation matches the model
 *
 * 1. The generators are glibc's: rng_rand() after rng_init(s) is rand()
 *    after srand(s) (so -z gives bonnie++'s offsets and names), rng_copy()
 *    continues the sequence, rng48 is lrand48() after srand48().
 * 2. The layouts reproduce real output byte for byte from the same
 *    figures: seed 004's bonnie++ 1.03 table and CSV, a bonnie++ 2.00a run
 *    on this machine's Debian, GNU dd's summary lines, hdparm's lines, the
 *    iozone throughput summary.
 * 3. A small bonnie 2.x run and a 1.03 run, traced, read back: every
 *    phase in order, every op count, size and offset as the model says
 *    (putc: 1-byte writes at consecutive offsets; seeks: the tickets the
 *    seed draws, rewrites exactly the tickets divisible by ten; 1.03: each
 *    seeker walks the same forked rand() sequence), CPU marks monotonic.
 * 4. The wl_pwrite/wl_pread/wl_fallocate/wl_rename wrappers, traced.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "iotap_bonnie.h"
#include "iotap_dd.h"
#include "iotap_hdparm.h"
#include "iotap_iozone.h"
#include "iotap_trace.h"
#include "iotap_workload.h"
#include "workload_i.h"

static char tmpdir[] = "/tmp/iotap-test-workload.XXXXXX";

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		diag("could not remove %s", dir);
}

/* --- 1. generators --------------------------------------------------------- */

static void test_rng(void)
{
	static const uint32_t seeds[] = { 0, 1, 42, 1796022042u, 0xffffffffu };
	unsigned int k, i, bad;
	struct rng a, b;
	struct rng48 r48;

	for (k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
		rng_init(&a, seeds[k]);
		srand(seeds[k]);
		for (i = 0, bad = 0; i < 10000; i++)
			bad += rng_rand(&a) != rand();
		ok(!bad, "rng_rand matches rand() after srand(%u) for 10000 draws", seeds[k]);
	}
	rng_init(&a, 7);
	for (i = 0; i < 333; i++)
		rng_rand(&a);
	rng_copy(&b, &a);
	for (i = 0, bad = 0; i < 5000; i++)
		bad += rng_rand(&a) != rng_rand(&b);
	ok(!bad, "rng_copy continues the same sequence (as a forked child's rand())");
	rng48_init(&r48, 0);
	srand48(0);
	for (i = 0, bad = 0; i < 10000; i++)
		bad += rng48_next(&r48) != lrand48();
	ok(!bad, "rng48 matches lrand48() after srand48(0)");
}

/* --- 2. layouts ----------------------------------------------------------------- */

static char *capture(void (*fn)(FILE *f, const void *a, const void *b), const void *a,
		     const void *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	char *out;

	fn(f, a, b);
	fclose(f);
	/* a copy: gcc's -Wdangling-pointer cannot see that fclose() set buf */
	out = strdup(buf ? buf : "");
	free(buf);
	return out;
}

/* a phase that ran @secs with @rate units/s and @cpu % CPU */
static void fill(struct iotap_workload_phase_result *p, double units, double rate, double cpu)
{
	p->ran = 1;
	p->elapsed_s = units / rate;
	p->cpu_s = p->elapsed_s * cpu / 100.0;
}

static void fast(struct iotap_workload_phase_result *p)
{
	p->ran = 1;
	p->elapsed_s = 0.01;
	p->cpu_s = 0.01;
}

static void bonnie_text(FILE *f, const void *o, const void *r)
{
	iotap_workload_bonnie_print_text(f, o, r);
}

static void bonnie_csv(FILE *f, const void *o, const void *r)
{
	iotap_workload_bonnie_print_csv(f, o, r);
}

static void test_bonnie_103_layout(void)
{
	/* seed 004: bonnie++ 1.03 on an Infortrend RAID6, verbatim */
	static const char want_txt[] =
		"Version  1.03       ------Sequential Output------ --Sequential Input- --Random-\n"
		"                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n"
		"Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n"
		"hooikist-LSI     8G 43811  99 149548  54 50541  13 36172  75 118160  11 622.9   1\n"
		"                    ------Sequential Create------ --------Random Create--------\n"
		"                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n"
		"              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n"
		"                 16  3096  98 +++++ +++ +++++ +++  3191  99 +++++ +++  9031  99\n";
	static const char want_csv[] =
		"hooikist-LSI,8G,43811,99,149548,54,50541,13,36172,75,118160,11,622.9,1,16,3096,98,"
		"+++++,+++,+++++,+++,3191,99,+++++,+++,9031,99\n";
	struct iotap_workload_bonnie_opts o;
	struct iotap_workload_bonnie_result r;
	double kib = 8192.0 * 1024;
	char *got;

	iotap_workload_bonnie_opts_init(&o, 1);
	o.file_mib = 8192;
	o.machine = "hooikist-LSI";
	memset(&r, 0, sizeof(r));
	fill(&r.test[IOTAP_BONNIE_PUTC], kib, 43811.5, 99.5);
	fill(&r.test[IOTAP_BONNIE_WRITE], kib, 149548.5, 54.5);
	fill(&r.test[IOTAP_BONNIE_REWRITE], kib, 50541.5, 13.5);
	fill(&r.test[IOTAP_BONNIE_GETC], kib, 36172.5, 75.5);
	fill(&r.test[IOTAP_BONNIE_READ], kib, 118160.5, 11.5);
	fill(&r.test[IOTAP_BONNIE_SEEKS], 8192, 622.92, 1.5);
	fill(&r.test[IOTAP_BONNIE_SEQ_CREATE], 16384, 3096.5, 98.5);
	fast(&r.test[IOTAP_BONNIE_SEQ_STAT]);
	fast(&r.test[IOTAP_BONNIE_SEQ_DELETE]);
	fill(&r.test[IOTAP_BONNIE_RAND_CREATE], 16384, 3191.5, 99.5);
	fast(&r.test[IOTAP_BONNIE_RAND_STAT]);
	fill(&r.test[IOTAP_BONNIE_RAND_DELETE], 16384, 9031.5, 99.5);
	got = capture(bonnie_text, &o, &r);
	ok(!strcmp(got, want_txt), "1.03 table is seed 004's, byte for byte");
	if (strcmp(got, want_txt))
		diag("got:\n%s", got);
	free(got);
	got = capture(bonnie_csv, &o, &r);
	ok(!strcmp(got, want_csv), "1.03 CSV is seed 004's, byte for byte");
	if (strcmp(got, want_csv))
		diag("got: %s", got);
	free(got);
}

static void test_bonnie_2x_layout(void)
{
	/* Debian's bonnie++ 2.00a: bonnie++ -s 64:8192 -r 32 -n 1 on this VM */
	static const char want_txt[] =
		"Version 2.00a       ------Sequential Output------ --Sequential Input- --Random-\n"
		"                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n"
		"Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n"
		"vm              64M 2807k  97 +++++ +++ +++++ +++ 4033k  96 +++++ +++ +++++ +++\n"
		"Latency              7176us      92us     684us    5188us    6084us   12092us\n"
		"Version 2.00a       ------Sequential Create------ --------Random Create--------\n"
		"vm                  -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n"
		"              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n"
		"                  1 +++++ +++ +++++ +++ +++++ +++ +++++ +++ +++++ +++ +++++ +++\n"
		"Latency                86us      58us     209us     808us       6us      72us\n";
	static const char want_csv[] =
		"1.98,2.00a,vm,1,1796022042,64M,,8192,5,2807,97,+++++,+++,+++++,+++,4033,96,+++++,"
		"+++,+++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,"
		"7176us,92us,684us,5188us,6084us,12092us,86us,58us,209us,808us,6us,72us\n";
	static const double lat_us[IOTAP_BONNIE_TESTS] = {
		7176, 92, 684, 5188, 6084, 12092, 86, 58, 209, 808, 6, 72,
	};
	struct iotap_workload_bonnie_opts o;
	struct iotap_workload_bonnie_result r;
	unsigned int t;
	char *got;

	iotap_workload_bonnie_opts_init(&o, 0);
	o.file_mib = 64;
	o.num_files = 1;
	o.seed = 1796022042u;
	o.machine = "vm";
	memset(&r, 0, sizeof(r));
	for (t = 0; t < IOTAP_BONNIE_TESTS; t++)
		fast(&r.test[t]);
	fill(&r.test[IOTAP_BONNIE_PUTC], 3072, 2807.5, 97.5);
	fill(&r.test[IOTAP_BONNIE_GETC], 3072, 4033.5, 96.5);
	for (t = 0; t < IOTAP_BONNIE_TESTS; t++)
		r.test[t].latency_max_s = (lat_us[t] + 0.5) / 1e6;
	got = capture(bonnie_text, &o, &r);
	ok(!strcmp(got, want_txt), "2.00a tables are bonnie++ 2.00a's, byte for byte");
	if (strcmp(got, want_txt))
		diag("got:\n%s", got);
	free(got);
	got = capture(bonnie_csv, &o, &r);
	ok(!strcmp(got, want_csv), "2.00a CSV is bonnie++ 2.00a's, byte for byte");
	if (strcmp(got, want_csv))
		diag("got: %s", got);
	free(got);

	/* K/sec above 10000 switch to "m" and "g" like bonnie++ 2.x */
	memset(&r, 0, sizeof(r));
	fill(&r.test[IOTAP_BONNIE_WRITE], 65536, 65536.0 / 2, 50);	/* 32768 KiB/s */
	fill(&r.test[IOTAP_BONNIE_READ], 65536, 2048.0 * 1024 * 1024, 10);
	o.num_files = 0;
	r.test[IOTAP_BONNIE_READ].elapsed_s = 1;	/* 64 MiB/s... made long enough */
	r.test[IOTAP_BONNIE_READ].cpu_s = 0.1;
	r.test[IOTAP_BONNIE_WRITE].elapsed_s = 2;
	got = capture(bonnie_text, &o, &r);
	ok(strstr(got, " 32.0m  50") && strstr(got, " 64.0m  10"),
	   "2.00a rates of 10000 K/sec and more print as MiB/s ('32.0m')");
	free(got);
}

static void dd_print(FILE *f, const void *a, const void *b)
{
	(void)b;
	iotap_workload_dd_print(f, a);
}

static void test_dd_layout(void)
{
	static const struct {
		uint64_t bytes, recs;
		double s;
		const char *want;
	} cases[] = {
		{ 21474836480ull, 20480, 66.9784,
		  "21474836480 bytes (21 GB, 20 GiB) copied, 66.9784 s, 321 MB/s\n" },
		{ 104857600, 100, 0.134664,
		  "104857600 bytes (105 MB, 100 MiB) copied, 0.134664 s, 779 MB/s\n" },
		{ 104857600, 25600, 0.0266623,
		  "104857600 bytes (105 MB, 100 MiB) copied, 0.0266623 s, 3.9 GB/s\n" },
		{ 300, 3, 9.0984e-05, "300 bytes copied, 9.0984e-05 s, 3.3 MB/s\n" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iotap_workload_dd_result r = { 0 };
		char *got, *nl;
		size_t at;
		int same;

		r.bytes = cases[i].bytes;
		r.full_in = r.full_out = cases[i].recs;
		r.seconds = cases[i].s;
		got = capture(dd_print, &r, NULL);
		/* the third line: after "records in\n" and "records out\n" */
		nl = strchr(got, '\n');
		nl = nl ? strchr(nl + 1, '\n') : NULL;
		at = nl ? (size_t)(nl + 1 - got) : 0;
		same = nl && !strcmp(got + at, cases[i].want);
		ok(same, "dd line as GNU dd 9.1: %.*s", (int)strlen(cases[i].want) - 1,
		   cases[i].want);
		if (!same)
			diag("got: %s", got);
		free(got);
	}
}

static void hdparm_print(FILE *f, const void *a, const void *b)
{
	struct iotap_workload_hdparm_opts o = {
		.flags = IOTAP_HDPARM_CACHED | IOTAP_HDPARM_DEVICE,
	};

	(void)b;
	iotap_workload_hdparm_print(f, "/dev/md0", &o, a);
}

static void test_hdparm_layout(void)
{
	static const char want[] =
		"\n/dev/md0:\n"
		" Timing cached reads:   2976 MB in  2.00 seconds = 1487.69 MB/sec\n"
		" Timing buffered disk reads: 892 MB in  3.00 seconds = 296.90 MB/sec\n";
	struct iotap_workload_hdparm_result r = { 0 };
	char *got;

	r.ran_cached = r.ran_device = 1;
	r.cached_mb = 2976;
	r.cached_s = 2976 / 1487.69;
	r.device_mb = 892;
	r.device_s = 892 / 296.90;
	got = capture(hdparm_print, &r, NULL);
	ok(!strcmp(got, want), "hdparm -Tt lines as hdparm 9.x prints seed 003's figures");
	if (strcmp(got, want))
		diag("got:\n%s", got);
	free(got);
}

static void iozone_tput(FILE *f, const void *a, const void *b)
{
	iotap_workload_iozone_print_tput(f, a, b);
}

static void test_iozone_layout(void)
{
	struct iotap_workload_iozone_opts o;
	struct iotap_workload_iozone_result r;
	char *got;

	iotap_workload_iozone_opts_init(&o);
	o.threads = 1;
	o.rec_kb = 64;
	memset(&r, 0, sizeof(r));
	r.tput[IOTAP_IOZONE_WRITE].ran = 1;
	r.tput[IOTAP_IOZONE_WRITE].children_kb_s = 224179.00;
	r.tput[IOTAP_IOZONE_REWRITE].ran = 1;
	r.tput[IOTAP_IOZONE_REWRITE].children_kb_s = 205363.05;
	got = capture(iozone_tput, &o, &r);
	ok(strstr(got, "\"  Initial write \"  224179.00 \n") &&
	   strstr(got, "\"        Rewrite \"  205363.05 \n") &&
	   strstr(got, "\"Record size = 64 kBytes \"\n"),
	   "iozone -t summary rows as iozone's dump_throughput()");
	free(got);
}

/* --- 3. traces that match the model ----------------------------------------------- */

struct ph {
	char name[64];
	uint64_t n_write, n_read, n_fsync, n_release, n_create, n_getattr, n_unlink, n_rmdir;
	uint64_t n_readdir;
	uint64_t bad_len, bad_off, next_off;	/* sequential checks */
	uint64_t cpu_begin, cpu_end;
	uint64_t *roff, *woff;			/* seeks: offsets */
	uint32_t *rtid;
	uint64_t nr, nw;
	int pairs_ok;
};

struct trace_sum {
	struct ph ph[64];
	unsigned int n;
	int order_ok;			/* BEGIN/END alternate with matching names */
	int cpu_monotonic;
	int source_ok;
	uint64_t ops_outside;
};

/* a seek read, or a rewrite: which must follow its own read (same thread, offset) */
static void seek_op(struct ph *cur, const struct iotap_trace_rec *rec)
{
	uint64_t k;

	if (rec->op == IOTAP_OP_READ) {
		cur->roff = realloc(cur->roff, (cur->nr + 1) * sizeof(uint64_t));
		cur->rtid = realloc(cur->rtid, (cur->nr + 1) * sizeof(uint32_t));
		cur->roff[cur->nr] = rec->offset;
		cur->rtid[cur->nr++] = rec->tid;
		return;
	}
	cur->woff = realloc(cur->woff, (cur->nw + 1) * sizeof(uint64_t));
	cur->woff[cur->nw++] = rec->offset;
	for (k = cur->nr; k-- > 0;)
		if (cur->rtid[k] == rec->tid)
			break;
	if (k == UINT64_MAX || cur->roff[k] != rec->offset)
		cur->pairs_ok = 0;
}

static int read_trace(const char *path, const char *dir, struct trace_sum *ts, uint64_t seq_unit)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	struct ph *cur = NULL;
	uint64_t last_cpu = 0;
	int ret, open = 0;

	memset(ts, 0, sizeof(*ts));
	ts->order_ok = ts->cpu_monotonic = 1;
	if (iotap_trace_reader_open(&r, path, 0))
		return -1;
	ts->source_ok = iotap_trace_reader_header(r)->source == IOTAP_SOURCE_WORKLOAD &&
			iotap_trace_reader_header(r)->backing &&
			!strcmp(iotap_trace_reader_header(r)->backing, dir);
	while ((ret = iotap_trace_reader_next(r, &rec)) > 0) {
		if (rec.type == IOTAP_REC_PHASE) {
			uint64_t cpu = rec.offset + rec.length;

			if (cpu < last_cpu)
				ts->cpu_monotonic = 0;
			last_cpu = cpu;
			if (rec.flags == IOTAP_PHASE_BEGIN) {
				if (open || ts->n >= 64)
					ts->order_ok = 0;
				cur = &ts->ph[ts->n++];
				snprintf(cur->name, sizeof(cur->name), "%s",
					 rec.name ? rec.name : "");
				cur->cpu_begin = cpu;
				cur->pairs_ok = 1;
				open = 1;
			} else {
				if (!open || !cur || strcmp(cur->name, rec.name ? rec.name : ""))
					ts->order_ok = 0;
				if (cur)
					cur->cpu_end = cpu;
				open = 0;
			}
			continue;
		}
		if (rec.type != IOTAP_REC_OP)
			continue;
		if (!open) {
			ts->ops_outside++;
			continue;
		}
		switch (rec.op) {
		case IOTAP_OP_WRITE:
		case IOTAP_OP_READ:
			if (!strcmp(cur->name, "seeks")) {
				seek_op(cur, &rec);
			} else if (!strcmp(cur->name, "rewrite")) {
				/* read unit i, then write unit i back */
				if (rec.offset != cur->next_off)
					cur->bad_off++;
				if (rec.op == IOTAP_OP_WRITE)
					cur->next_off += seq_unit;
				if (rec.length != seq_unit || rec.result != (int64_t)seq_unit)
					cur->bad_len++;
			} else {
				uint64_t want = seq_unit;

				if (!strcmp(cur->name, "putc") || !strcmp(cur->name, "getc"))
					want = 1;

				if (rec.offset != cur->next_off)
					cur->bad_off++;
				if (rec.length != want || rec.result != (int64_t)want)
					cur->bad_len++;
				cur->next_off += rec.result > 0 ? (uint64_t)rec.result : 0;
			}
			if (rec.op == IOTAP_OP_WRITE)
				cur->n_write++;
			else
				cur->n_read++;
			break;
		case IOTAP_OP_FSYNC: cur->n_fsync++; break;
		case IOTAP_OP_RELEASE: cur->n_release++; break;
		case IOTAP_OP_CREATE: cur->n_create++; break;
		case IOTAP_OP_GETATTR: cur->n_getattr++; break;
		case IOTAP_OP_UNLINK: cur->n_unlink++; break;
		case IOTAP_OP_RMDIR: cur->n_rmdir++; break;
		case IOTAP_OP_READDIR: cur->n_readdir++; break;
		default: break;
		}
	}
	iotap_trace_reader_close(r);
	return ret;
}

static void free_sum(struct trace_sum *ts)
{
	unsigned int i;

	for (i = 0; i < ts->n; i++) {
		free(ts->ph[i].roff);
		free(ts->ph[i].woff);
		free(ts->ph[i].rtid);
	}
}

static struct ph *find(struct trace_sum *ts, const char *name)
{
	unsigned int i;

	for (i = 0; i < ts->n; i++)
		if (!strcmp(ts->ph[i].name, name))
			return &ts->ph[i];
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const char *const order[] = {
	"putc", "write", "rewrite", "getc", "read", "seeks", "seq_create", "seq_stat",
	"seq_delete", "rand_create", "rand_stat", "rand_delete",
};

static void test_bonnie_trace_2x(void)
{
	struct iotap_workload_env env = { 0 };
	struct iotap_workload_bonnie_opts o;
	struct iotap_workload_bonnie_result res;
	struct iotap_workload_ctx *c;
	struct trace_sum ts;
	char dir[300], trace[300];
	uint64_t chunks, *want, nupd = 0, i;
	struct rng rng;
	struct ph *p;
	int ret, all;

	snprintf(dir, sizeof(dir), "%s/d2", tmpdir);
	snprintf(trace, sizeof(trace), "%s/b2.iotap", tmpdir);
	mkdir(dir, 0755);
	iotap_workload_bonnie_opts_init(&o, 0);
	o.file_mib = 8;
	o.char_mib = 1;
	o.seeks = 1000;
	o.seekers = 3;
	o.num_files = 1;
	o.seed = 42;
	o.machine = "t";
	env.target = dir;
	env.trace_path = trace;
	env.workload = "bonnie test";
	ret = iotap_workload_ctx_open(&c, &env);
	ok(!ret, "context with a trace opens (%d)", ret);
	if (ret)
		return;
	ret = iotap_workload_bonnie_run(c, &o, &res);
	ok(!ret, "bonnie 2.x run: 8 MiB, 1 MiB per-char, 1000 seeks, -n 1 (%d %s)", ret,
	   iotap_workload_ctx_error(c));
	ok(iotap_workload_ctx_lost(c) == 0, "no trace records dropped");
	ok(!iotap_workload_ctx_close(c), "trace closes cleanly");
	for (i = 0, all = 1; i < IOTAP_BONNIE_TESTS; i++)
		all &= res.test[i].ran && !res.test[i].partial;
	ok(all, "all twelve tests ran");
	ok(res.test[IOTAP_BONNIE_SEEKS].units == 1000 && res.test[IOTAP_BONNIE_WRITE].units == 1024,
	   "result units: 1000 seeks, 1024 chunks");
	ok(read_trace(trace, dir, &ts, 8192) == 0, "trace reads back to its end");
	ok(ts.source_ok, "header: source workload, backing = the directory");
	ok(ts.order_ok && ts.n == 12, "12 phases, BEGIN/END paired (%u)", ts.n);
	for (i = 0, all = ts.n == 12; all && i < 12; i++)
		all = !strcmp(ts.ph[i].name, order[i]);
	ok(all, "phases in bonnie++'s order: putc write rewrite getc read seeks seq_* rand_*");
	ok(ts.cpu_monotonic, "CPU at the markers never goes back");

	p = find(&ts, "putc");
	ok(p && p->n_write == 1 << 20 && !p->bad_len && !p->bad_off && p->n_fsync == 1 &&
	   p->n_release == 1, "putc: 1048576 1-byte writes at consecutive offsets, fsync, close");
	p = find(&ts, "write");
	ok(p && p->n_write == 1024 && !p->n_read && !p->bad_len && !p->bad_off && p->n_fsync == 1,
	   "write: 8 MiB in 1024 writes of 8192 at consecutive offsets, then fsync");
	p = find(&ts, "rewrite");
	ok(p && p->n_read == 1024 && p->n_write == 1024 && !p->bad_off && !p->bad_len,
	   "rewrite: read chunk i, write chunk i back, for every chunk");
	p = find(&ts, "getc");
	ok(p && p->n_read == 1 << 20 && !p->bad_len && !p->bad_off,
	   "getc: 1048576 1-byte reads at consecutive offsets");
	p = find(&ts, "read");
	ok(p && p->n_read == 1024 && !p->bad_len && !p->bad_off, "read: 1024 reads of 8192");

	/* the seek tickets bonnie++ 2.x draws with -z 42 */
	chunks = 8 * 1024 * 1024 / 8192;
	rng_init(&rng, 42);
	want = malloc(1000 * sizeof(*want));
	for (i = 0; i < 1000; i++) {
		int32_t v = rng_rand(&rng);

		want[i] = ((uint64_t)v % chunks) * 8192;
		nupd += v % 10 == 0;
	}
	p = find(&ts, "seeks");
	ok(p && p->nr == 1000, "seeks: 1000 reads (%" PRIu64 ")", p ? p->nr : 0);
	ok(p && p->nw == nupd && nupd > 60 && nupd < 140,
	   "seeks: %" PRIu64 " rewrites, the tickets divisible by 10 (~10%%)", nupd);
	ok(p && p->pairs_ok, "seeks: each rewrite follows its own read of the same chunk");
	if (p && p->nr == 1000) {
		qsort(want, 1000, sizeof(*want), cmp_u64);
		qsort(p->roff, 1000, sizeof(*p->roff), cmp_u64);
		ok(!memcmp(want, p->roff, 1000 * sizeof(*want)),
		   "seeks: the chunks read are exactly the ones the seed's tickets name");
	} else {
		ok(0, "seeks: the chunks read are exactly the ones the seed's tickets name");
	}
	free(want);
	ok(p && p->n_fsync == 3 && p->n_release == 3, "seeks: 3 seekers, each fsync + close");

	p = find(&ts, "seq_create");
	ok(p && p->n_create == 1024 && p->n_release == 1024, "seq_create: 1024 files created");
	p = find(&ts, "seq_stat");
	ok(p && p->n_getattr == 1024 && p->n_readdir >= 1, "seq_stat: 1024 stats in readdir order");
	p = find(&ts, "seq_delete");
	ok(p && p->n_unlink == 1024 && p->n_rmdir == 1, "seq_delete: 1024 unlinks, then rmdir");
	p = find(&ts, "rand_create");
	ok(p && p->n_create == 1024, "rand_create: 1024 files");
	p = find(&ts, "rand_stat");
	ok(p && p->n_getattr == 1024 && !p->n_readdir, "rand_stat: 1024 stats, no readdir");
	p = find(&ts, "rand_delete");
	ok(p && p->n_unlink == 1024 && p->n_rmdir == 1, "rand_delete: 1024 unlinks, then rmdir");
	free_sum(&ts);
	ok(rmdir(dir) == 0, "the run left nothing behind");
}

static void test_bonnie_trace_103(void)
{
	struct iotap_workload_env env = { 0 };
	struct iotap_workload_bonnie_opts o;
	struct iotap_workload_bonnie_result res;
	struct iotap_workload_ctx *c;
	struct trace_sum ts;
	char dir[300], trace[300];
	struct stat st;
	struct ph *p;
	uint64_t i, k, chunks = 4 * 1024 * 1024 / 8192, *seq;
	uint32_t tids[8];
	unsigned int nt = 0, t;
	struct rng rng;
	int ret, prefix_ok = 1;

	snprintf(dir, sizeof(dir), "%s/d103", tmpdir);
	snprintf(trace, sizeof(trace), "%s/b103.iotap", tmpdir);
	mkdir(dir, 0755);
	stat(dir, &st);
	iotap_workload_bonnie_opts_init(&o, 1);
	o.file_mib = 4;
	o.seeks = 3000;
	o.num_files = 0;
	env.target = dir;
	env.trace_path = trace;
	ret = iotap_workload_ctx_open(&c, &env);
	if (!ok(!ret, "1.03: context opens"))
		return;
	ret = iotap_workload_bonnie_run(c, &o, &res);
	ok(!ret, "bonnie 1.03 run: 4 MiB, stdio per-char, 3 seekers (%d %s)", ret,
	   iotap_workload_ctx_error(c));
	iotap_workload_ctx_close(c);
	ok(read_trace(trace, dir, &ts, 8192) == 0 && ts.n == 6 && ts.order_ok,
	   "1.03: six data phases, paired markers");
	p = find(&ts, "putc");
	ok(p && p->n_write == 4 * 1024 * 1024 / (uint64_t)st.st_blksize && !p->n_fsync,
	   "1.03 putc: stdio reaches the kernel as %ld-byte writes, no fsync without -b",
	   (long)st.st_blksize);
	p = find(&ts, "getc");
	ok(p && p->n_read >= 4 * 1024 * 1024 / (uint64_t)st.st_blksize,
	   "1.03 getc: stdio reads of the file's block size");
	p = find(&ts, "seeks");
	/* each seeker is a fork()ed child of the same rand() state: same sequence */
	seq = malloc(3000 * sizeof(*seq));
	rng_init(&rng, 1);
	for (i = 0, k = 0; p && k < 3000; k++) {
		seq[k] = ((uint64_t)rng_rand(&rng) % chunks) * 8192;
		if (k % 10 == 0)
			rng_rand(&rng);		/* the rewrite's random byte */
	}
	for (i = 0; p && i < p->nr; i++) {
		for (t = 0; t < nt && tids[t] != p->rtid[i]; t++)
			;
		if (t == nt && nt < 8)
			tids[nt++] = p->rtid[i];
	}
	for (t = 0; p && t < nt; t++) {
		uint64_t n = 0;

		for (i = 0; i < p->nr; i++) {
			if (p->rtid[i] != tids[t])
				continue;
			if (p->roff[i] != seq[n])
				prefix_ok = 0;
			n++;
		}
	}
	ok(p && p->nr == 3000 && nt >= 1 && nt <= 3 && prefix_ok,
	   "1.03 seeks: 3000 reads by %u of 3 seekers, each walking srand(1)'s chunk sequence",
	   nt);
	if (p && !prefix_ok)
		diag("nr %" PRIu64 " seekers %u", p->nr, nt);
	ok(p && p->n_write > 0 && p->pairs_ok, "1.03 seeks: rewrites follow their reads");
	free(seq);
	free_sum(&ts);
	ok(rmdir(dir) == 0, "1.03: the run left nothing behind");
}

static void test_iozone_trace(void)
{
	struct iotap_workload_env env = { 0 };
	struct iotap_workload_iozone_opts o;
	struct iotap_workload_iozone_result res;
	struct iotap_workload_ctx *c;
	struct trace_sum ts;
	char dir[300], trace[300];
	struct ph *p;
	int ret;

	snprintf(dir, sizeof(dir), "%s/dz", tmpdir);
	snprintf(trace, sizeof(trace), "%s/z.iotap", tmpdir);
	mkdir(dir, 0755);
	iotap_workload_iozone_opts_init(&o);
	o.file_kb = 1024;
	o.rec_kb = 64;
	env.target = dir;
	env.trace_path = trace;
	ret = iotap_workload_ctx_open(&c, &env);
	if (!ok(!ret, "iozone: context opens"))
		return;
	ret = iotap_workload_iozone_run(c, &o, &res, NULL);
	ok(!ret && res.nrows == 1 && res.rows[0].kb_per_s[IOTAP_IOZONE_RANDOM_WRITE] > 0,
	   "iozone -s 1m -r 64: all six tests ran");
	iotap_workload_iozone_result_release(&res);
	iotap_workload_ctx_close(c);
	ok(read_trace(trace, dir, &ts, 65536) == 0 && ts.n == 6 && ts.order_ok,
	   "iozone: six phases");
	ok(ts.n == 6 && !strcmp(ts.ph[0].name, "write s=1m r=64k") &&
	   !strcmp(ts.ph[3].name, "reread s=1m r=64k") &&
	   !strcmp(ts.ph[5].name, "random_write s=1m r=64k"),
	   "iozone markers carry size and record: 'write s=1m r=64k'...");
	p = find(&ts, "write s=1m r=64k");
	ok(p && p->n_write == 16 && !p->bad_off && !p->bad_len, "iozone write: 16 x 64k in order");
	p = find(&ts, "random_read s=1m r=64k");
	ok(p && p->n_read == 16, "iozone random read: every record once");
	free_sum(&ts);
	ok(rmdir(dir) == 0, "iozone: the run left nothing behind");
}

/*
 * 4. The wrappers the models got for pgsql, traced: pwrite/pread at
 *    offsets leave f->pos alone and record like write/read; fallocate
 *    records its range and mode; rename records RENAME (moved id, new
 *    parent, old parent in aux) and then the NAME that rebinds the file.
 */
static void test_wrappers_trace(void)
{
	struct iotap_workload_env env = { 0 };
	struct iotap_trace_reader *r;
	struct iotap_workload_ctx *c;
	struct iotap_trace_rec rec;
	char dir[300], trace[300], buf[8192];
	uint64_t ino = 0, pw_off[2] = { 0 }, pr_off = 0;
	int ret, n_pw = 0, n_pr = 0, n_fa = 0, n_rn = 0, rebound = 0, fa_ok = 0, rn_ok = 0;
	struct wl_file f;
	ssize_t n1, n2, n3;
	int fa;

	snprintf(dir, sizeof(dir), "%s/dw", tmpdir);
	snprintf(trace, sizeof(trace), "%s/w.iotap", tmpdir);
	mkdir(dir, 0755);
	env.target = dir;
	env.trace_path = trace;
	if (!ok(!iotap_workload_ctx_open(&c, &env), "wrappers: context opens"))
		return;
	memset(buf, 'p', sizeof(buf));
	ret = wl_open(c, &f, c->dirfd, c->dir_ino, "seg", O_CREAT | O_RDWR | O_TRUNC, 0600);
	n1 = ret ? -1 : wl_pwrite(c, &f, buf, 8192, 16384);
	n2 = ret ? -1 : wl_pwrite(c, &f, buf, 4096, 0);
	n3 = ret ? -1 : wl_pread(c, &f, buf, 8192, 16384);
	ok(!ret && n1 == 8192 && n2 == 4096 && n3 == 8192 && f.pos == 0,
	   "wl_pwrite/wl_pread move bytes at their offsets, f->pos stays 0");
	fa = ret ? -1 : wl_fallocate(c, &f, 0, 65536, 65536);
	ok(fa == 0 || fa == -EOPNOTSUPP, "wl_fallocate 64k at 64k (%d)", fa);
	ino = f.ino;
	wl_close(c, &f);
	ret = wl_rename(c, c->dirfd, c->dir_ino, "seg", c->dirfd, c->dir_ino, "seg.done");
	ok(!ret && !faccessat(c->dirfd, "seg.done", F_OK, 0), "wl_rename moves the file");
	ok(wl_rename(c, c->dirfd, c->dir_ino, "nosuch", c->dirfd, c->dir_ino, "x") == -ENOENT,
	   "wl_rename of a missing name: -ENOENT");
	iotap_workload_ctx_close(c);

	if (!ok(!iotap_trace_reader_open(&r, trace, 0), "wrappers: the trace reads back"))
		return;
	while (iotap_trace_reader_next(r, &rec) > 0) {
		if (rec.type == IOTAP_REC_NAME && rn_ok && rec.file == ino && rec.name &&
		    rec.name_len == 8 && !memcmp(rec.name, "seg.done", 8))
			rebound = 1;
		if (rec.type != IOTAP_REC_OP || rec.file != ino)
			continue;
		if (rec.op == IOTAP_OP_WRITE && n_pw < 2)
			pw_off[n_pw++] = rec.offset;
		if (rec.op == IOTAP_OP_READ) {
			n_pr++;
			pr_off = rec.offset;
		}
		if (rec.op == IOTAP_OP_FALLOCATE) {
			n_fa++;
			fa_ok = rec.offset == 65536 && rec.length == 65536 && rec.flags == 0;
		}
		if (rec.op == IOTAP_OP_RENAME) {
			n_rn++;
			rn_ok = rec.result == 0 && rec.file2 == rec.aux && rec.aux != 0 &&
				!rec.name;
		}
	}
	iotap_trace_reader_close(r);
	ok(n_pw == 2 && pw_off[0] == 16384 && pw_off[1] == 0 && n_pr == 1 && pr_off == 16384,
	   "pwrite/pread records carry their own offsets (16384, 0; 16384)");
	ok(n_fa == 1 && fa_ok, "one FALLOCATE record of [64k, 128k), mode 0");
	ok(n_rn == 1 && rn_ok && rebound,
	   "RENAME names the moved file, new and old parent, then a NAME rebinds it");
	unlinkat(AT_FDCWD, trace, 0);
	snprintf(buf, sizeof(buf), "%s/seg.done", dir);
	unlink(buf);
	ok(rmdir(dir) == 0, "wrappers: the run left nothing behind");
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_rng();
	test_bonnie_103_layout();
	test_bonnie_2x_layout();
	test_dd_layout();
	test_hdparm_layout();
	test_iozone_layout();
	test_bonnie_trace_2x();
	test_bonnie_trace_103();
	test_iozone_trace();
	test_wrappers_trace();
	rm_rf(tmpdir);
	return done_testing();
}
