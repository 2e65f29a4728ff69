#!/usr/bin/env python3
"""The go-live HTML in a real browser (Debian's chromium, headless).

Renders the example bundle with `fabcheck report`, then:
  * loads a copy with a probe script and reads back, from the rendered DOM:
    the ten checklist items, every SVG's laid-out size (all non-zero), the
    resources the page fetched (none), and console errors / uncaught errors (none);
  * records chromium's NetLog while loading the page itself and fails on any
    request that is not the file (http, https, ws...), apart from the
    browser's own update/clock/sign-in services;
  * takes a screenshot (kept in the build tree for people to look at).
Exits 77 (skipped, with the reason) when chromium is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

PROBE_HEAD = """<script>
window.__fabcheckErrors = [];
window.addEventListener('error', e => window.__fabcheckErrors.push('error: ' + (e.message || e.target && e.target.outerHTML)), true);
for (const level of ['error', 'warn']) {
  const orig = console[level];
  console[level] = (...a) => { window.__fabcheckErrors.push(level + ': ' + a.join(' ')); orig.apply(console, a); };
}
</script>"""

PROBE_BODY = """<script>
(() => {
  const r = {};
  r.items = [...document.querySelectorAll('[data-item]')].map(e => Number(e.dataset.item));
  r.statuses = [...document.querySelectorAll('[data-item]')].map(e => e.dataset.status);
  r.svgs = [...document.querySelectorAll('svg')].map(s => { const b = s.getBoundingClientRect(); return [b.width, b.height, s.getAttribute('aria-label')]; });
  r.resources = performance.getEntriesByType('resource').map(e => e.name);
  r.stylesheets = [...document.styleSheets].map(s => s.href).filter(Boolean);
  r.images = document.images.length;
  r.errors = window.__fabcheckErrors;
  r.title = document.title;
  const pre = document.createElement('pre');
  pre.id = 'fabcheck-probe';
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();
</script>"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, args, timeout=90):
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-default-apps", "--disable-sync",
            "--metrics-recording-only", "--user-data-dir=" + tempfile.mkdtemp(prefix="fabcheck-chromium-")]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)


def main():
    if len(sys.argv) != 5:
        print("usage: browser_test.py FABCHECK BUNDLE BASELINE OUTDIR")
        return 64
    fabcheck, bundle, baseline, outdir = sys.argv[1:]
    chromium = find_chromium()
    if not chromium:
        print("SKIP: chromium is not installed (apt-get install chromium; scripts/debian-packages.txt lists it)")
        return 77
    os.makedirs(outdir, exist_ok=True)
    report = os.path.join(outdir, "report.html")
    start = time.monotonic()
    rendered = subprocess.run([fabcheck, "report", bundle, "--baseline", baseline, "-o", report],
                              capture_output=True, text=True, timeout=60)
    if rendered.returncode != 2:  # the example is a no-go on purpose
        print("fabcheck report exited", rendered.returncode, rendered.stderr)
        return 1
    html = open(report, encoding="utf-8").read()
    failures = []

    # 1. The probe copy: DOM, layout, fetched resources, console.
    probe = os.path.join(outdir, "report-probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(html.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_BODY + "</body>", 1))
    dom = run_chromium(chromium, ["--window-size=1280,2000", "--dump-dom", "file://" + probe])
    m = re.search(r'<pre id="fabcheck-probe">(.*?)</pre>', dom.stdout, re.S)
    if not m:
        print("no probe result in the dumped DOM; chromium said:", dom.stderr[-2000:])
        return 1
    r = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    if sorted(r["items"]) != list(range(1, 11)):
        failures.append(f"checklist items in the DOM: {r['items']} (want 1..10)")
    for w, h, label in r["svgs"]:
        if not (w > 0 and h > 0):
            failures.append(f"SVG '{label}' has size {w}x{h}")
    if len(r["svgs"]) < 10:
        failures.append(f"only {len(r['svgs'])} SVG plots rendered")
    if r["resources"] or r["stylesheets"] or r["images"]:
        failures.append(f"the page fetched: {r['resources']} {r['stylesheets']} images={r['images']}")
    if r["errors"]:
        failures.append(f"console / page errors: {r['errors']}")

    # 2. The page itself under chromium's NetLog: nothing but the file itself.
    netlog = os.path.join(outdir, "netlog.json")
    run_chromium(chromium, ["--log-net-log=" + netlog, "--net-log-capture-mode=Default", "--dump-dom",
                            "file://" + os.path.abspath(report)])
    urls = set()
    try:
        for u in re.findall(r'"url":"([^"]+)"', open(netlog, encoding="utf-8", errors="replace").read()):
            urls.add(u)
    except OSError as e:
        failures.append(f"no NetLog written: {e}")
    # Chromium itself talks to its update, clock and sign-in services even in
    # headless mode; those hosts are the browser's, not the page's (the page
    # is checked for any URL at all by report_test's ReportHtml.SelfContained).
    own = ("google.com", "googleapis.com", "gstatic.com", "gvt1.com", "chromium.org")
    def browsers_own(u):
        host = re.sub(r"^[a-z]+://([^/:]+).*$", r"\1", u)
        return any(host == h or host.endswith("." + h) for h in own)
    leaving = sorted(u for u in urls if not u.startswith("file:") and not browsers_own(u))
    if leaving:
        failures.append(f"requests leaving the file: {leaving[:10]}")

    # 3. A screenshot for people (and proof the page paints).
    shot = os.path.join(outdir, "report.png")
    run_chromium(chromium, ["--window-size=1280,3200", "--hide-scrollbars", "--screenshot=" + shot,
                            "file://" + os.path.abspath(report)])
    if not os.path.exists(shot) or os.path.getsize(shot) < 20000:
        failures.append(f"screenshot missing or blank: {shot}")

    elapsed = time.monotonic() - start
    print(f"report.html {len(html) / 1024:.0f} KiB, {len(r['svgs'])} SVGs, items {r['statuses']}, "
          f"{len(urls)} URLs in the NetLog ({', '.join(sorted(urls))[:200]}), screenshot {shot}, {elapsed:.1f} s")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
