#!/usr/bin/env python3
"""Soak: `fabcheck agent` and `fabcheck exporter` under mixed legitimate and
hostile load for a while (default 10 minutes), run on demand, not in CI.

Legitimate clients keep asking what a coordinator and Prometheus ask (agent
/v1/health, /v1/info, POST /v1/node, a small POST /v1/test and POST /v1/kv
against the agent's own perf server, all with the token; exporter /metrics)
and count every failure and the slowest answer. Hostile clients meanwhile
hold half-open and slowloris connections, send oversized headers, random
bytes, malformed JSON, wrong tokens, and vanish mid-request; with the token
(a caller the agent trusts, asking for too much) they send thread-hungry
requests (POST /v1/kv with 64 targets x inflight 256, and 8 x 32 at the
bound), memory-hungry ones (POST /v1/test 4 streams x 1 GiB, /v1/kv with a
64 GiB pool), and YAML alias bombs in POST /v1/node's profile_yaml (the one
route that takes YAML). An impostor agent streaming endless answers is
pointed at by `fabcheck sweep`, whose peak memory and time are recorded. RSS,
open descriptors and threads of both servers are sampled after a warm-up,
every 30 s, and at the end after the hostile load stops; the goal is flat
from the steady state (the first sample two minutes into the hostile load) to
the end: anonymous memory (RssAnon) within 20% + 8 MiB, the same descriptors
and threads; the growth from the start is printed beside it. Every
legitimate request must be served and every hostile one refused.

  bench/soak.py path/to/fabcheck [--seconds 600]
"""
import argparse
import os
import json
import random
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def usage(pid):
    with open(f"/proc/{pid}/status") as f:
        st = dict(line.split(":", 1) for line in f if ":" in line)
    # RssAnon is the memory a server can run the node out of; VmRSS also counts
    # file pages of the binary and libraries, which grow as code paths are
    # first run (error paths under hostile load) and which the kernel reclaims.
    return {"rss_mib": int(st["VmRSS"].split()[0]) / 1024, "anon_mib": int(st["RssAnon"].split()[0]) / 1024,
            "threads": int(st["Threads"]), "fds": len(os.listdir(f"/proc/{pid}/fd"))}


class Legit:
    def __init__(self):
        self.ok = self.failed = 0
        self.slowest = 0.0
        self.errors = []
        self.lock = threading.Lock()

    def call(self, url, data=None, token=None, timeout=5):
        req = urllib.request.Request(url, data=data)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                body = r.read()
            ok = True
            # A test or transfer that answered with an error was not served.
            if url.endswith(("/v1/test", "/v1/kv")):
                answer = json.loads(body)
                errors = answer.get("errors") or [t["error"] for t in answer.get("results", []) if "error" in t]
                if errors:
                    ok, err = False, f"{url}: {errors[0]}"
        except Exception as e:  # noqa: BLE001 - every failure counts
            ok = False
            err = f"{url}: {e}"
        dt = time.monotonic() - t0
        with self.lock:
            self.slowest = max(self.slowest, dt)
            if ok:
                self.ok += 1
            else:
                self.failed += 1
                if len(self.errors) < 5:
                    self.errors.append(err)


def hostile(host, port, stop, counts):
    """One hostile client loop: picks a misbehaviour at random, forever."""
    held = []
    while not stop.is_set():
        kind = random.choice(["half-open", "slowloris", "big-header", "garbage", "bad-json", "bad-token", "vanish"])
        try:
            s = socket.create_connection((host, port), timeout=2)
            if kind == "half-open":
                held.append(s)  # says nothing
            elif kind == "slowloris":
                s.sendall(b"GET /v1/info HTTP/1.1\r\nHost: x\r\n")
                held.append(s)
            elif kind == "big-header":
                s.sendall(b"GET /v1/health HTTP/1.1\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
                s.close()
            elif kind == "garbage":
                s.sendall(os.urandom(random.randint(1, 4096)))
                s.close()
            elif kind == "bad-json":
                body = b"{\"profile_yaml\": [" * 50
                s.sendall(b"POST /v1/node HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                s.close()
            elif kind == "bad-token":
                s.sendall(b"GET /v1/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-token-123\r\n\r\n")
                s.recv(100)
                s.close()
            else:  # vanish mid-request
                s.sendall(b"POST /v1/node HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"snap")
                s.close()
            counts[kind] = counts.get(kind, 0) + 1
        except OSError:
            counts["refused"] = counts.get("refused", 0) + 1
        # Keep a few hundred hostile sockets open; drip one byte on slowloris ones.
        while len(held) > 150:
            held.pop(0).close()
        for h in held[-20:]:
            try:
                h.send(b"X")
            except OSError:
                pass
        time.sleep(0.01)
    for h in held:
        h.close()


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))


def greedy(base, token, perf_port, stop, counts, answers):
    # perf_port: a separate `perf serve` (with the token), so greedy transfers
    # never take the agent's own perf server from the legitimate tests.
    """A caller with the token asking for too much: each request must be refused
    (or end in an error the caller reads), never take the agent down."""
    kv_run = {"sizing": None, "inflight": 256, "requests": 4, "l3": False, "pool_bytes": 1 << 20}
    shapes = {
        "kv-threads": lambda: ("/v1/kv", {"run": dict(kv_run, inflight=256),
                                          "targets": [{"host": "127.0.0.1", "port": perf_port}] * 64}),
        "kv-threads-at-bound": lambda: ("/v1/kv", {"run": dict(kv_run, inflight=32),
                                                   "targets": [{"host": "127.0.0.1", "port": perf_port}] * 8}),
        "kv-pool": lambda: ("/v1/kv", {"run": dict(kv_run, inflight=1, pool_bytes=64 << 30),
                                       "targets": [{"host": "127.0.0.1", "port": perf_port}]}),
        "test-memory": lambda: ("/v1/test", {"peer": "127.0.0.1", "perf_port": perf_port, "streams": 4,
                                             "bw_size": 1 << 30, "bw_duration_s": 0.2, "latency": False,
                                             "mtu": False, "timeout_ms": 5000}),
        "yaml-alias-bomb": lambda: ("/v1/node", {"snapshot": False, "profile_yaml": ALIAS_BOMB}),
    }
    while not stop.is_set():
        kind = random.choice(list(shapes))
        path, body = shapes[kind]()
        if body.get("run", {}).get("sizing", 0) is None:
            body["run"]["sizing"] = answers["sizing"]
        req = urllib.request.Request(base + path, data=json.dumps(body).encode())
        req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read().decode(errors="replace")
            # 200 is right only where the answer carries the refusal per step.
            refused = kind in ("test-memory",) and "ceiling" in text or kind == "kv-threads-at-bound" or \
                kind == "yaml-alias-bomb"
            counts[kind + (" refused in the answer" if refused else " ANSWERED 200")] = \
                counts.get(kind + (" refused in the answer" if refused else " ANSWERED 200"), 0) + 1
        except urllib.error.HTTPError as e:
            counts[f"{kind} HTTP {e.code}"] = counts.get(f"{kind} HTTP {e.code}", 0) + 1
        except OSError as e:
            counts[f"{kind} no answer ({type(e).__name__})"] = counts.get(f"{kind} no answer ({type(e).__name__})", 0) + 1
        time.sleep(0.5)


def endless_agent(stop, port_box):
    """An impostor agent: every answer is a 200 whose body never ends."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)
    port_box.append(srv.getsockname()[1])
    chunk = b" " * 65536

    def serve(c):
        try:
            c.recv(65536)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[")
            while not stop.is_set():
                c.sendall(chunk)
        except OSError:
            pass
        finally:
            c.close()
    while not stop.is_set():
        try:
            c, _ = srv.accept()
        except OSError:
            continue
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    srv.close()


def coordinator_against_impostor(fabcheck, port, agent_port, token_file, results):
    """`fabcheck sweep` over the real agent and the impostor: it must end with
    an error, in bounded time and memory. (One address twice is refused as a
    usage error before any request, which would test nothing.)"""
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run([fabcheck, "sweep", "--agents", f"127.0.0.1:{agent_port},127.0.0.1:{port}", "--token-file",
                        token_file], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    dt = time.monotonic() - t0
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    results.append((p.returncode, dt, peak, p.stderr.decode(errors="replace").strip().splitlines()[-1:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fabcheck")
    ap.add_argument("--seconds", type=int, default=600)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fabcheck-soak-")
    token = "soak-" + os.urandom(12).hex()
    token_file = os.path.join(tmp, "token")
    with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(token + "\n")
    agent_port, exporter_port = free_port(), free_port()
    logs = [open(os.path.join(tmp, n), "w") for n in ("agent.log", "exporter.log")]
    # SOAK_AGENT_WRAPPER="heaptrack -o /tmp/agent" runs the agent under a memory profiler.
    wrapper = os.environ.get("SOAK_AGENT_WRAPPER", "").split()
    agent = subprocess.Popen(wrapper + [a.fabcheck, "agent", "--listen", f"127.0.0.1:{agent_port}", "--token-file", token_file],
                             stdout=logs[0], stderr=subprocess.STDOUT)
    exporter = subprocess.Popen([a.fabcheck, "exporter", "--listen", f"127.0.0.1:{exporter_port}",
                                 "--kubelet-socket", "none", "--ethtool", "off"], stdout=logs[1],
                                stderr=subprocess.STDOUT)
    greedy_perf_port = free_port()
    greedy_perf = subprocess.Popen([a.fabcheck, "perf", "serve", "--bind", "127.0.0.1", "--port", str(greedy_perf_port),
                                    "--max-clients", "16", "--token-file", token_file],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    servers = {"agent": agent, "exporter": exporter}
    try:
        base_a, base_e = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{exporter_port}"
        legit = Legit()
        for _ in range(100):
            try:
                urllib.request.urlopen(base_a + "/v1/health", timeout=1).read()
                urllib.request.urlopen(base_e + "/metrics", timeout=2).read()
                break
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.1)
        # Warm-up: a few of each legitimate request, then the baseline.
        for _ in range(3):
            legit.call(base_a + "/v1/node", data=b'{"snapshot": false}', token=token, timeout=60)
            legit.call(base_e + "/metrics")
        req = urllib.request.Request(base_a + "/v1/info")
        req.add_header("Authorization", "Bearer " + token)
        perf_port = json.load(urllib.request.urlopen(req, timeout=5))["perf_port"]
        # A tiny model's sizing (kv/sizing.h: 4 layers, 2 KV heads of 64, bf16, pages of 16 tokens, 256 tokens).
        sizing = {"model": {"name": "soak", "attention": "gqa", "layers": 4, "kv_heads": 2, "head_dim": 64,
                            "dtype": "bfloat16", "dtype_bytes": 2},
                  "tp": 1, "kv_heads_per_rank": 2, "page_tokens": 16, "tokens": 256, "bytes_per_token_per_layer": 512,
                  "page_bytes": 8192, "pages_per_layer": 16, "layer_bytes": 131072, "transfers_per_request": 64,
                  "notifications_per_request": 4, "bytes_per_request": 524288}
        test_body = json.dumps({"peer": "127.0.0.1", "perf_port": perf_port, "bw_size": 65536, "bw_duration_s": 0.2,
                                "lat_duration_s": 0.1, "mtu": False, "timeout_ms": 10000}).encode()
        kv_body = json.dumps({"run": {"sizing": sizing, "inflight": 2, "requests": 8, "l3": False},
                              "targets": [{"host": "127.0.0.1", "port": perf_port}]}).encode()
        for _ in range(2):  # warm the paths the soak exercises
            legit.call(base_a + "/v1/test", data=test_body, token=token, timeout=30)
            legit.call(base_a + "/v1/kv", data=kv_body, token=token, timeout=30)
        if legit.failed:
            print(f"warm-up failed: {legit.errors}")
        start = {n: usage(p.pid) for n, p in servers.items()}
        print(f"start: {start}", flush=True)
        stop = threading.Event()
        counts = {}
        answers = {"sizing": sizing}
        impostor_port = []
        threading.Thread(target=endless_agent, args=(stop, impostor_port), daemon=True).start()
        while not impostor_port:
            time.sleep(0.01)
        coordinator_runs = []
        threads = [threading.Thread(target=hostile, args=("127.0.0.1", port, stop, counts), daemon=True)
                   for port in (agent_port, agent_port, exporter_port, exporter_port)]
        threads += [threading.Thread(target=greedy, args=(base_a, token, greedy_perf_port, stop, counts, answers),
                                     daemon=True)]
        for t in threads:
            t.start()
        t_end = time.monotonic() + a.seconds
        next_node = next_sample = time.monotonic()
        samples, sample_times = [], []
        while time.monotonic() < t_end:
            legit.call(base_a + "/v1/health")
            legit.call(base_a + "/v1/info", token=token)
            legit.call(base_e + "/metrics")
            now = time.monotonic()
            if now >= next_node:
                legit.call(base_a + "/v1/node", data=b'{"snapshot": false}', token=token, timeout=60)
                legit.call(base_a + "/v1/test", data=test_body, token=token, timeout=30)
                legit.call(base_a + "/v1/kv", data=kv_body, token=token, timeout=30)
                next_node = now + 5
            if len(coordinator_runs) < (a.seconds - (t_end - now)) // 60 + 1 and not any(
                    t.name == "coordinator" and t.is_alive() for t in threading.enumerate()):
                threading.Thread(target=coordinator_against_impostor, name="coordinator",
                                 args=(a.fabcheck, impostor_port[0], agent_port, token_file, coordinator_runs), daemon=True).start()
            if now >= next_sample:
                samples.append({n: usage(p.pid) for n, p in servers.items()})
                sample_times.append(a.seconds - (t_end - now))
                print(f"t+{a.seconds - (t_end - now):5.0f} s: {samples[-1]}  legit ok {legit.ok} failed "
                      f"{legit.failed}", flush=True)
                next_sample = now + 30
            time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join(timeout=10)
        time.sleep(6)  # idle connections time out, workers return
        end = {n: usage(p.pid) for n, p in servers.items()}
        print(f"end:   {end}")
        print(f"hostile clients: {sum(counts.values())} ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})")
        print(f"legitimate requests: {legit.ok} served, {legit.failed} failed, slowest {legit.slowest * 1000:.0f} ms")
        for t in threading.enumerate():
            if t.name == "coordinator":
                t.join(timeout=300)
        worst_rss = max((r[2] for r in coordinator_runs), default=0)
        worst_time = max((r[1] for r in coordinator_runs), default=0)
        print(f"sweep against an endless impostor: {len(coordinator_runs)} runs, exit codes "
              f"{sorted(set(r[0] for r in coordinator_runs))}, slowest {worst_time:.1f} s, peak RSS {worst_rss:.0f} MiB"
              f"{' (' + coordinator_runs[0][3][0] + ')' if coordinator_runs and coordinator_runs[0][3] else ''}")
        bad_greedy = [k for k in counts if "ANSWERED 200" in k or "no answer" in k]
        coordinator_ok = (all(r[0] not in (0, 64) for r in coordinator_runs) and worst_rss < 512
                          and bool(coordinator_runs))
        for e in legit.errors:
            print(f"  {e}")
        # The first minutes of hostile load fill the servers' worker stacks,
        # allocator arenas and file pages once: flatness is judged from the
        # first sample at or after two minutes (the steady state) to the end;
        # the growth from the start is printed too.
        steady_index = next((i for i, t in enumerate(sample_times) if t >= 120), None)
        steady = samples[steady_index] if steady_index is not None else start
        print(f"steady state from t+{sample_times[steady_index] if steady_index is not None else 0:.0f} s: {steady}")
        flat = True
        for n in servers:
            s, e = steady[n], end[n]
            # Memory from the steady state; descriptors and threads from the start
            # (both idle: during the load they hold the hostile connections).
            grew = (e["anon_mib"] > s["anon_mib"] * 1.2 + 8 or e["fds"] > start[n]["fds"] + 2
                    or e["threads"] > start[n]["threads"] + 2)
            print(f"{n:8}: from the start anonymous RSS {start[n]['anon_mib']:.1f} -> {e['anon_mib']:.1f} MiB; in the "
                  f"steady state {s['anon_mib']:.1f} -> {e['anon_mib']:.1f} MiB (all RSS {s['rss_mib']:.1f} -> "
                  f"{e['rss_mib']:.1f}), fds {start[n]['fds']} -> {e['fds']}, threads {start[n]['threads']} -> {e['threads']}"
                  f"{'  NOT FLAT' if grew else ''}")
            flat &= not grew
        alive = all(p.poll() is None for p in servers.values())
        ok = flat and alive and legit.failed == 0 and not bad_greedy and coordinator_ok
        if bad_greedy:
            print(f"greedy requests not refused: {bad_greedy}")
        print("PASS: flat, both up, every legitimate request served, every greedy one refused, the coordinator "
              "bounded" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        greedy_perf.terminate()
        for p in servers.values():
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        for f in logs:
            f.close()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
