#!/usr/bin/env python3
"""Exporter benchmark: fabcheck exporter against node_exporter's infiniband
collector on the same generated 16-NIC sysroot, in one run, on loopback.

  bench/exporter_bench.py --build build        # writes the fixture, runs both, prints ratios
  bench/exporter_bench.py --build build --rounds 5 --json out.json

Measures, interleaving the two exporters so machine noise hits both alike:
  1. scrape latency (client-side, keep-alive, gzip as Prometheus asks) over N
     scrapes of each, in R rounds (the ratio reported is the median of the
     rounds' ratios), and each exporter's own collector time;
  2. fabcheck's resident memory over 10,000 scrapes (flat = no leak);
  3. 50 concurrent scrapers for 60 s against fabcheck: every answer must be a
     complete 200.
Only processes this script starts are stopped.
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Scraper:
    def __init__(self, port):
        self.port = port
        self.conn = None

    def get(self, path="/metrics"):
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
                resp = self.conn.getresponse()
                body = resp.read()
                return resp.status, body
            except (http.client.HTTPException, OSError):
                # A server closing an idle keep-alive connection: reconnect once.
                self.conn = None
                if attempt == 1:
                    raise
        return None, b""


def wait_ready(port, path, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            status, _ = Scraper(port).get(path)
            if status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def metric_value(text, name):
    for line in text.splitlines():
        if line.startswith(name):
            return float(line.rsplit(" ", 1)[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory (fabcheck and make_sysroot)")
    ap.add_argument("--fabcheck", help="the fabcheck binary (default: BUILD/src/app/fabcheck)")
    ap.add_argument("--nics", type=int, default=16)
    ap.add_argument("--scrapes", type=int, default=400, help="latency samples per exporter and round")
    ap.add_argument("--rounds", type=int, default=3, help="latency rounds; the median of their ratios is reported")
    ap.add_argument("--memory-scrapes", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    fabcheck = args.fabcheck or os.path.join(args.build, "src/app/fabcheck")
    writer = os.path.join(args.build, "tests/fixtures/make_sysroot")
    node_exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    for path, what in ((fabcheck, "fabcheck"), (writer, "make_sysroot")):
        if not os.access(path, os.X_OK):
            sys.exit(f"exporter_bench: {path} missing: build the targets fabcheck and make_sysroot first")
    if not node_exporter:
        sys.exit("exporter_bench: node_exporter missing: apt-get install prometheus-node-exporter")

    work = tempfile.mkdtemp(prefix="fcexp-bench-")
    procs = []
    try:
        root = os.path.join(work, "root")
        subprocess.run([writer, "fabric", root, str(args.nics)], check=True)
        fc_port, ne_port = free_port(), free_port()
        fc = subprocess.Popen([fabcheck, "--log-level", "error", "exporter", "--sysroot", root, "--node-name", "bench",
                               "--listen", f"127.0.0.1:{fc_port}", "--ethtool", "off", "--kubelet-socket", "none"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "fc.log"), "w"))
        procs.append(fc)
        ne = subprocess.Popen([node_exporter, f"--path.sysfs={root}/sys", f"--path.procfs={root}/proc",
                               "--collector.disable-defaults", "--collector.infiniband",
                               f"--web.listen-address=127.0.0.1:{ne_port}"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "ne.log"), "w"))
        procs.append(ne)
        if not wait_ready(fc_port, "/healthz") or not wait_ready(ne_port, "/metrics"):
            sys.exit("exporter_bench: an exporter did not come up; logs in " + work)

        # 1. Latency, interleaved.
        fcs, nes = Scraper(fc_port), Scraper(ne_port)
        for _ in range(20):
            fcs.get(), nes.get()
        lat = {"fabcheck": [], "node_exporter": []}
        own = {"fabcheck": [], "node_exporter": []}
        round_ratios = []
        gzip_bytes = {}
        for _ in range(args.rounds):
            this = {"fabcheck": [], "node_exporter": []}
            for _ in range(args.scrapes):
                for name, s in (("fabcheck", fcs), ("node_exporter", nes)):
                    t0 = time.perf_counter()
                    status, body = s.get()
                    this[name].append(time.perf_counter() - t0)
                    gzip_bytes[name] = len(body)
                    if status != 200:
                        sys.exit(f"exporter_bench: {name} answered {status}")
            round_ratios.append(statistics.median(this["fabcheck"]) / statistics.median(this["node_exporter"]))
            for name in lat:
                lat[name] += this[name]
        # Each exporter's own collection time, uncompressed, from a few extra scrapes.
        def plain(port):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/metrics")
            return c.getresponse().read().decode()
        for _ in range(50):
            own["fabcheck"].append(metric_value(plain(fc_port), "fabcheck_exporter_scrape_duration_seconds"))
            own["node_exporter"].append(
                metric_value(plain(ne_port), 'node_scrape_collector_duration_seconds{collector="infiniband"}'))
        fc_text, ne_text = plain(fc_port), plain(ne_port)
        fc_series = sum(1 for l in fc_text.splitlines() if l and not l.startswith("#"))
        ne_series = sum(1 for l in ne_text.splitlines() if l.startswith("node_infiniband_"))

        med = {k: statistics.median(v) for k, v in lat.items()}
        p90 = {k: sorted(v)[int(len(v) * 0.9)] for k, v in lat.items()}
        own_med = {k: statistics.median([x for x in v if x is not None]) for k, v in own.items()}

        # 2. Memory over many scrapes, sampled every tenth of the run.
        rss_start = rss_kib(fc.pid)
        s = Scraper(fc_port)
        rss_mid = None
        rss_samples = []
        step = max(1, args.memory_scrapes // 10)
        t0 = time.time()
        for i in range(1, args.memory_scrapes + 1):
            s.get()
            if i % step == 0:
                rss_samples.append(rss_kib(fc.pid))
                if rss_mid is None:
                    rss_mid = rss_samples[-1]
        mem_seconds = time.time() - t0
        rss_end = rss_kib(fc.pid)

        # 3. Concurrent scrapers.
        stop = time.time() + args.seconds
        counts = [0] * args.concurrency
        errors = []
        lats = [[] for _ in range(args.concurrency)]

        def worker(i):
            sc = Scraper(fc_port)
            while time.time() < stop:
                t = time.perf_counter()
                try:
                    status, body = sc.get()
                except Exception as e:  # noqa: BLE001 - every failure is a counted error
                    errors.append(repr(e))
                    continue
                lats[i].append(time.perf_counter() - t)
                if status != 200 or len(body) < 100:
                    errors.append(f"status {status}, {len(body)} bytes")
                counts[i] += 1

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        all_lat = sorted(x for l in lats for x in l)
        fc_alive = fc.poll() is None

        result = {
            "nics": args.nics,
            "series": {"fabcheck_all": fc_series, "node_exporter_infiniband": ne_series},
            "scrape_latency_median_ms": {k: v * 1e3 for k, v in med.items()},
            "scrape_latency_p90_ms": {k: v * 1e3 for k, v in p90.items()},
            "latency_ratio_fabcheck_over_node_exporter": statistics.median(round_ratios),
            "latency_ratio_rounds": round_ratios,
            "gzip_body_bytes": gzip_bytes,
            "collector_time_median_ms": {k: v * 1e3 for k, v in own_med.items()},
            "collector_ratio_fabcheck_over_node_exporter": own_med["fabcheck"] / own_med["node_exporter"],
            "rss_kib": {"start": rss_start, f"after_{step}": rss_mid,
                        f"after_{args.memory_scrapes}": rss_end, f"every_{step}": rss_samples},
            "rss_growth_after_warmup_ratio": rss_end / rss_mid if rss_mid else None,
            "memory_scrapes_per_second": args.memory_scrapes / mem_seconds,
            "concurrent": {"scrapers": args.concurrency, "seconds": args.seconds, "scrapes": sum(counts),
                           "errors": len(errors), "first_errors": errors[:5],
                           "p50_ms": all_lat[len(all_lat) // 2] * 1e3 if all_lat else None,
                           "p99_ms": all_lat[int(len(all_lat) * 0.99)] * 1e3 if all_lat else None,
                           "exporter_alive": fc_alive},
        }
        print(json.dumps(result, indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=2)
        ok = (result["latency_ratio_fabcheck_over_node_exporter"] <= 0.5 and not errors and fc_alive and
              (result["rss_growth_after_warmup_ratio"] or 2) < 1.1)
        print("goals: latency <= 0.5x node_exporter, RSS flat (<10% growth), 0 errors ->", "MET" if ok else "NOT MET",
              file=sys.stderr)
        return 0 if ok else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
