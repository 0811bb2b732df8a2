#!/usr/bin/env python3
"""Ratio of two metrics measured in the same boot, over every boot.

usage: benchmarks/ratio_within.py RESULTS.tsv NUMERATOR DENOMINATOR [...]
       (NUMERATOR and DENOMINATOR: metric names, pairs of them)

make bench compares kernels; some questions compare two modes of one
kernel that one boot measures one after the other (pmemdma: mq CPU
against bio).  For each boot (round and kernel of results.tsv) this takes
NUMERATOR / DENOMINATOR and prints the median over the boots, their range
and a 95% percentile-bootstrap interval of the median (10000 resamples,
fixed seed, so the same file gives the same interval).
"""
import csv
import random
import statistics
import sys


def main(argv):
    if len(argv) < 3 or len(argv) % 2 != 1:
        sys.exit(__doc__.strip().split('\n\n')[0])
    vals = {}
    with open(argv[0]) as f:
        for r in csv.DictReader(f, delimiter='\t'):
            vals[(r['round'], r['kernel'], r['metric'])] = float(r['value'])
    boots = sorted({(rd, k) for rd, k, _ in vals})
    for num, den in zip(argv[1::2], argv[2::2]):
        rat = [vals[b + (num,)] / vals[b + (den,)] for b in boots
               if b + (num,) in vals and vals.get(b + (den,))]
        if not rat:
            print(f'{num} / {den}: no boot has both')
            continue
        rng = random.Random(1)
        med = sorted(statistics.median(rng.choices(rat, k=len(rat))) for _ in range(10000))
        print(f'{num} / {den}: {len(rat)} boots, median {statistics.median(rat):.3f}, '
              f'range {min(rat):.3f}-{max(rat):.3f}, 95% bootstrap interval '
              f'{med[249]:.3f}-{med[9750]:.3f}')


if __name__ == '__main__':
    main(sys.argv[1:])
