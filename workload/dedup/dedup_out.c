// SPDX-License-Identifier: MIT
/*
 * dedup_out.c - the dedup model's report: one table per kind of phase
 *
 * MB = 10^6 bytes, as disk vendors and backup consoles count. "logical"
 * is what the backup clients sent, "physical" every byte the media server
 * wrote (containers, index and maps); the dedup ratio is logical bytes over
 * the segment bytes stored.
 */
#include <inttypes.h>
#include <string.h>

#include "dedup_i.h"

static double rate(uint64_t bytes, double s)
{
	return s > 0 ? (double)bytes / s / 1e6 : 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static const char *mark(const struct iotap_workload_phase_result *p)
{
	return p->partial ? " (partial)" : "";
}

static void size_str(char *buf, size_t len, uint64_t b)
{
	if (b >= (1ull << 30) && !(b % (1ull << 30)))
		snprintf(buf, len, "%" PRIu64 " GiB", b >> 30);
	else if (b >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
	else if (b >= (1ull << 20) && !(b % (1ull << 20)))
		snprintf(buf, len, "%" PRIu64 " MiB", b >> 20);
	else if (b >= (1ull << 20))
		snprintf(buf, len, "%.1f MiB", (double)b / (1ull << 20));
	else
		snprintf(buf, len, "%" PRIu64 " KiB", b >> 10);
}

void iotap_workload_dedup_print(FILE *f, const char *target,
				const struct iotap_workload_dedup_opts *o,
				const struct iotap_workload_dedup_result *r)
{
	const struct iotap_workload_dedup_plan *p = &r->plan;
	char img[32], seg[32], cont[32], cache[32], index[32];
	uint64_t logical = 0, stored = 0, segs = 0, fresh = 0;
	double gen_s = 0, hash_s = 0, user_s = 0, wall_s = 0;
	unsigned int g;

	size_str(img, sizeof(img), o->image_bytes);
	size_str(seg, sizeof(seg), o->segment_bytes);
	size_str(cont, sizeof(cont), o->container_bytes);
	size_str(cache, sizeof(cache), p->cache_entries * DD_ENTRY);
	size_str(index, sizeof(index), p->index_bytes);
	fprintf(f, "dedup %s on '%s'%s%s%s: %u streams x %s, %u generations, %.4g%% change, "
		   "%.4g%% duplicates, %.4g%% compressible\n",
		o->flavor == IOTAP_DEDUP_MSDP ? "msdp" : o->flavor == IOTAP_DEDUP_BORG ? "borg" :
		"restic", target,
		o->meta_dir ? " (meta '" : "", o->meta_dir ? o->meta_dir : "",
		o->meta_dir ? "')" : "", o->streams, img, o->generations, o->change * 100,
		o->dup * 100, o->compress * 100);
	if (o->flavor == IOTAP_DEDUP_RESTIC)
		fprintf(f, "chunks 512 KiB-8 MiB (content-defined), packs %s, index in RAM; "
			   "planned dedup ratio %.2f:1\n\n", cont, p->dedup_ratio);
	else if (o->flavor == IOTAP_DEDUP_BORG)
		fprintf(f, "chunks 512 KiB-8 MiB, ~2.5 MiB (buzhash,19,23,21), lz4, segments %s, "
			   "chunk index in RAM; planned dedup ratio %.2f:1\n\n", cont,
			p->dedup_ratio);
	else
		fprintf(f, "segments %s, containers %s, fingerprint cache %s (%" PRIu64
			   " entries), index %s; planned dedup ratio %.2f:1\n\n",
			seg, cont, cache, p->cache_entries, index, p->dedup_ratio);

	fprintf(f, "%-15s %7s %9s %9s %6s %6s %6s %9s %6s %7s %8s %8s %5s\n", "backup", "time s",
		"logical", "physical", "new", "dedup", "cum", "lookups", "hit", "index", "miss p50",
		"miss p99", "%CP");
	fprintf(f, "%-15s %7s %9s %9s %6s %6s %6s %9s %6s %7s %8s %8s %5s\n", "", "", "MB/s", "MB/s",
		"%", "ratio", "ratio", "/s", "%", "reads", "ms", "ms", "");
	for (g = 0; g < r->gens_run; g++) {
		const struct iotap_workload_dedup_gen *x = &r->gen[g];
		double t = x->backup.elapsed_s;
		char name[32];

		logical += x->logical_bytes;
		stored += x->stored_bytes;
		segs += x->segments;
		fresh += x->new_segments;
		gen_s += x->gen_cpu_s;
		hash_s += x->hash_cpu_s;
		user_s += x->backup_user_s;
		wall_s += t;
		snprintf(name, sizeof(name), "gen=%u%s", g, mark(&x->backup));
		fprintf(f, "%-15s %7.2f %9.1f %9.1f %6.1f %6.2f %6.2f %9.0f %6.1f %7" PRIu64
			   " %8.3f %8.3f %5.0f\n",
			name, t, rate(x->logical_bytes, t), rate(x->written_bytes, t),
			x->segments ? 100.0 * (double)x->new_segments / (double)x->segments : 0,
			ratio(x->logical_bytes, x->stored_bytes), ratio(logical, stored),
			t > 0 ? (double)x->lookups / t : 0,
			x->lookups ? 100.0 * (double)x->cache_hits / (double)x->lookups : 0,
			x->index_reads, x->miss_p50_s * 1e3, x->miss_p99_s * 1e3,
			t > 0 ? 100.0 * x->backup.cpu_s / t : 0);
	}

	if (r->restores_run) {
		fprintf(f, "\n%-15s %7s %9s %9s %8s %8s %10s %5s\n", "restore", "time s", "MB",
			"MB/s", "reads", "avg KiB", "containers", "%CP");
		for (g = 0; g < r->restores_run; g++) {
			const struct iotap_workload_dedup_gen *x = &r->gen[g];
			double t = x->restore.elapsed_s;
			char name[32];

			snprintf(name, sizeof(name), "gen=%u%s", g, mark(&x->restore));
			fprintf(f, "%-15s %7.2f %9.1f %9.1f %8" PRIu64 " %8.1f %10" PRIu64
				   " %5.0f\n",
				name, t, (double)x->restore_bytes / 1e6, rate(x->restore_bytes, t),
				x->restore_reads,
				x->restore_reads ? (double)x->restore_bytes / 1024.0 /
							   (double)x->restore_reads : 0,
				x->restore_containers, t > 0 ? 100.0 * x->restore.cpu_s / t : 0);
		}
	}
	if (r->expire.ran)
		fprintf(f, "\nexpire%s: %" PRIu64 " images, %" PRIu64 " segments dead (%.1f MB), "
			   "%.2f s\n", mark(&r->expire), r->expired_images, r->dead_segments,
			(double)r->dead_bytes / 1e6, r->expire.elapsed_s);
	if (r->compact.ran)
		fprintf(f, "%scompact%s: %" PRIu64 " containers removed, %" PRIu64 " rewritten; "
			   "read %.1f MB, wrote %.1f MB, freed %.1f MB, %.2f s\n",
			r->expire.ran ? "" : "\n", mark(&r->compact), r->containers_removed,
			r->containers_rewritten, (double)r->compact_read / 1e6,
			(double)r->compact_written / 1e6, (double)r->compact_freed / 1e6,
			r->compact.elapsed_s);
	if (r->gens_run) {
		fprintf(f, "\nstored %.1f MB of %.1f MB logical: dedup ratio %.2f:1 (planned "
			   "%.2f:1)", (double)stored / 1e6, (double)logical / 1e6,
			ratio(logical, stored), p->dedup_ratio);
		if (r->compact.ran)
			fprintf(f, "; after compaction %" PRIu64 " containers, %.1f MB",
				r->containers, (double)r->stored_bytes / 1e6);
		fprintf(f, "\n");
		fprintf(f, "model CPU: %.1f us content + %.1f us hash per new segment; all backup "
			   "user CPU %.1f us per segment (%.1f%% of backup time)\n",
			fresh ? gen_s * 1e6 / (double)fresh : 0,
			fresh ? hash_s * 1e6 / (double)fresh : 0,
			segs ? user_s * 1e6 / (double)segs : 0,
			wall_s > 0 ? 100.0 * user_s / wall_s : 0);
	}
	if (r->partial)
		fprintf(f, "\n*** interrupted: partial results ***\n");
}
