#!/usr/bin/env python3
"""Builds formats.tsv, the list of NCCL's WARN messages fabcheck's catalogue knows,
from a git checkout of NVIDIA/nccl (read with `git show`, nothing is copied into
fabcheck but the message text NCCL prints).

    data/nccl-messages/extract.py /path/to/nccl.git > data/nccl-messages/formats.tsv

For every release tag given (default: the newest tag of each minor release from
2.5 to the newest) it reads every WARN(...) call of src/, takes its format
(string literals joined; a macro argument or variable becomes %s), the source
file and so the subsystem, and assigns the family whose `keywords` (families.json)
match first, else the subsystem's own "<subsystem>.other" family. Columns:

    format  family  subsystem  file  first_release  last_release  sites_at_newest

sites_at_newest counts the WARN call sites of that format in that file in the
newest release given (0: the message is gone from it); the coverage figures of
docs/diagnose.md are computed from that column.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Source file -> subsystem, first match wins (paths relative to src/).
SUBSYSTEMS = [
    (r"^bootstrap\.cc$", "bootstrap"),
    (r"^misc/socket\.cc$|^transport/net_socket\.cc$|^include/socket\.h$", "socket"),
    (r"^transport/net_ib|^misc/ibvwrap\.cc$|^misc/mlx5dvwrap\.cc$|^include/ibvwrap\.h$|^include/mlx5", "net/ib"),
    (r"^plugin/|^net\.cc$|^misc/net|^include/net\.h$|^nccl_net|^include/plugin", "plugin"),
    (r"^proxy\.cc$", "proxy"),
    (r"^transport/nvls\.cc$|^transport/coll_net\.cc$|^transport/p2p\.cc$|^transport/shm\.cc$|^transport/net\.cc$|"
     r"^transport\.cc$|^transport/generic\.cc$|^transport/profiler\.cc$", "transport"),
    (r"^init\.cc$|^init_nvtx\.cc$|^mnnvl\.cc$|^channel\.cc$", "init"),
    (r"^enqueue\.cc$|^group\.cc$|^collectives|^scheduler/", "enqueue"),
    (r"^ras/", "ras"),
    (r"^graph/", "topology"),
    (r"^include/checks\.h$|^misc/cudawrap\.cc$|^include/cudawrap\.h$|^misc/nvmlwrap\.cc$|^misc/strongstream\.cc$", "cuda"),
    (r"^register/|^allocator\.cc$|^mem_manager\.cc$|^include/alloc\.h$|^misc/gdrwrap\.cc$|^include/gdrwrap\.h$", "memory"),
    (r"", "other"),
]

CONVERSION = re.compile(r"%[-+ #0]*(\*|\d+)?(\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn%]")


def subsystem_of(path):
    for pattern, name in SUBSYSTEMS:
        if re.search(pattern, path):
            return name
    return "other"


def read_literal(text, i):
    """Reads a C string literal starting at text[i] == '"'; returns (value, index after)."""
    out = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            out.append({"n": "\n", "t": " ", '"': '"', "\\": "\\", "'": "'"}.get(n, n))
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    return "".join(out), i


def first_argument(text, i):
    """The format of a WARN( call whose '(' is at text[i-1]: literals joined, anything else %s."""
    parts = []
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            value, i = read_literal(text, i)
            parts.append(value)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        elif c.isalpha() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            # PRIx64-style macros inside a format are conversions too.
            parts.append("%s" if not word.startswith("PRI") else "%d")
            i = j
            continue
        i += 1
    return "".join(parts).strip()


def warn_formats(source):
    # Drop comments; keep strings.
    source = re.sub(r"//[^\n]*", "", source)
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    for m in re.finditer(r"(?<![A-Za-z_])WARN\s*\(", source):
        if source[max(0, m.start() - 8):m.start()].endswith("define "):
            continue
        fmt = first_argument(source, m.end())
        # A log line holds what NCCL printed up to its first newline; the rest is another line.
        fmt = fmt.strip("\n").split("\n")[0]
        fmt = re.sub(r"\s+", " ", fmt).strip()
        yield fmt


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True, text=True,
                          errors="replace").stdout


def release_tags(repo):
    tags = [t for t in git(repo, "tag").split() if re.match(r"^v2\.\d+\.\d+-\d+$", t)]
    key = lambda t: tuple(int(x) for x in re.findall(r"\d+", t))
    newest = {}
    for t in sorted(tags, key=key):
        minor = key(t)[:2]
        if minor >= (2, 5):
            newest[minor] = t
    return [newest[k] for k in sorted(newest)]


def family_of(fmt, subsystem, families):
    for fam in families:
        if fam.get("subsystems") and subsystem not in fam["subsystems"]:
            continue
        for kw in fam.get("keywords", []):
            if re.search(kw, fmt):
                return fam["id"]
    return subsystem + ".other"


def main():
    repo = sys.argv[1]
    tags = sys.argv[2:] or release_tags(repo)
    with open(os.path.join(HERE, "families.json")) as f:
        families = json.load(f)["families"]
    rows = {}  # (format, file) -> [first, last, sites_newest]
    for tag in tags:
        files = [p for p in git(repo, "ls-tree", "-r", "--name-only", tag, "src").split("\n")
                 if re.search(r"\.(cc|h|cu|cuh)$", p) and "/os/windows" not in p]
        for path in files:
            rel = path[len("src/"):]
            text = git(repo, "show", f"{tag}:{path}")
            if "WARN" not in text:
                continue
            for fmt in warn_formats(text):
                if not fmt:
                    continue
                row = rows.setdefault((fmt, rel), [tag, tag, 0])
                row[1] = tag
                if tag == tags[-1]:
                    row[2] += 1
    print("# format\tfamily\tsubsystem\tfile\tfirst_release\tlast_release\tsites_at_newest")
    print(f"# extracted by data/nccl-messages/extract.py from NVIDIA/nccl {tags[0]} .. {tags[-1]}")
    for (fmt, rel), (first, last, sites) in sorted(rows.items(), key=lambda kv: (subsystem_of(kv[0][1]), kv[0][1], kv[0][0])):
        sub = subsystem_of(rel)
        fmt = fmt.replace("\t", " ")
        print(f"{fmt}\t{family_of(fmt, sub, families)}\t{sub}\t{rel}\t{first}\t{last}\t{sites}")


if __name__ == "__main__":
    main()
