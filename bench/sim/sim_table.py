#!/usr/bin/env python3
"""The accuracy and cost table of docs/sim.md: `fabcheck sim` over fabrics of
several sizes (8 rails, 32 members per leaf, 8 spines per rail), every
strategy, the realistic fault mix, several seeds; prints a Markdown table.

    bench/sim/sim_table.py --binary build/src/app/fabcheck [--sizes 128,1024,2048,4096] [--seeds 3]

All-pairs runs n - 1 rounds of n/2 pairs, each round a max-min fair share
over every link: minutes of simulation CPU per seed at 1,024 members. So
`pairwise` is simulated only up to --pairwise-up-to members; above it the
table gives its rounds and wall time, which follow from n alone.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def run(binary, nodes, strategy, seed, rails, per_leaf, spines, mix="realistic"):
    cmd = [binary, "sim", "--nodes", str(nodes), "--rails", str(rails), "--nodes-per-leaf", str(per_leaf),
           "--spines", str(spines), "--strategy", strategy, "--fault-mix", mix, "--seed", str(seed),
           "--json", "--quiet"]
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    report["wall_s"] = time.monotonic() - start
    return report


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default="build/src/app/fabcheck")
    p.add_argument("--sizes", default="128,1024,2048,4096")
    p.add_argument("--strategies", default="adaptive,topology,ring,k-random,pairwise")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--rails", type=int, default=8)
    p.add_argument("--nodes-per-leaf", type=int, default=32)
    p.add_argument("--spines", type=int, default=8)
    p.add_argument("--pairwise-up-to", type=int, default=128)
    p.add_argument("--mix", default="realistic", help="realistic, or harsh (one-way, gray-loss, flapping and "
                   "congested links besides)")
    a = p.parse_args()
    print(f"| members | strategy | rounds | wall at 10 s/round | top-1 | precision | recall | faults found / planted "
          f"| analysis CPU | sim run CPU | max RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in a.sizes.split(",")]:
        for strategy in a.strategies.split(","):
            if strategy == "pairwise" and n > a.pairwise_up_to:
                print(f"| {n:,} | pairwise | {n - 1:,} | {(n - 1) * 10 / 3600:.1f} h | not simulated (n - 1 "
                      f"rounds of simulation) | | | | | | |")
                continue
            reports = []
            for seed in range(1, a.seeds + 1):
                try:
                    reports.append(run(a.binary, n, strategy, seed, a.rails, a.nodes_per_leaf, a.spines, a.mix))
                except subprocess.CalledProcessError as e:
                    print(f"fabcheck sim failed: {e.stderr}", file=sys.stderr)
                    return 1
            score = [r["score"] for r in reports]
            for seed, s in enumerate(score, 1):  # what a row below 100% is made of, for the docs' explanation
                for m in s["missed"]:
                    print(f"  {n} {strategy} seed {seed}: missed {m['kind']} {m['element']}", file=sys.stderr)
                for m in s["false_positives"]:
                    print(f"  {n} {strategy} seed {seed}: wrong {m['kind']} {m['element']}: {m['why']}",
                          file=sys.stderr)
            found = sum(round(s["top1"] * s["planted"]) for s in score)
            planted = sum(s["planted"] for s in score)
            true_findings = sum(s["true_findings"] for s in score)
            findings = sum(s["findings"] for s in score)
            named_kind = sum(round(s["recall"] * s["planted"]) for s in score)
            rounds = statistics.mean(r["rounds"] for r in reports)
            wall = statistics.mean(r["simulated_wall_s"] for r in reports)
            print(f"| {n:,} | {strategy} | {rounds:.0f} | {wall / 60:.1f} min | {found / planted * 100:.1f}% | "
                  f"{(true_findings / findings * 100) if findings else 100:.1f}% | {named_kind / planted * 100:.1f}% | "
                  f"{found} / {planted} | {max(r['analysis_cpu_s'] for r in reports):.3f} s | "
                  f"{max(r['run_cpu_s'] for r in reports):.1f} s | {max(r['max_rss_mib'] for r in reports):.0f} MiB |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
