// SPDX-License-Identifier: MIT
/*
 * pgsql_client.c - the PostgreSQL model's clients: pgbench's transactions
 *
 * A client's transaction is pgbench's TPC-B: accounts_pkey root and leaf,
 * the account's heap page changed (the first update on a page is not HOT:
 * a full page, 116 bytes free, cannot take a 128-byte version, so it goes
 * to the page accounts is filling, extended by one zero page when full,
 * and the key gets an index entry; the dead version is pruned at the next
 * visit, which leaves room for HOT updates there), teller and branch pages
 * changed (HOT), a history row appended (a zero page added every 157
 * rows), the VM bit of a page cleared on its first change, the pg_xact
 * page; WAL records of those sizes (with a full-page image for each page
 * first changed since the last checkpoint's redo point), the commit
 * record, then XLogFlush (pgsql_wal.c). --rate schedules transactions as
 * a Poisson process as pgbench -R does; latency then counts from the
 * scheduled start.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pgsql_i.h"

static uint64_t rnd_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static double rnd_unit(uint64_t *s)
{
	return ((double)(rnd_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* The pages a transaction changed, to give them its records' LSN. */
struct touched {
	enum pg_relid id[12];
	uint32_t blk[12];
	unsigned int n;
};

static int touch(struct pg *pg, struct touched *t, enum pg_relid id, uint32_t blk, int is_new,
		 uint32_t *rec)
{
	uint32_t fpw = 0;
	int ret = pg_access(pg, id, blk, 1, is_new, &fpw);

	*rec += fpw;
	if (t->n < 12) {
		t->id[t->n] = id;
		t->blk[t->n++] = blk;
	}
	return ret;
}

/* heap_update's visibilitymap_clear: the VM page changes once per all-visible page. */
static int vm_clear(struct pg *pg, struct touched *t, enum pg_relid heap, enum pg_relid vm,
		    uint32_t blk)
{
	struct pg_rel *rel = &pg->rel[heap];
	uint32_t dummy = 0;

	if (blk >= rel->nallvis || !__atomic_exchange_n(&rel->allvis[blk], 0, __ATOMIC_RELAXED))
		return 0;
	return touch(pg, t, vm, blk / VM_HEAP_PER_PAGE, 0, &dummy);
}

/* The page new rows go to (history's last page, accounts' new versions). */
static int row_page(struct pg *pg, enum pg_relid id, uint32_t *rows, uint32_t per_page,
		    uint32_t *blk, int *is_new)
{
	int ret = 0;

	pthread_mutex_lock(&pg->ext_lock);
	*is_new = 0;
	if (!*rows || *rows >= per_page) {
		ret = pg_rel_extend(pg, id, 1, 1);
		*rows = 0;
		*is_new = 1;
		if (!ret && id == PG_HISTORY && pg->rel[id].nblocks == 2) {
			/* the second page: the free space map gets made (3 pages) */
			uint32_t b;

			ret = pg_rel_extend(pg, PG_HISTORY_FSM, 3, 1);
			for (b = 0; b < 3 && !ret; b++)
				ret = pg_access(pg, PG_HISTORY_FSM, b, 1, 0, NULL);
		}
	}
	(*rows)++;
	*blk = pg->rel[id].nblocks - 1;
	pthread_mutex_unlock(&pg->ext_lock);
	return ret;
}

static uint32_t key_root(const struct pg *pg, enum pg_relid key)
{
	return pg->rel[key].nblocks ? pg->rel[key].nblocks - 1 : 0;
}

/* pgbench's TPC-B transaction. */
static int tpcb(struct pg *pg, struct pg_client *cl)
{
	uint32_t aid = (uint32_t)(rnd_next(&cl->rnd) % pg->naccounts);
	uint32_t tid = (uint32_t)(rnd_next(&cl->rnd) % pg->ntellers);
	uint32_t bid = (uint32_t)(rnd_next(&cl->rnd) % pg->nbranches);
	uint32_t xid = (uint32_t)atomic_fetch_add(&pg->next_xid, 1);
	uint32_t rec = 0, ablk = aid / ACC_PER_PAGE, blk, leaf, i;
	struct touched t = { .n = 0 };
	uint64_t lsn;
	int ret, is_new, first;

	atomic_store(&pg->clog_dirty[(xid / PG_CLOG_XACTS_PER_PAGE) % 32], 1);
	/* UPDATE pgbench_accounts ... WHERE aid = :aid; SELECT abalance ... */
	leaf = 1 + aid / KEYS_PER_LEAF;
	ret = pg_access(pg, PG_ACCOUNTS_PKEY, key_root(pg, PG_ACCOUNTS_PKEY), 0, 0, NULL);
	if (!ret)
		ret = pg_access(pg, PG_ACCOUNTS_PKEY, leaf, 0, 0, NULL);
	if (!ret)
		ret = touch(pg, &t, PG_ACCOUNTS, ablk, 0, &rec);
	if (!ret)
		ret = vm_clear(pg, &t, PG_ACCOUNTS, PG_ACCOUNTS_VM, ablk);
	first = !(__atomic_fetch_or(&pg->moved[ablk / 8], (uint8_t)(1u << (ablk % 8)),
				    __ATOMIC_RELAXED) & (1u << (ablk % 8)));
	if (!ret && first) {
		/* no room on a full page: the new version goes elsewhere, and into the key */
		rec += REC_UPDATE + REC_BT_INSERT;
		ret = row_page(pg, PG_ACCOUNTS, &pg->acc_insert_rows, ACC_PER_PAGE, &blk, &is_new);
		if (!ret)
			ret = touch(pg, &t, PG_ACCOUNTS, blk, is_new, &rec);
		if (!ret)
			ret = touch(pg, &t, PG_ACCOUNTS_PKEY, leaf, 0, &rec);
	} else {
		rec += REC_HOT_UPDATE;
	}
	/* UPDATE pgbench_tellers; UPDATE pgbench_branches (HOT) */
	if (!ret)
		ret = pg_access(pg, PG_TELLERS_PKEY, key_root(pg, PG_TELLERS_PKEY), 0, 0, NULL);
	if (!ret)
		ret = touch(pg, &t, PG_TELLERS, tid / TELLERS_PER_PAGE, 0, &rec);
	if (!ret)
		ret = vm_clear(pg, &t, PG_TELLERS, PG_TELLERS_VM, tid / TELLERS_PER_PAGE);
	if (!ret)
		ret = pg_access(pg, PG_BRANCHES_PKEY, key_root(pg, PG_BRANCHES_PKEY), 0, 0, NULL);
	if (!ret)
		ret = touch(pg, &t, PG_BRANCHES, bid / BRANCHES_PER_PAGE, 0, &rec);
	if (!ret)
		ret = vm_clear(pg, &t, PG_BRANCHES, PG_BRANCHES_VM, bid / BRANCHES_PER_PAGE);
	rec += 2 * REC_HOT_UPDATE;
	/* INSERT INTO pgbench_history */
	if (!ret)
		ret = row_page(pg, PG_HISTORY, &pg->hist_rows, HIST_PER_PAGE, &blk, &is_new);
	if (!ret)
		ret = touch(pg, &t, PG_HISTORY, blk, is_new, &rec);
	rec += REC_HEAP_INSERT;
	if (ret)
		return ret;
	lsn = pg_wal_insert(pg, rec);
	for (i = 0; i < t.n; i++)
		pg_set_lsn(pg, t.id[i], t.blk[i], lsn);
	/* END: the commit record, then XLogFlush */
	lsn = pg_wal_insert(pg, REC_COMMIT);
	return pg_wal_flush(pg, lsn, 1);
}

/* pgbench -R: the next start of the Poisson schedule (all clients share it). */
static uint64_t next_start(struct pg_run *run)
{
	const struct iotap_workload_pgsql_opts *o = run->pg.o;
	uint64_t at;

	pthread_mutex_lock(&run->sched_lock);
	run->next_ns += -log(rnd_unit(&run->sched_rnd)) * 1e9 / o->rate;
	at = (uint64_t)run->next_ns;
	pthread_mutex_unlock(&run->sched_lock);
	return at;
}

static void sleep_until(struct pg *pg, uint64_t at)
{
	for (;;) {
		uint64_t now = wl_now();
		struct timespec ts;

		if (now >= at || pg_stopping(pg))
			return;
		ts = iotap_ns_timespec(at - now < 100000000ull ? at - now : 100000000ull);
		nanosleep(&ts, NULL);
	}
}

int pg_client_main(struct pg_run *run, unsigned int i, struct pg_cpu *cpu)
{
	struct pg *pg = &run->pg;
	struct pg_client *cl = &run->cl[i];
	const struct iotap_workload_pgsql_opts *o = pg->o;
	int ret = 0;

	pthread_mutex_lock(&pg->state_lock);
	while (atomic_load(&pg->state) == PG_ST_INIT && !wl_stopped())
		pthread_cond_wait(&pg->state_cond, &pg->state_lock);
	pthread_mutex_unlock(&pg->state_lock);
	pg_cpu_start(cpu);
	if (!pg_stopping(pg))
		ret = pg_backend_start(pg);
	while (!ret && !pg_stopping(pg)) {
		uint64_t sched, t0, t1, lat;
		unsigned int iv;

		sched = o->rate > 0 ? next_start(run) : wl_now();
		if (sched >= run->end_ns)
			break;
		sleep_until(pg, sched);
		if (pg_stopping(pg))
			break;
		t0 = wl_now();
		if (t0 >= run->end_ns)
			break;
		if (o->cpu_per_txn_ns) {
			/* the statements' CPU, less what the model itself took last time */
			uint64_t c0 = iotap_thread_cpu_ns(), want = o->cpu_per_txn_ns > cl->own_cpu_ns ?
							      o->cpu_per_txn_ns - cl->own_cpu_ns : 0;

			while (iotap_thread_cpu_ns() - c0 < want) {
				/* user CPU, as an executor's; the clock read is a system call */
				volatile unsigned int k;

				for (k = 0; k < 2000; k++)
					;
			}
			c0 = iotap_thread_cpu_ns();
			ret = tpcb(pg, cl);
			cl->own_cpu_ns = iotap_thread_cpu_ns() - c0;
		} else {
			ret = tpcb(pg, cl);
		}
		if (ret)
			break;
		t1 = wl_now();
		lat = t1 - (o->rate > 0 ? sched : t0);
		if (t1 <= run->end_ns) {
			atomic_fetch_add(&pg->cnt.txns, 1);
			cl->n_all++;
			iv = (unsigned int)((t1 - pg->bench_t0) / o->progress_ns);
			if (iv < pg->niv) {
				atomic_fetch_add(&pg->iv_n[iv], 1);
				atomic_fetch_add(&pg->iv_lat_us[iv], lat / 1000);
			}
			{
				/* the trace's own copy: report and compare derive tps from it */
				struct iotap_trace_rec ar;

				iotap_trace_app_txn_init(&ar, lat,
							 t1 >= pg->steady_t0 ? IOTAP_APPF_STEADY : 0,
							 o->rate > 0 && t0 > sched ? t0 - sched : 0);
				wl_app(pg->c, &ar);
			}
			if (t1 >= pg->steady_t0) {
				cl->n_steady++;
				if (iotap_hist_add(&cl->lat, lat))
					pg_set_error(pg, -ENOMEM);
				cl->lat_sq_steady += (double)lat * (double)lat;
				if (o->rate > 0) {
					uint64_t lag = t0 > sched ? t0 - sched : 0;

					cl->lag_sum += (double)lag;
					cl->lag_n++;
					if (lag > cl->lag_max)
						cl->lag_max = lag;
					if (lag > 1000000000ull)
						cl->late++;
				}
			}
		}
		pg_cpu_tick(pg, cpu);
	}
	return ret;
}
