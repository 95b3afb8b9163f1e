#!/usr/bin/env python3
"""Draws `smd-sim step --format csv` output as an SVG line chart: scaling
efficiency against one node, per workload and mode, over the node counts
(log scale). Standard library only (no plotting package is needed).

Usage: smd-sim step --cluster FILE | plot_scaling.py TITLE > chart.svg
"""
import csv
import math
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

W, H = 760, 430
LEFT, RIGHT, TOP, BOTTOM = 70, 230, 50, 60
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def main():
    title = sys.argv[1] if len(sys.argv) > 1 else "Scaling efficiency"
    series = OrderedDict()
    for row in csv.DictReader(sys.stdin):
        key = "%s, %s" % (row["workload"], row["mode"].replace("_", " "))
        series.setdefault(key, []).append((int(row["nodes"]), float(row["efficiency_vs_1_node"])))
    if not series:
        sys.exit("plot_scaling.py: no rows on stdin")
    nodes = sorted({n for pts in series.values() for n, _ in pts})
    lo, hi = math.log2(nodes[0]), math.log2(nodes[-1]) or 1
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(n):
        return LEFT + (math.log2(n) - lo) / ((hi - lo) or 1) * pw

    def y(e):
        return TOP + (1.05 - e) / 1.05 * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="25" font-size="15">%s</text>' % (LEFT, escape(title))]
    for e in [0, 0.2, 0.4, 0.6, 0.8, 1.0]:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (LEFT, LEFT + pw, y(e), y(e)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (LEFT - 6, y(e) + 4, e))
    for n in nodes:
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>' % (x(n), x(n), TOP, TOP + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(n), TOP + ph + 18, n))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">nodes (8 ranks each)</text>' % (LEFT + pw / 2, H - 15))
    out.append('<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">'
               'step-time efficiency vs 1 node</text>' % (TOP + ph / 2))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (LEFT, TOP, pw, ph))
    for i, (name, pts) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="6,4"' if "sharded" in name else ""
        path = " ".join("%.1f,%.1f" % (x(n), y(e)) for n, e in pts)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>' % (path, colour, dash))
        for n, e in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (x(n), y(e), colour))
        ly = TOP + 10 + 20 * i
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (LEFT + pw + 15, LEFT + pw + 45, ly, ly, colour, dash))
        out.append('<text x="%d" y="%d">%s</text>' % (LEFT + pw + 50, ly + 4, escape(name)))
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
