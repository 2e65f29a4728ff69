#!/usr/bin/env python3
"""Writes a large NCCL job log as users paste them (for log_bench.sh).

About 1 M lines / 100 MB by default: 256 hosts x 8 ranks interleaved, Open
MPI and Slurm prefixes, NCCL timestamps and colour codes on some lines, channel
lines of every transport, proxy chatter, a few WARN lines (completion errors,
socket failures) and PyTorch watchdog lines, and one line cut mid-way every
10,000 lines.
"""
import random
import sys

def main():
    out = sys.argv[1]
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    rnd = random.Random(7)
    hosts = [f"gpu-node-{i:04d}" for i in range(256)]
    with open(out, "w") as f:
        for n in range(lines):
            h = rnd.randrange(len(hosts))
            host = hosts[h]
            local = rnd.randrange(8)
            rank = h * 8 + local
            pid = 10000 + rank
            prefix = f"{host}:{pid}:{pid + 7} [{local}] "
            k = n % 20
            if k < 9:
                peer = (rank + 1) % (len(hosts) * 8)
                ch = rnd.randrange(32)
                via = ["P2P/CUMEM/read", "NET/IB/%d/GDRDMA" % (local // 2), "SHM/direct/direct"][k % 3]
                direction = "[send] " if via.startswith("NET") else ""
                msg = f"Channel {ch:02d}/0 : {rank}[{local}] -> {peer}[{(local + 1) % 8}] {direction}via {via}"
            elif k < 14:
                msg = f"transport/net_ib.cc:{rnd.randrange(2000)} Ib Alloc Size 181568 pointer 0x7f4ff{rnd.randrange(1 << 20):05x}"
            elif k < 16:
                msg = f"comm 0x{rnd.randrange(1 << 40):x} rank {rank} nRanks {len(hosts) * 8} nNodes {len(hosts)} localRanks 8 localRank {local} MNNVL 0"
            elif k < 18:
                msg = f"NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [RO]; OOB ib0:10.{h // 256}.{h % 256}.1<0>"
            elif k == 18:
                msg = f"NCCL_IB_GID_INDEX set by environment to 3."
            else:
                msg = f"Connected all rings, use ring PXN 0 GDR 1"
            if n % 5000 == 0:
                line = f"{prefix}transport/net_ib.cc:2470 NCCL WARN NET/IB: Got completion from peer 10.0.{h % 256}.2<4000{local}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.{h % 256}.2 hca mlx5_0"
            elif n % 7919 == 0:
                line = f"[rank{rank}]:[E1224 13:23:05.48 ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600013 milliseconds before timing out."
            else:
                line = f"{prefix}NCCL INFO {msg}"
            style = n % 4
            if style == 1:
                line = f"[1,{rank}]<stdout>:" + line
            elif style == 2:
                line = f"{rank}: [2026-11-02 09:14:03] " + line
            elif style == 3:
                line = "\x1b[32m" + line + "\x1b[0m"
            if n % 10000 == 9999:
                line = line[: len(line) // 2]  # cut mid-way by another process
            f.write(line + "\n")

if __name__ == "__main__":
    main()
