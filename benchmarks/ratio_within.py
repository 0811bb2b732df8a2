#!/usr/bin/env python3
"""Ratio of two metrics measured in the same boot, over every boot.

usage: benchmarks/ratio_within.py RESULTS.tsv NUMERATOR DENOMINATOR [...]
       (NUMERATOR and DENOMINATOR: metric names, pairs of them)

make bench compares kernels; some questions compare two modes of one
kernel that one boot measures one after the other (pmemdma: mq CPU
against bio).  For each boot (round and kernel of results.tsv) this takes
NUMERATOR / DENOMINATOR and prints the median over the boots, their range
and an exact distribution-free 95% interval of the median: the order
statistics (k, n+1-k) of the sorted ratios with the largest k whose
binomial coverage is at least 95%.  It assumes only that the boots are
independent; below 6 boots no such interval reaches 95% and it says
"n too small" instead of printing a narrower one (a bootstrap interval
of the median, which this used before, covers far less than it claims
at that size).
"""
import csv
import math
import statistics
import sys


def median_interval(xs, level=0.95):
    """(lo, hi, coverage) of the exact order-statistic interval, or None."""
    n = len(xs)
    s = sorted(xs)
    best = None
    for k in range(1, n // 2 + 1):
        # P(X_(k) <= median <= X_(n+1-k)) = 1 - 2 * P(Bin(n, 1/2) < k)
        cov = 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if cov >= level:
            best = (s[k - 1], s[n - k], cov)
    return best


def main(argv):
    if len(argv) < 3 or len(argv) % 2 != 1:
        sys.exit(__doc__.strip().split('\n\n')[0])
    vals = {}
    with open(argv[0]) as f:
        for r in csv.DictReader(f, delimiter='\t'):
            try:
                vals[(r['round'], r['kernel'], r['metric'])] = float(r['value'])
            except (KeyError, TypeError, ValueError):
                continue
    boots = sorted({(rd, k) for rd, k, _ in vals})
    for num, den in zip(argv[1::2], argv[2::2]):
        rat = [vals[b + (num,)] / vals[b + (den,)] for b in boots
               if b + (num,) in vals and vals.get(b + (den,))]
        if not rat:
            print(f'{num} / {den}: no boot has both')
            continue
        ci = median_interval(rat)
        if ci is None:
            iv = 'n too small for a 95% interval (needs 6 boots)'
        else:
            iv = f'95% interval {ci[0]:.3f}-{ci[1]:.3f} (exact, {100 * ci[2]:.1f}%)'
        print(f'{num} / {den}: {len(rat)} boots, median {statistics.median(rat):.3f}, '
              f'range {min(rat):.3f}-{max(rat):.3f}, {iv}')


if __name__ == '__main__':
    main(sys.argv[1:])
