#!/usr/bin/env python3
"""Builds fabcheck's inventory fixture sysroots from the descriptions below.

Usage: make_fixtures.py OUTPUT_DIR [NAME...]
Writes OUTPUT_DIR/<name>/ for each fixture (all when no NAME is given):
  dgx-h100  2 sockets, 8 H100 GPUs, 8 ConnectX-7 400G InfiniBand NICs each
            behind its GPU's PCIe switch, 2 RoCE Ethernet ports, 4 NVSwitches
  roce      1 socket, dual-port ConnectX-6 Dx RoCE, GID tables mixing RoCE
            v1/v2, IPv4/IPv6 and a VLAN netdev (NCCL's GID is 5, not 3)
  broken    2 sockets, 4 GPUs, 2 NICs only on socket 0 (GPU2/3 reach them
            across sockets), a port DOWN/Polling, a NIC trained at Gen4 x8,
            files missing, empty, unreadable, without trailing newline,
            reading 'N/A (no PMA)', and garbage

The trees are laid out as the kernel lays out sysfs: devices under
/sys/devices/pciDDDD:BB/<bridge>/.../<function>, with /sys/bus/pci/devices,
/sys/class/infiniband and /sys/class/net as relative symlinks into them.
Non-file data (IP addresses, NVML and libibverbs answers) goes where
`fabcheck snapshot` puts it: /fabcheck/*.json.
"""
import json
import os
import shutil
import sys

# ConnectX tables have 255 slots (unused ones read as zeros); 32 keep the
# fixtures small and the tests fast, and the readers do not depend on the length.
GID_TABLE_LEN = 32
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


class Node:
    def __init__(self, root):
        self.root = root
        self.faults = {}  # sysfs path -> ("missing"|"empty"|"unreadable"|"nonl"|"text", value)
        self.addresses = {}

    # -- low level -----------------------------------------------------------
    def write(self, path, content, newline=True):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        fault = self.faults.get(path)
        if fault:
            kind, value = fault
            if kind == "missing":
                return
            if kind == "empty":
                content, newline = "", False
            elif kind == "unreadable":
                # root reads any file regardless of mode, so a directory in
                # place of the file is the portable way to make read() fail (EISDIR)
                os.makedirs(full, exist_ok=True)
                return
            elif kind == "nonl":
                newline = False
            elif kind == "text":
                content, newline = value, False
        with open(full, "w") as f:
            f.write(str(content) + ("\n" if newline and content != "" else ""))

    def link(self, path, target):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.symlink(target, full)

    def rel(self, from_dir, to_path):
        return os.path.relpath(to_path, from_dir)

    # -- PCI ----------------------------------------------------------------
    def pci(self, path, vendor, device, cls, numa, cpus, speed="32.0 GT/s PCIe", width=16,
            max_speed="32.0 GT/s PCIe", max_width=16, driver=None, subsys=("0x0000", "0x0000")):
        """path: list of BDFs from the root port down to the function, after the host bridge."""
        host, bdfs = path[0], path[1:]
        d = "/sys/devices/" + host
        for i, bdf in enumerate(bdfs):
            d += "/" + bdf
            if not os.path.exists(self.root + d + "/vendor"):
                is_fn = i == len(bdfs) - 1
                self.write(d + "/vendor", vendor if is_fn else "0x1000")
                self.write(d + "/device", device if is_fn else "0xc030")
                self.write(d + "/class", cls if is_fn else "0x060400")
                self.write(d + "/numa_node", numa)
                self.write(d + "/local_cpulist", cpus)
                self.write(d + "/current_link_speed", speed if is_fn else "32.0 GT/s PCIe")
                self.write(d + "/max_link_speed", max_speed if is_fn else "32.0 GT/s PCIe")
                self.write(d + "/current_link_width", width if is_fn else 16)
                self.write(d + "/max_link_width", max_width if is_fn else 16)
                if is_fn:
                    self.write(d + "/subsystem_vendor", subsys[0])
                    self.write(d + "/subsystem_device", subsys[1])
                    if driver:
                        self.link(d + "/driver", self.rel(d, "/sys/bus/pci/drivers/" + driver))
                    # Files inventory must never read (side effects, or slow):
                    # present as traps, filled with a marker the tests look for.
                    self.write(d + "/config", "MUST-NOT-BE-READ")
                    self.write(d + "/vpd", "MUST-NOT-BE-READ")
                self.link("/sys/bus/pci/devices/" + bdf, self.rel("/sys/bus/pci/devices", d))
        return d

    # -- RDMA + netdev --------------------------------------------------------
    def netdev(self, name, pci_dir=None, mtu=1500, operstate="up", carrier=1, speed=None, mac="00:00:00:00:00:00",
               type_=1, dev_port=0, addresses=(), vlan=None):
        d = (pci_dir + "/net/" + name) if pci_dir else "/sys/devices/virtual/net/" + name
        self.write(d + "/mtu", mtu)
        self.write(d + "/operstate", operstate)
        if carrier is not None:
            self.write(d + "/carrier", carrier)
        if speed is not None:
            self.write(d + "/speed", speed)
        self.write(d + "/address", mac)
        self.write(d + "/type", type_)
        self.write(d + "/dev_port", dev_port)
        if pci_dir:
            self.link(d + "/device", self.rel(d, pci_dir))
        if vlan:
            parent, vid = vlan
            self.link(d + "/lower_" + parent, "../" + parent)
            self.vlans.append((name, vid, parent))
        self.link("/sys/class/net/" + name, self.rel("/sys/class/net", d))
        self.addresses[name] = [{"family": f, "address": a, "prefix_len": p} for f, a, p in addresses]
        return d

    def rdma(self, name, pci_dir, fw="28.39.1002", hca="MT4129", board="MT_0000000838", guid="0000:0000:0000:0000",
             ports=()):
        d = pci_dir + "/infiniband/" + name
        self.write(d + "/node_type", "1: CA")
        self.write(d + "/node_guid", guid)
        self.write(d + "/sys_image_guid", guid)
        self.write(d + "/fw_ver", fw)
        self.write(d + "/hca_type", hca)
        self.write(d + "/hw_rev", "0x0")
        self.write(d + "/board_id", board)
        self.link(d + "/device", self.rel(d, pci_dir))
        self.link("/sys/class/infiniband/" + name, self.rel("/sys/class/infiniband", d))
        for num, port in enumerate(ports, start=1):
            p = d + "/ports/%d" % num
            self.write(p + "/state", port.get("state", "4: ACTIVE"))
            self.write(p + "/phys_state", port.get("phys", "5: LinkUp"))
            self.write(p + "/rate", port.get("rate", "400 Gb/sec (4X NDR)"))
            self.write(p + "/link_layer", port["ll"])
            self.write(p + "/lid", port.get("lid", "0x0"))
            self.write(p + "/sm_lid", port.get("sm_lid", "0x0"))
            self.write(p + "/cap_mask", "0x00010000")
            gids = port.get("gids", [])
            for i in range(GID_TABLE_LEN):
                self.write(p + "/gids/%d" % i, gids[i][0] if i < len(gids) else ZERO_GID)
            for i, (gid, gtype, ndev) in enumerate(gids):
                if gtype:
                    self.write(p + "/gid_attrs/types/%d" % i, gtype)
                if ndev:
                    self.write(p + "/gid_attrs/ndevs/%d" % i, ndev)
        return d

    def numa(self, nodes):
        for i, cpus in enumerate(nodes):
            self.write("/sys/devices/system/node/node%d/cpulist" % i, cpus)
        self.write("/sys/devices/system/node/online", "0-%d" % (len(nodes) - 1))

    def finish(self, hostname, kernel, verbs=None, nvml=None):
        self.write("/proc/sys/kernel/hostname", hostname)
        self.write("/proc/sys/kernel/osrelease", kernel)
        if self.vlans:
            lines = ["VLAN Dev name\t | VLAN ID", "Name-Type: VLAN_NAME_TYPE_RAW_PLUS_VID_NO_PAD"]
            lines += ["%-15s| %d  | %s" % v for v in self.vlans]
            self.write("/proc/net/vlan/config", "\n".join(lines))
        os.makedirs(self.root + "/fabcheck", exist_ok=True)
        with open(self.root + "/fabcheck/addresses.json", "w") as f:
            json.dump({"interfaces": self.addresses}, f, indent=1, sort_keys=True)
        if verbs is not None:
            with open(self.root + "/fabcheck/verbs.json", "w") as f:
                f.write(verbs if isinstance(verbs, str) else json.dumps(verbs, indent=1))
        if nvml is not None:
            with open(self.root + "/fabcheck/nvml.json", "w") as f:
                f.write(nvml if isinstance(nvml, str) else json.dumps(nvml, indent=1))


def ipv4_gid(ip):
    a, b, c, d = (int(x) for x in ip.split("."))
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % (a, b, c, d)


def ipv6_gid(groups):
    return ":".join("%04x" % g for g in groups)


def mac_gid(mac):
    b = [int(x, 16) for x in mac.split(":")]
    eui = [b[0] ^ 2, b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]]
    return "fe80:0000:0000:0000:%02x%02x:%02x%02x:%02x%02x:%02x%02x" % tuple(eui)


def ipoib_mac(guid):
    """20-byte IPoIB hardware address: QPN flags, fe80 subnet prefix, port GUID."""
    h = guid.replace(":", "")
    return "00:00:10:49:fe:80:00:00:00:00:00:00:" + ":".join(h[i:i + 2] for i in range(0, 16, 2))


def ib_gid(guid):
    return "fe80:0000:0000:0000:" + guid


def roce_gids(entries):
    """entries: (gid, netdev) pairs; each gets a RoCE v1 and a RoCE v2 slot, as mlx5 does."""
    out = []
    for gid, ndev in entries:
        out.append((gid, "IB/RoCE v1", ndev))
        out.append((gid, "RoCE v2", ndev))
    return out


SOCKET_CPUS = ["0-55,112-167", "56-111,168-223"]


def dgx_h100(root, broken=False):
    n = Node(root)
    n.vlans = []
    n.numa(SOCKET_CPUS)
    # Host bridge bus of each GPU/NIC pair: root port HB:01.0 -> switch
    # upstream (HB+1):00.0 -> downstream (HB+2):00.0 (NIC at HB+3) and
    # (HB+2):01.0 (GPU at HB+6), as on DGX H100 (NICs 18, 40, ... GPUs 1b, 43, ...).
    hosts = [0x15, 0x3d, 0x4c, 0x5b, 0x97, 0xbd, 0xcb, 0xd9]
    gpus = []
    for i, hb in enumerate(hosts):
        sock = 0 if i < 4 else 1
        cpus = SOCKET_CPUS[sock]
        rp = "0000:%02x:01.0" % hb
        up = "0000:%02x:00.0" % (hb + 1)
        nic_bdf, gpu_bdf = "0000:%02x:00.0" % (hb + 3), "0000:%02x:00.0" % (hb + 6)
        nic_dir = n.pci(["pci0000:%02x" % hb, rp, up, "0000:%02x:00.0" % (hb + 2), nic_bdf], "0x15b3", "0x1021",
                        "0x020700", sock, cpus, driver="mlx5_core", subsys=("0x15b3", "0x0041"))
        gpu_dir = n.pci(["pci0000:%02x" % hb, rp, up, "0000:%02x:01.0" % (hb + 2), gpu_bdf], "0x10de", "0x2330",
                        "0x030200", sock, cpus, driver="nvidia", subsys=("0x10de", "0x16c1"))
        gpus.append(gpu_bdf)
        guid = "a088:c203:00%02x:%04x" % (i, 0x1a2e + i)
        name = "mlx5_%d" % i
        ifname = "ibp%ds0" % (hb + 3)
        n.netdev(ifname, nic_dir, mtu=4092, mac=ipoib_mac(guid), type_=32, addresses=[("inet", "10.10.%d.7" % i, 16)])
        n.rdma(name, nic_dir, guid=guid,
               ports=[{"ll": "InfiniBand", "lid": "0x%x" % (0x10 + i), "sm_lid": "0x1",
                       "gids": [(ib_gid(guid), "IB/RoCE v1", None)]}])
    # Two RoCE ports of one ConnectX-7 on socket 1, straight below a root port.
    for port in (0, 1):
        bdf = "0000:aa:00.%d" % port
        d = n.pci(["pci0000:a8", "0000:a8:01.0", bdf], "0x15b3", "0x1021", "0x020000", 1, SOCKET_CPUS[1],
                  driver="mlx5_core", subsys=("0x15b3", "0x0046"))
        mac = "94:6d:ae:5c:3a:%02x" % (0x40 + port)
        ifname = "ens6f%dnp%d" % (port, port)
        ip = "192.168.%d.7" % (100 + port)
        n.netdev(ifname, d, mtu=9000, speed=400000, mac=mac, dev_port=0,
                 addresses=[("inet", ip, 24), ("inet6", "fe80::966d:aeff:fe5c:3a%02x" % (0x40 + port), 64)])
        n.rdma("mlx5_%d" % (8 + port), d, guid="946d:ae03:005c:3a%02x" % (0x40 + port),
               ports=[{"ll": "Ethernet", "rate": "400 Gb/sec (4X NDR)",
                       "gids": roce_gids([(mac_gid(mac), ifname), (ipv4_gid(ip), ifname)])}])
    # Four NVSwitches on socket 0 behind one PCIe switch.
    for k in range(4):
        n.pci(["pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:%02x.0" % k, "0000:%02x:00.0" % (5 + k)],
              "0x10de", "0x22a3", "0x068000", 0, SOCKET_CPUS[0], speed="2.5 GT/s PCIe", width=1,
              max_speed="2.5 GT/s PCIe", max_width=1, driver="nvidia-nvswitch")
    # Virtual interfaces the human tables leave out.
    n.netdev("lo", None, mtu=65536, operstate="unknown", carrier=1, type_=772,
             addresses=[("inet", "127.0.0.1", 8), ("inet6", "::1", 128)])
    n.netdev("docker0", None, mtu=1500, operstate="down", carrier=None, addresses=[("inet", "172.17.0.1", 16)])
    nvml = {"available": True, "driver_version": "550.90.07",
            "gpus": [{"bus_id": b, "name": "NVIDIA H100 80GB HBM3",
                      "uuid": "GPU-6f0c3a1e-0000-4000-8000-0000000000%02d" % i} for i, b in enumerate(gpus)]}
    n.finish("dgx-h100-07", "5.15.0-119-generic", verbs={"probed": True, "ok": True, "device_count": 10, "errno": 0,
                                                        "message": "ibv_get_device_list: 10 device(s)"}, nvml=nvml)


def roce(root):
    n = Node(root)
    n.vlans = []
    cpus = "0-31"
    n.numa([cpus])
    macs = ["b8:59:9f:d4:4a:2e", "b8:59:9f:d4:4a:2f"]
    dirs = []
    for port in (0, 1):
        dirs.append(n.pci(["pci0000:3a", "0000:3a:00.0", "0000:3b:00.%d" % port], "0x15b3", "0x101d", "0x020000", 0,
                          cpus, speed="16.0 GT/s PCIe", max_speed="16.0 GT/s PCIe", driver="mlx5_core"))
    # Port 0: IPv6 global address on the PF, IPv4 only on its VLAN 100.
    n.netdev("ens1f0np0", dirs[0], mtu=9000, speed=100000, mac=macs[0], dev_port=0,
             addresses=[("inet6", "2001:db8:0:1::5", 64), ("inet6", "fe80::ba59:9fff:fed4:4a2e", 64)])
    n.netdev("ens1f0np0.100", None, mtu=9000, speed=100000, mac=macs[0], carrier=1,
             addresses=[("inet", "10.100.0.5", 24), ("inet6", "fe80::ba59:9fff:fed4:4a2e", 64)],
             vlan=("ens1f0np0", 100))
    n.netdev("ens1f1np1", dirs[1], mtu=1500, speed=100000, mac=macs[1], dev_port=0,
             addresses=[("inet", "192.168.1.5", 24), ("inet6", "fe80::ba59:9fff:fed4:4a2f", 64)])
    v6 = ipv6_gid([0x2001, 0xdb8, 0, 1, 0, 0, 0, 5])
    n.rdma("mlx5_0", dirs[0], fw="22.41.1000", hca="MT4125", board="MT_0000000359", guid="b859:9f03:00d4:4a2e",
           ports=[{"ll": "Ethernet", "rate": "100 Gb/sec (4X EDR)",
                   "gids": roce_gids([(mac_gid(macs[0]), "ens1f0np0"), (v6, "ens1f0np0"),
                                      (ipv4_gid("10.100.0.5"), "ens1f0np0.100")])}])
    # Port 1: a v1-only IPv4 entry before the v2 one (mixed order).
    n.rdma("mlx5_1", dirs[1], fw="22.41.1000", hca="MT4125", board="MT_0000000359", guid="b859:9f03:00d4:4a2f",
           ports=[{"ll": "Ethernet", "rate": "100 Gb/sec (4X EDR)",
                   "gids": [(mac_gid(macs[1]), "IB/RoCE v1", "ens1f1np1"), (mac_gid(macs[1]), "RoCE v2", "ens1f1np1"),
                            (ipv4_gid("192.168.1.5"), "IB/RoCE v1", "ens1f1np1"),
                            (ipv4_gid("192.168.1.5"), "RoCE v2", "ens1f1np1")]}])
    # Two GPUs: one on the NIC's host bridge (PHB), one on another (NODE).
    n.pci(["pci0000:3a", "0000:3a:02.0", "0000:3c:00.0"], "0x10de", "0x20b5", "0x030200", 0, cpus,
          driver="nvidia", speed="16.0 GT/s PCIe", max_speed="16.0 GT/s PCIe")
    n.pci(["pci0000:86", "0000:86:00.0", "0000:87:00.0"], "0x10de", "0x20b5", "0x030200", 0, cpus,
          driver="nvidia", speed="16.0 GT/s PCIe", max_speed="16.0 GT/s PCIe")
    n.netdev("lo", None, mtu=65536, operstate="unknown", type_=772, addresses=[("inet", "127.0.0.1", 8)])
    n.finish("roce-node-3", "6.1.0-27-amd64", verbs={"probed": True, "ok": True, "device_count": 2, "errno": 0,
                                                    "message": "ibv_get_device_list: 2 device(s)"})


def broken(root):
    n = Node(root)
    n.vlans = []
    n.numa(["0-15", "garbage-cpus"])
    x = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0"
    ib0 = x + "/infiniband/mlx5_0"
    ib1 = "/sys/devices/pci0000:3d/0000:3d:01.0/0000:3e:00.0/0000:3f:00.0/0000:40:00.0/infiniband/mlx5_1"
    g1 = "/sys/devices/pci0000:3d/0000:3d:01.0/0000:3e:00.0/0000:3f:01.0/0000:43:00.0"
    n.faults = {
        ib0 + "/fw_ver": ("missing", None),
        ib0 + "/ports/1/rate": ("nonl", None),       # parses the same without the newline
        ib0 + "/ports/1/state": ("nonl", None),
        ib0 + "/ports/1/sm_lid": ("text", "N/A (no PMA)"),
        ib1 + "/ports/1/link_layer": ("empty", None),
        ib1 + "/ports/1/gids/0": ("text", "fe80:zzzz:not-a-gid"),
        g1 + "/current_link_width": ("unreadable", None),
        "/sys/devices/pci0000:3d/0000:3d:01.0/0000:3e:00.0/0000:3f:00.0/0000:40:00.0/net/ibp64s0/mtu":
            ("text", "garbage\x01"),
    }
    hosts = [0x15, 0x3d, 0x97, 0xbd]
    for i, hb in enumerate(hosts):
        sock = 0 if i < 2 else 1
        cpus = ["0-15", "16-31"][sock]
        rp, up = "0000:%02x:01.0" % hb, "0000:%02x:00.0" % (hb + 1)
        gpu = "0000:%02x:00.0" % (hb + 6)
        n.pci(["pci0000:%02x" % hb, rp, up, "0000:%02x:01.0" % (hb + 2), gpu], "0x10de", "0x2330", "0x030200", sock,
              cpus, driver="nvidia")
        if sock != 0:
            continue  # socket 1 has no NIC: GPU2 and GPU3 go across the socket link
        nic = "0000:%02x:00.0" % (hb + 3)
        slow = i == 0  # mlx5_0 trained at Gen4 x8 instead of Gen5 x16
        d = n.pci(["pci0000:%02x" % hb, rp, up, "0000:%02x:00.0" % (hb + 2), nic], "0x15b3", "0x1021", "0x020700",
                  sock, cpus, speed="16.0 GT/s PCIe" if slow else "32.0 GT/s PCIe",
                  width=8 if slow else 16, driver="mlx5_core")
        guid = "a088:c203:00%02x:1a2e" % i
        n.netdev("ibp%ds0" % (hb + 3), d, mtu=4092, type_=32, mac=ipoib_mac(guid), operstate="up" if i == 0 else "down",
                 carrier=1 if i == 0 else 0)
        down = i == 1
        n.rdma("mlx5_%d" % i, d, guid=guid,
               ports=[{"ll": "InfiniBand", "lid": "0x%x" % (0x10 + i), "sm_lid": "0x1",
                       "state": "1: DOWN" if down else "4: ACTIVE", "phys": "2: Polling" if down else "5: LinkUp",
                       "rate": "10 Gb/sec (4X SDR)" if down else "400 Gb/sec (4X NDR)",
                       "gids": [(ib_gid(guid), "IB/RoCE v1", None)]}])
    n.finish("broken-node-1", "6.8.0-45-generic", nvml="{this is not json")


FIXTURES = {"dgx-h100": dgx_h100, "roce": roce, "broken": broken}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 64
    out = sys.argv[1]
    names = sys.argv[2:] or sorted(FIXTURES)
    for name in names:
        if name not in FIXTURES:
            print("unknown fixture %r (known: %s)" % (name, ", ".join(sorted(FIXTURES))), file=sys.stderr)
            return 64
        root = os.path.join(out, name)
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        FIXTURES[name](root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
