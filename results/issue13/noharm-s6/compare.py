# Cell-by-cell medians of no-harm grids side by side (issue 13; used for the sixth and seventh sessions).
#   python3 compare.py NAME=DIR/noharm.csv ... > compare.md
import csv, statistics, sys
grids = [a.split('=', 1) for a in sys.argv[1:]]
if not grids:
    sys.exit('usage: compare.py NAME=noharm.csv ...')
data = []
for name, path in grids:
    with open(path) as f:
        data.append({(r['pair'], r['threads'], r['ncs'], r['locks'], r['writes']): float(r['ratio_median'])
                     for r in csv.DictReader(f)})
keys = list(data[0])
print('| pair | threads | ncs | locks | writes | ' + ' | '.join(n for n, _ in grids) + ' |')
print('| --- ' * (5 + len(grids)) + '|')
for k in keys:
    print('| ' + ' | '.join(k) + ' | ' + ' | '.join('%.2f' % d[k] if k in d else '-' for d in data) + ' |')
print()
for (name, _), d in zip(grids, data):
    below = [v for v in d.values() if v < 0.95]
    print('%s: %d cells, %d below 0.95, worst %.2f' % (name, len(d), len(below), min(d.values())))
for pair in ('bravo-ba/ba', 'bravo-pthread/glibc'):
    for w in ('1', '0.9', '0.5', '0.1', '0.01', '0.001', '0.0001'):
        print('%s writes=%s: median of cells %s' % (pair, w, ' '.join(
            '%s %.2f' % (n, statistics.median(v for k, v in d.items() if k[0] == pair and k[4] == w))
            for (n, _), d in zip(grids, data))))
