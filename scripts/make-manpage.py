#!/usr/bin/env python3
"""Writes fabcheck(1) with help2man from the built binary's --help, plus a
COMMANDS section holding every command's (and subcommand's) --help, so the
man page teaches what `fabcheck COMMAND --help` does.

usage: scripts/make-manpage.py BINARY VERSION OUT.1
"""
import os
import re
import subprocess
import sys
import tempfile


def run_help(binary, args):
    p = subprocess.run([binary, *args, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", timeout=30)
    if p.returncode != 0:
        sys.exit(f"make-manpage: '{binary} {' '.join(args)} --help' exited {p.returncode}:\n{p.stdout}")
    return p.stdout


def subcommands(help_text):
    """Names listed under CLI11's 'Subcommands:' heading."""
    names, inside = [], False
    for line in help_text.splitlines():
        if re.match(r"^\s*subcommands:\s*$", line, re.IGNORECASE):
            inside = True
            continue
        if inside:
            m = re.match(r"^\s{1,6}([a-z][a-z0-9-]*)\b", line)
            if m:
                names.append(m.group(1))
            elif line.strip() and not line.startswith(" "):
                inside = False
    return names


def roff_literal(text):
    out = []
    for line in text.rstrip().splitlines():
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, version, out = sys.argv[1:]
    top = run_help(binary, [])
    sections = []
    for name in subcommands(top):
        text = run_help(binary, [name])
        sections.append(([name], text))
        for sub in subcommands(text):
            sections.append(([name, sub], run_help(binary, [name, sub])))
    if not sections:
        sys.exit("make-manpage: found no commands in the --help output (has its format changed?)")
    include = ["[COMMANDS]", "Every command also prints this with \\fBfabcheck\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR."]
    for path, text in sections:
        include += [".SS \"fabcheck %s\"" % " ".join(path), ".nf", roff_literal(text), ".fi"]
    include += ["[FILES]",
                ".TP", "/etc/fabcheck/agent.conf, /etc/fabcheck/exporter.conf",
                "Settings of the fabcheck\\-agent and fabcheck\\-exporter systemd services.",
                ".TP", "/etc/fabcheck/agent.token",
                "The agent's shared token (root, mode 0600), passed to the service as a systemd credential.",
                ".TP", "/usr/share/fabcheck/",
                "Prometheus alert rules, the Grafana dashboard, Kubernetes manifests and hardware profiles.",
                "[SEE ALSO]", "ib_write_bw(1), ibv_devinfo(1), ibstat(8); /usr/share/doc/fabcheck/"]
    with tempfile.NamedTemporaryFile("w", suffix=".h2m", delete=False) as f:
        f.write("\n".join(include) + "\n")
        inc = f.name
    try:
        subprocess.run(["help2man", "--no-info", "--no-discard-stderr", "--section=1",
                        "--name=verify and troubleshoot the RDMA network path of GPU clusters",
                        f"--version-string={version}", f"--include={inc}", f"--output={out}", binary],
                       check=True, timeout=120)
    finally:
        os.unlink(inc)


if __name__ == "__main__":
    main()
