#!/usr/bin/env python3
"""The 1,024-member go-live report benchmark (run on demand, not in CI).

Generates a ladder bundle of N members (default 1,024; the example cluster's
generator, tests/report/example_cluster.h: ring L3 on 8 rails = 8,192 pairs
with size sweeps, L4, counters), as a directory and as a .tar.gz, then times
`fabcheck report` in each format (median of 5 runs, wall and CPU) and checks
the budget: HTML rendered in under 2 s and under 5 MB. There is no peer tool
that renders a go-live report; as a floor, the same run times Python's json
module merely parsing the bundle's manifest.json and reports the ratio.

  bench/report/report_bench.py BUILD_DIR [--members N]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--members", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    fabcheck = os.path.join(a.build, "src/app/fabcheck")
    maker = os.path.join(a.build, "tests/report/make_example_bundle")
    for f in (fabcheck, maker):
        if not os.access(f, os.X_OK):
            sys.exit(f"missing {f}: build the fabcheck and make_example_bundle targets first")
    tmp = tempfile.mkdtemp(prefix="fabcheck-report-bench-")
    try:
        bundle = os.path.join(tmp, f"cluster-{a.members}")
        wall, _, p = timed([maker, "--members", str(a.members), bundle])
        if p.returncode:
            sys.exit(p.stderr)
        tarball = bundle + ".tar.gz"
        subprocess.run(["tar", "-C", bundle, "-czf", tarball, "."], check=True)
        manifest = os.path.join(bundle, "manifest.json")
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(bundle) for f in fs)
        print(f"bundle: {a.members} members, {size / 1e6:.1f} MB on disk ({os.path.getsize(manifest) / 1e6:.1f} MB "
              f"manifest), .tar.gz {os.path.getsize(tarball) / 1e6:.1f} MB; generated in {wall:.1f} s")
        floor = []
        for _ in range(a.runs):
            t0 = time.monotonic()
            with open(manifest) as f:
                json.load(f)
            floor.append(time.monotonic() - t0)
        floor_s = statistics.median(floor)
        print(f"floor: python json.load of manifest.json {floor_s * 1000:.0f} ms (median of {a.runs})")
        ok = True
        for source, label in ((bundle, "dir"), (tarball, "tar.gz")):
            for fmt in ("html", "md", "json"):
                out = os.path.join(tmp, f"report-{label}.{fmt}")
                walls, cpus = [], []
                for _ in range(a.runs):
                    wall, cpu, p = timed([fabcheck, "report", source, "--format", fmt, "-o", out])
                    if p.returncode not in (0, 1, 2):
                        sys.exit(f"fabcheck report failed ({p.returncode}): {p.stderr}")
                    walls.append(wall)
                    cpus.append(cpu)
                w, c = statistics.median(walls), statistics.median(cpus)
                mb = os.path.getsize(out) / 1e6
                print(f"report {label:6} {fmt:4}: {w * 1000:6.0f} ms wall, {c * 1000:6.0f} ms CPU "
                      f"({w / floor_s:4.1f}x the json.load floor), {mb:.2f} MB")
                if fmt == "html":
                    if w >= 2.0 and c >= 2.0:
                        print("  OVER BUDGET: the HTML must render in under 2 s")
                        ok = False
                    if mb >= 5.0:
                        print("  OVER BUDGET: the HTML must stay under 5 MB")
                        ok = False
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
