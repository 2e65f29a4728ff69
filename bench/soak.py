#!/usr/bin/env python3
"""Soak: `fabcheck agent` and `fabcheck exporter` under mixed legitimate and
hostile load for a while (default 10 minutes), run on demand, not in CI.

Legitimate clients keep asking what a coordinator and Prometheus ask (agent
/v1/health, /v1/info and POST /v1/node with the token; exporter /metrics) and
count every failure and the slowest answer. Hostile clients meanwhile hold
half-open and slowloris connections, send oversized headers, random bytes,
malformed JSON, wrong tokens, and vanish mid-request. RSS, open descriptors
and threads of both servers are sampled after a warm-up, every 30 s, and at
the end after the hostile load stops; the goal is flat (end within 20% + 8 MiB
of the start, the same descriptors and threads) with every legitimate request
served.

  bench/soak.py path/to/fabcheck [--seconds 600]
"""
import argparse
import os
import random
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
    return {"rss_mib": int(st["VmRSS"].split()[0]) / 1024, "threads": int(st["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


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
                r.read()
            ok = True
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
    agent = subprocess.Popen([a.fabcheck, "agent", "--listen", f"127.0.0.1:{agent_port}", "--token-file", token_file],
                             stdout=logs[0], stderr=subprocess.STDOUT)
    exporter = subprocess.Popen([a.fabcheck, "exporter", "--listen", f"127.0.0.1:{exporter_port}",
                                 "--kubelet-socket", "none", "--ethtool", "off"], stdout=logs[1],
                                stderr=subprocess.STDOUT)
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
        start = {n: usage(p.pid) for n, p in servers.items()}
        print(f"start: {start}", flush=True)
        stop = threading.Event()
        counts = {}
        threads = [threading.Thread(target=hostile, args=("127.0.0.1", port, stop, counts), daemon=True)
                   for port in (agent_port, agent_port, exporter_port, exporter_port)]
        for t in threads:
            t.start()
        t_end = time.monotonic() + a.seconds
        next_node = next_sample = time.monotonic()
        samples = []
        while time.monotonic() < t_end:
            legit.call(base_a + "/v1/health")
            legit.call(base_a + "/v1/info", token=token)
            legit.call(base_e + "/metrics")
            now = time.monotonic()
            if now >= next_node:
                legit.call(base_a + "/v1/node", data=b'{"snapshot": false}', token=token, timeout=60)
                next_node = now + 5
            if now >= next_sample:
                samples.append({n: usage(p.pid) for n, p in servers.items()})
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
        for e in legit.errors:
            print(f"  {e}")
        flat = True
        for n in servers:
            s, e = start[n], end[n]
            grew = e["rss_mib"] > s["rss_mib"] * 1.2 + 8 or e["fds"] > s["fds"] + 2 or e["threads"] > s["threads"] + 2
            print(f"{n:8}: RSS {s['rss_mib']:.1f} -> {e['rss_mib']:.1f} MiB, fds {s['fds']} -> {e['fds']}, "
                  f"threads {s['threads']} -> {e['threads']}{'  NOT FLAT' if grew else ''}")
            flat &= not grew
        alive = all(p.poll() is None for p in servers.values())
        ok = flat and alive and legit.failed == 0
        print("PASS: flat, both up, every legitimate request served" if ok else "FAIL")
        return 0 if ok else 1
    finally:
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
