"""The tables of bench/auto_vs_forced.sh and bench/auto_vs_forced_netns.sh.

Reads lines "GROUP COLLECTIVE MODE JSON" (GROUP: one word naming the run,
such as np=2 or 0.5gbit; MODE: auto, off (SMD_CALIBRATE=off) or a forced
algorithm; JSON: one smd-bench --json result) and prints, per group and
collective, the median time per size of auto (and off, where run), the
chosen algorithm's forced time, the best forced algorithm, auto/forced
(flagged over 15%) and choice/best: the chosen algorithm forced over the
best forced, the choice's own cost without the noise between two runs of
one algorithm. Standard library only.

usage: auto_vs_forced_report.py RUNS TITLE_FORMAT
  TITLE_FORMAT: the heading of a table, with {group} and {collective}.
"""
import json
import statistics
import sys


def main():
    runs = {}
    for line in open(sys.argv[1]):
        group, coll, mode, js = line.split(' ', 3)
        d = json.loads(js)
        runs.setdefault((group, coll), {}).setdefault(d['bytes'], {}).setdefault(mode, []).append(d)
    worst = 0
    for (group, coll), sizes in sorted(runs.items()):
        print('\n' + sys.argv[2].format(group=group, collective=coll) + '\n')
        with_off = any('off' in m for m in sizes.values())
        off_head = ' off | us |' if with_off else ''
        print(f'| bytes | auto | us |{off_head} its algorithm forced, us | best forced | us | '
              'auto/forced | choice/best |')
        print('|---' * (8 + (2 if with_off else 0)) + '|')
        for size in sorted(sizes):
            m = sizes[size]
            med = {k: statistics.median(r['time_us'] for r in v) for k, v in m.items()}
            forced = {k: t for k, t in med.items() if k not in ('auto', 'off')}
            if 'auto' not in med or not forced or (with_off and 'off' not in med):
                print(f'| {size} | (runs missing: see the failed runs below) |')
                continue
            best = min(forced, key=forced.get)
            ratio = med['auto'] / forced[best]
            worst = max(worst, ratio)
            flag = ' **over 15%**' if ratio > 1.15 else ''
            chosen = m['auto'][0]['algo']
            mine = forced.get(chosen)
            off = f" {m['off'][0]['algo']} | {med['off']:.1f} |" if with_off else ''
            own = f'{mine:.1f}' if mine else '-'
            choice = f'{mine / forced[best]:.2f}' if mine else '-'
            print(f"| {size} | {chosen} | {med['auto']:.1f} |{off} {own} | {best} | "
                  f'{forced[best]:.1f} | {ratio:.2f}{flag} | {choice} |')
    print(f'\nworst auto/forced: {worst:.2f}')


if __name__ == '__main__':
    main()
