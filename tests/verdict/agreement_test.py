#!/usr/bin/env python3
"""The verdict-agreement test (docs/verdicts.md).

Runs fabcheck as a user would -- doctor, report, diagnose, nccl-log, and a
ladder over two loopback agents serving a captured GPU node without RDMA --
over every capture, bundle and NCCL log in tests/data, and checks that the
commands name the same failures (same IDs, same members), that exit codes
follow the findings, that a node without RDMA fails at L1 with its cause,
and that unknowns are grouped, counted once per capture and gate with
--strict.

usage: agreement_test.py FABCHECK SOURCE_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
    return cond


def run(fabcheck, *args, timeout=120):
    p = subprocess.run([fabcheck, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_json(fabcheck, *args):
    rc, out, err = run(fabcheck, *args, "--json")
    try:
        return rc, json.loads(out)
    except json.JSONDecodeError:
        check(False, "%s: not JSON (rc %d): %s %s" % (" ".join(args), rc, out[:200], err[:300]))
        return rc, {}


def expected_exit(findings, strict=False):
    sev = {f["severity"] for f in findings}
    if "fail" in sev:
        return 2
    if "warn" in sev or (strict and "unknown" in sev):
        return 1
    return 0


def key_set(findings, severities, id_key="id"):
    return {(f[id_key], f.get("member", "")) for f in findings if f["severity"] in severities}


def no_non_rdma_device(label, docs):
    text = json.dumps(docs)
    for bad in ("--device lo", "--device eth", "--device virtio"):
        check(bad not in text, "%s suggests a non-RDMA device (%s)" % (label, bad))


def catalog_ids(fabcheck):
    rc, cat = run_json(fabcheck, "explain", "--list")
    check(rc == 0 and cat.get("schema") == "fabcheck.catalog/v1", "explain --list --json works")
    return {e["id"] for e in cat.get("entries", [])}


def doctor_vs_diagnose(fabcheck, src, work, ids):
    profiles = [None] + sorted(glob.glob(os.path.join(src, "profiles", "*.yaml")))[:3]
    for capture in sorted(glob.glob(os.path.join(src, "tests", "data", "captures", "*.tar.gz"))):
        for profile in profiles:
            args = ["doctor", "--sysroot", capture] + (["--profile", profile] if profile else [])
            label = " ".join(os.path.relpath(a, src) if os.path.exists(a) else a for a in args)
            rc, doc = run_json(fabcheck, *args)
            if not doc:
                continue
            findings = doc["findings"]
            check(rc == expected_exit(findings), "%s: exit %d, its findings say %d" % (label, rc, expected_exit(findings)))
            unknown_ids = [f["id"] for f in findings if f["severity"] == "unknown"]
            check(len(unknown_ids) == len(set(unknown_ids)), "%s: one unknown line per check, got %s" % (label, unknown_ids))
            for f in findings:
                check(f["id"] in ids, "%s: finding ID %s is not in the catalog" % (label, f["id"]))
            no_non_rdma_device(label, doc)
            # --strict gates on unknowns.
            if unknown_ids:
                rc_strict, _, _ = run(fabcheck, *args, "--strict")
                check(rc_strict == max(rc, 1), "%s --strict: exit %d with %d unknowns" % (label, rc_strict, len(unknown_ids)))
            # diagnose of the saved doctor JSON names the same failures and warnings.
            saved = os.path.join(work, "doctor-%d.json" % len(os.listdir(work)))
            with open(saved, "w") as f:
                json.dump(doc, f)
            drc, diag = run_json(fabcheck, "diagnose", saved)
            if not diag:
                continue
            want = {(f["id"], doc["hostname"]) for f in findings if f["severity"] in ("fail", "warn")}
            got = key_set(diag["findings"], ("fail", "warn"), "rule")
            check(want <= got, "diagnose of %s misses %s" % (label, sorted(want - got)))
            check(drc >= min(rc, 2) and (drc == 2) == (rc == 2),
                  "diagnose of %s exits %d, doctor %d" % (label, drc, rc))


def no_rdma_node(fabcheck, src):
    h200 = os.path.join(src, "tests", "data", "captures", "h200-1gpu.tar.gz")
    rc, doc = run_json(fabcheck, "doctor", "--sysroot", h200)
    by_id = {}
    for f in doc.get("findings", []):
        by_id.setdefault(f["id"], []).append(f)
    none = by_id.get("rdma.none", [{}])[0]
    check(rc == 2, "h200 (GPU, no RDMA device): doctor exits %d, not 2" % rc)
    check(none.get("severity") == "fail" and none.get("group") == "L1", "h200: rdma.none fails at L1: %s" % none)
    check("no usable RDMA device" in none.get("message", ""), "h200: rdma.none names the cause: %s" % none.get("message"))
    check(doc.get("summary", {}).get("first_failing_rung") == "L1", "h200: first failing rung L1")
    ib = by_id.get("nccl.ib-disabled", [{}])[0]
    check(ib.get("severity") not in ("pass", None), "h200: nccl.ib-disabled does not pass: %s" % ib)
    # The capture predates the host checks: said once, with the count.
    rc_text, text, _ = run(fabcheck, "doctor", "--sysroot", h200)
    check(text.count("re-take it with `fabcheck snapshot` for a full check") == 1,
          "h200 text: the older capture is noted once")
    check(text.count(h200) <= 2, "h200 text: the capture path is not repeated per finding (%d times)" % text.count(h200))
    # Only an explicit TCP intent makes it info.
    rc_tcp, tcp = run_json(fabcheck, "doctor", "--sysroot", h200, "--expect-transport", "tcp")
    tcp_none = [f for f in tcp.get("findings", []) if f["id"] == "rdma.none"]
    check(tcp_none and tcp_none[0]["severity"] == "info", "h200 --expect-transport tcp: rdma.none is info")
    check(rc_tcp != 2 or any(f["severity"] == "fail" and f["id"] != "rdma.none" for f in tcp["findings"]),
          "h200 --expect-transport tcp: no failure from rdma.none")


def bundles(fabcheck, src, work, ids):
    base = os.path.join(src, "tests", "data", "bundles")
    cases = []
    for name in sorted(os.listdir(base)):
        cases.append((name, os.path.join(base, name)))
        packed = os.path.join(work, name + "-with-folder.tar.gz")
        with tarfile.open(packed, "w:gz") as tar:
            tar.add(os.path.join(base, name), arcname=name)
        cases.append((name + " packed with its folder", packed))
    for label, path in cases:
        rrc, rep = run_json(fabcheck, "report", path, "--format", "json")
        if not check(rep.get("schema") == "fabcheck.report/v1", "report %s reads the bundle (rc %d)" % (label, rrc)):
            continue
        findings = rep["findings"]
        for f in findings:
            check(f["id"] in ids, "report %s: finding ID %s is not in the catalog" % (label, f["id"]))
        failing_items = {i["id"] for i in rep["checklist"] if i["status"] == "fail"}
        check(failing_items == {f["id"] for f in findings if f["id"].startswith("golive.") and f["severity"] == "fail"},
              "report %s: every failing item is a finding" % label)
        want_rc = 2 if not rep["go"] else expected_exit(findings)
        check(rrc == want_rc, "report %s exits %d, its findings say %d" % (label, rrc, want_rc))
        drc, diag = run_json(fabcheck, "diagnose", path)
        got = key_set(diag.get("findings", []), ("fail",), "rule")
        want = key_set(findings, ("fail",))
        check(want <= got, "diagnose %s misses the report's failures %s" % (label, sorted(want - got)))
        check((drc == 2) == (rrc == 2), "diagnose %s exits %d, report %d" % (label, drc, rrc))
        no_non_rdma_device("diagnose " + label, diag)


def logs(fabcheck, src):
    for log in sorted(glob.glob(os.path.join(src, "tests", "data", "nccl-logs", "**", "*.log"), recursive=True)):
        label = os.path.relpath(log, src)
        nrc, nl = run_json(fabcheck, "nccl-log", log)
        drc, diag = run_json(fabcheck, "diagnose", log)
        if not nl or not diag:
            continue
        want = {f["id"] for f in nl.get("findings", []) if f["severity"] == "fail"}
        got = {d["rule"] for d in diag.get("findings", []) if d["severity"] == "fail"}
        check(want <= got, "%s: diagnose misses nccl-log's failures %s" % (label, sorted(want - got)))
        check((nrc == 2) == (drc == 2), "%s: nccl-log exits %d, diagnose %d" % (label, nrc, drc))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ladder_no_rdma(fabcheck, src, work):
    """Two agents on loopback serving the no-RDMA GPU capture: the ladder fails L1L2.node and
    every command names rdma.none on both members."""
    h200 = os.path.join(src, "tests", "data", "captures", "h200-1gpu.tar.gz")
    token = os.path.join(work, "token")
    with open(token, "w") as f:
        f.write("agreement-test-token\n")
    os.chmod(token, 0o600)
    agents, procs = [], []
    try:
        for name in ("gpu-a", "gpu-b"):
            port = free_port()
            log = open(os.path.join(work, name + ".log"), "w")
            procs.append(subprocess.Popen([fabcheck, "agent", "--listen", "127.0.0.1:%d" % port, "--token-file", token,
                                           "--perf-port", "0", "--name", name, "--sysroot", h200],
                                          stdout=log, stderr=log))
            agents.append("127.0.0.1:%d" % port)
        deadline = time.time() + 30
        for a in agents:
            host, port = a.split(":")
            while time.time() < deadline:
                try:
                    socket.create_connection((host, int(port)), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
        out = os.path.join(work, "no-rdma-bundle")
        shutil.rmtree(out, ignore_errors=True)
        lrc, lout, lerr = run(fabcheck, "ladder", "--agents", ",".join(agents), "--token-file", token,
                              "--rungs", "L1-L3", "--output", out, timeout=240)
        if not check(os.path.exists(os.path.join(out, "manifest.json")),
                     "ladder over two no-RDMA agents wrote a bundle (rc %d): %s" % (lrc, lerr[-600:])):
            return
        with open(os.path.join(out, "manifest.json")) as f:
            man = json.load(f)
        check(lrc == 2, "ladder over no-RDMA GPU members exits %d, not 2" % lrc)
        check(man["verdict"]["first_failing_rung"] == "L1L2.node",
              "ladder fails first at L1L2.node, not %s" % man["verdict"]["first_failing_rung"])
        node = [r for r in man["rungs"] if r["id"] == "L1L2.node"][0]
        members = {m["id"] for m in man["members"]}
        named = {f.get("member") for f in node["findings"] if f["id"] == "rdma.none" and f["severity"] == "fail"}
        check(named == members, "L1L2.node names rdma.none on every member: %s of %s" % (named, members))
        rrc, rep = run_json(fabcheck, "report", out, "--format", "json")
        items = {i["id"]: i["status"] for i in rep.get("checklist", [])}
        check(items.get("golive.roce-consistency") == "fail", "report: item 5 fails without RDMA (%s)" % items.get("golive.roce-consistency"))
        check(items.get("golive.fabric-choice") == "fail", "report: item 1 fails without RDMA (%s)" % items.get("golive.fabric-choice"))
        drc, diag = run_json(fabcheck, "diagnose", out)
        got = key_set(diag.get("findings", []), ("fail",), "rule")
        want = key_set(rep.get("findings", []), ("fail",))
        check(want <= got, "diagnose of the no-RDMA bundle misses %s" % sorted(want - got))
        check({("rdma.none", m) for m in members} <= got, "diagnose names rdma.none on both members")
        no_non_rdma_device("no-RDMA bundle diagnose", diag)
        no_non_rdma_device("no-RDMA bundle report", rep)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 64
    fabcheck, src, work = sys.argv[1:]
    if not os.access(fabcheck, os.X_OK):
        print("SKIP: %s is not built" % fabcheck)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ids = catalog_ids(fabcheck)
    doctor_vs_diagnose(fabcheck, src, work, ids)
    no_rdma_node(fabcheck, src)
    bundles(fabcheck, src, work, ids)
    logs(fabcheck, src)
    ladder_no_rdma(fabcheck, src, work)
    if FAILURES:
        print("\n%d disagreement(s)" % len(FAILURES))
        return 1
    print("every command names the same failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
