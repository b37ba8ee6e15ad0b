#!/usr/bin/env python3
"""Medians over several runs of bench/fusion: reads their JSON files and prints
one Markdown table (median over runs of each variant's per-run median).

    python3 bench/fusion_median.py run1.json run2.json run3.json
"""
import json
import statistics
import sys

COLUMNS = [
    ("kiln fused", "fused"),
    ("kiln unfused", "unfused"),
    ("kiln reference", "reference"),
    ("hand loop", "hand loop"),
    ("hand+alloc", "hand+alloc"),
    ("eigen", "Eigen"),
    ("libtorch", "LibTorch"),
    ("STREAM ceiling", "STREAM ceiling"),
]


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}"


def main(paths):
    if not paths:
        sys.exit(__doc__)
    runs = [json.load(open(p)) for p in paths]
    times = {}   # (workload, size) -> variant -> [median_s]
    kernels = {}  # (workload, size) -> [fused kernels per call]
    meta = {}
    order = []
    for run in runs:
        for r in run["results"]:
            key = (r["workload"], r["size"])
            if key not in meta:
                meta[key] = r
                order.append(key)
            for v in r["variants"]:
                if not v.get("ran"):
                    continue
                times.setdefault(key, {}).setdefault(v["variant"], []).append(v["median_s"])
                if v["variant"] == "kiln fused" and v.get("kernels_per_call") is not None:
                    kernels.setdefault(key, []).append(v["kernels_per_call"])

    def med(key, variant):
        xs = times.get(key, {}).get(variant)
        return statistics.median(xs) if xs else None

    r0 = runs[0]
    print(f"{len(runs)} runs; {r0['cpu']}, {r0['hardware_threads']} hardware threads; "
          f"threads per variant: {r0['threads']}; Eigen {r0.get('eigen')}; LibTorch {r0['libtorch']}; "
          f"reuse_memory={r0.get('reuse_memory', False)}; all checks ok: "
          f"{all(r['all_checks_ok'] for r in runs)}")
    print()
    head = ["workload", "shape"] + [c[1] for c in COLUMNS] + [
        "fused/hand", "fused/LibTorch", "fused GB/s", "ceiling/fused", "fused GFLOP/s",
        "kernels (fused)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in order:
        m = meta[key]
        row = [m["workload"], m["shape"]]
        row += [fmt_time(med(key, c[0])) for c in COLUMNS]
        f, h, t = med(key, "kiln fused"), med(key, "hand loop"), med(key, "libtorch")
        row.append(fmt_ratio(f / h if f and h else None))
        row.append(fmt_ratio(f / t if f and t else None))
        flops = m.get("flops")
        row.append(f"{m['min_bytes'] / f / 1e9:.2f}" if f and not flops else "-")
        c = med(key, "STREAM ceiling")
        row.append(fmt_ratio(c / f if f and c else None))
        row.append(f"{flops / f / 1e9:.1f}" if f and flops else "-")
        ks = kernels.get(key)
        row.append(f"{statistics.median(ks):.0f}" if ks else "-")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
