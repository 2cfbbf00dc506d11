#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# dedup-borg-chunker.py - does `iotap run dedup --flavor borg` store as much
# per change as borg's own chunker would?
#
#   /usr/bin/python3 tests/bench/dedup-borg-chunker.py [--changes N] [--seeds S]
#
# The model (workload/dedup_data.c) draws borg's chunks once, 512 KiB +
# Exp(2 MiB) capped at 8 MiB, and a later generation stores anew exactly the
# chunks that overlap a changed 1 MiB extent (same cuts after the change).
# borg (src/borg/_chunker.c, buzhash 19,23,21,4095) cuts by content, so a
# change can also move a cut past the next old one and store more. Measured
# here, with borg's Chunker itself (Debian's borgbackup, its Python module):
#   1. one-extent changes of a 64 MiB file of dedup-vs-restic.sh's content
#      (each 512 bytes: 256 random bytes, then their repeat): bytes borg's
#      chunker stores anew, against the model's rule's expectation
#      (E[L^2]/E[L] + 1 MiB of its chunk lengths L);
#   2. the change sets dedup-vs-restic.sh applies (random.Random(7919 + gen),
#      fixed) against random ones of the same size, under the model's rule:
#      how much cheaper or dearer the bench's own draw is than the mean.
# Prints the ratios; exits 77 without borg's Python module.
import io, math, random, sys, hashlib

try:
	from borg.chunker import Chunker
except ImportError:
	print("dedup-borg-chunker: no borg Python module (borgbackup): skipped", file=sys.stderr)
	sys.exit(77)

MIB = 1 << 20
changes, seeds = 160, 8
args = sys.argv[1:]
while args:
	if args[0] == "--changes" and len(args) > 1:
		changes = int(args[1])
	elif args[0] == "--seeds" and len(args) > 1:
		seeds = int(args[1])
	else:
		print("usage: dedup-borg-chunker.py [--changes N] [--seeds S]", file=sys.stderr)
		sys.exit(2)
	args = args[2:]


def piece(rng, r=256):
	"""1 MiB of dedup-vs-restic.sh's content: per 512 bytes, r random then their repeat."""
	out = bytearray()
	for _ in range(MIB // 512):
		b = rng.randbytes(r)
		out += (b * (512 // r + 1))[:512]
	return bytes(out)


def model_len(rng):
	"""dedup_data.c cdc_len() for borg: 512 KiB + Exp(2 MiB), at most 8 MiB (in MiB)."""
	return 0.5 + min(-math.log(1 - rng.random()) * 2.0, 7.5)


def mean_sd(v):
	m = sum(v) / len(v)
	return m, (sum((x - m) ** 2 for x in v) / len(v)) ** .5


# 1. one-extent changes: borg's chunker against the model's rule
FMIB = 64
rng = random.Random(1000)
base = b"".join(piece(rng) for _ in range(FMIB))
master = random.Random(11)
cost, lens = [], []
for s in range(seeds):
	ch = Chunker(master.getrandbits(31), 19, 23, 21, 4095)
	old = [bytes(c.data) for c in ch.chunkify(io.BytesIO(base))]
	known = {hashlib.md5(c).digest() for c in old}
	lens += [len(c) / MIB for c in old[:-1]]	# interior: the file's end cuts the last
	for _ in range(changes // seeds):
		e = master.randrange(4, FMIB - 12)	# clear of the file's end
		f = bytearray(base)
		f[e * MIB:(e + 1) * MIB] = piece(master)
		new = sum(len(c.data) for c in ch.chunkify(io.BytesIO(bytes(f)))
			  if hashlib.md5(bytes(c.data)).digest() not in known)
		cost.append(new / MIB)
rng = random.Random(3)
ml = [model_len(rng) for _ in range(1000000)]
model_cost = sum(x * x for x in ml) / sum(ml) + 1
bm, bsd = mean_sd(cost)
lm, lsd = mean_sd(lens)
mm, msd = mean_sd(ml)
print(f"chunk MiB        borg {lm:.3f} (sd {lsd:.3f}, {len(lens)} chunks)   model {mm:.3f} (sd {msd:.3f})")
print(f"one 1 MiB change borg stores {bm:.3f} MiB (sd {bsd:.2f}, se {bsd / len(cost) ** .5:.3f}, "
      f"{len(cost)} changes)   model {model_cost:.3f}   model/borg {model_cost / bm:.3f}")


# 2. the bench's fixed change sets against random ones, under the model's rule
def rule_cost(rng, total, sets):
	ends, pos = [], 0.0
	while pos < total:
		l = min(model_len(rng), total - pos)
		ends.append((pos, pos + l))
		pos += l
	return sum(b - a for ev in sets for a, b in ends if any(a < e + 1 and b > e for e in ev))


for nf in (2, 8):
	total = nf * 64
	k = round(0.05 * total)
	bench = [random.Random(7919 + g).sample(range(total), k) for g in (1, 2, 3)]
	rng = random.Random(1)
	fixed = mean_sd([rule_cost(rng, total, bench) for _ in range(1000)])
	rand = mean_sd([rule_cost(rng, total, [rng.sample(range(total), k) for _ in range(3)])
			for _ in range(1000)])
	print(f"--files {nf} --file-mib 64: the bench's changes cost {fixed[0]:.1f} MiB, random ones "
	      f"{rand[0]:.1f} (sd {rand[1]:.1f}): bench/random {fixed[0] / rand[0]:.3f}")
