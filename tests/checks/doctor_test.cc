// Every check on generated node fixtures: silent (no warn/fail) on the healthy
// DGX-class InfiniBand and RoCE nodes, and firing on its own planted fault.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "sys/pci_config.h"
#include "checks/registry.h"
#include "checks/runner.h"
#include "inventory/inventory.h"
#include "node_fixture.h"

namespace fabcheck::checks {
namespace {

using sys::FindAcs;
using sys::FormatAcsFlags;
using sys::kAcsCompletionRedirect;
using sys::kAcsRequestRedirect;
using sys::kAcsSourceValidation;
using sys::kAcsUpstreamForwarding;

namespace fs = std::filesystem;
using model::Severity;
using fixtures::NodeFixture;
using fixtures::NodeSpec;

// Runs the checks on a fixture with a given environment and profile.
class Doctor {
 public:
  explicit Doctor(const NodeFixture& node, const Profile* profile = nullptr) {
    auto root = sys::SysRoot::Open(node.root());
    EXPECT_TRUE(root.ok()) << root.status().ToString();
    root_ = std::make_unique<sys::SysRoot>(*root);
    inventory::ReadOptions options;
    options.query_libraries = false;
    inv_ = inventory::ReadInventory(*root_, options);
    profile_ = profile;
  }
  NcclEnv& env() { return env_; }

  std::vector<model::Finding> Run(const std::vector<std::string>& only = {}) {
    Context ctx;
    ctx.root = root_.get();
    ctx.inventory = &inv_;
    ctx.profile = profile_;
    ctx.env = &env_;
    ctx.evidence_complete = EvidenceComplete(*root_);
    auto checks = SelectChecks(only);
    EXPECT_TRUE(checks.ok());
    return RunChecks(ctx, *checks);
  }
  const model::Inventory& inventory() const { return inv_; }

 private:
  std::unique_ptr<sys::SysRoot> root_;
  model::Inventory inv_;
  const Profile* profile_ = nullptr;
  NcclEnv env_;
};

std::string Dump(const std::vector<model::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += std::string(model::SeverityName(f.severity)) + " " + f.id + " [" + f.object + "] " + f.message + "\n";
    for (const auto& e : f.evidence) out += "      " + e + "\n";
    if (!f.remedy.empty()) out += "      fix: " + f.remedy + "\n";
  }
  return out;
}

// The worst severity `id` reported.
Severity Worst(const std::vector<model::Finding>& findings, const std::string& id) {
  Severity worst = Severity::kPass;
  for (const auto& f : findings) {
    if (f.id == id && static_cast<int>(f.severity) > static_cast<int>(worst)) worst = f.severity;
  }
  return worst;
}

bool Fired(const std::vector<model::Finding>& findings, const std::string& id) {
  Severity s = Worst(findings, id);
  return s == Severity::kWarn || s == Severity::kFail;
}

class DoctorTest : public ::testing::Test {
 protected:
  fs::path Dir(const std::string& name) {
    return fixtures::FixtureTempDir() / ("fcdoctor-" + name + "-" + std::to_string(::getpid()));
  }
  std::unique_ptr<NodeFixture> Ib() { return std::make_unique<NodeFixture>(Dir("ib"), NodeSpec{}); }
  std::unique_ptr<NodeFixture> Roce() { return std::make_unique<NodeFixture>(Dir("roce"), NodeSpec{.roce = true}); }
};

// ---- healthy nodes ---------------------------------------------------------------

TEST_F(DoctorTest, HealthyInfinibandNodeIsSilent) {
  auto node = Ib();
  Doctor d(*node);
  ASSERT_EQ(d.inventory().rdma_devices.size(), 8u);
  ASSERT_EQ(d.inventory().gpus.size(), 8u);
  auto findings = d.Run();
  for (const Check* c : AllChecks()) {
    EXPECT_FALSE(Fired(findings, c->id)) << c->id << "\n" << Dump(findings);
    // Every check that ran says something.
    EXPECT_TRUE(std::any_of(findings.begin(), findings.end(), [&](const auto& f) { return f.id == c->id; })) << c->id;
  }
  EXPECT_EQ(Worst(findings, "port.down"), Severity::kPass);
  EXPECT_EQ(Worst(findings, "topo.gpu-nic.far"), Severity::kPass);
  EXPECT_EQ(Worst(findings, "pcie.acs.redirect"), Severity::kPass);
}

TEST_F(DoctorTest, HealthyRoceNodeIsSilentAndQosIsKnown) {
  auto node = Roce();
  auto profile = LoadProfile(std::string(FABCHECK_SOURCE_DIR) + "/profiles/roce-8gpu.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  Doctor d(*node, &*profile);
  auto findings = d.Run();
  for (const Check* c : AllChecks()) EXPECT_FALSE(Fired(findings, c->id)) << c->id << "\n" << Dump(findings);
  for (const char* id : {"roce.pfc.off", "roce.pfc.mismatch", "roce.ecn.off", "roce.trust.pcp", "roce.gid.no-v2",
                         "roce.no-ipv4", "netdev.mtu.mismatch", "node.count"}) {
    EXPECT_EQ(Worst(findings, id), Severity::kPass) << id << "\n" << Dump(findings);
  }
}

TEST_F(DoctorTest, HealthyIbNodeMatchesTheShippedDgxProfile) {
  auto node = Ib();
  auto profile = LoadProfile(std::string(FABCHECK_SOURCE_DIR) + "/profiles/dgx-h100-ib.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  Doctor d(*node, &*profile);
  auto findings = d.Run();
  for (const Check* c : AllChecks()) EXPECT_FALSE(Fired(findings, c->id)) << c->id << "\n" << Dump(findings);
}

// ---- planted faults: L1 ------------------------------------------------------------

TEST_F(DoctorTest, PortDown) {
  auto node = Ib();
  node->Write(node->PortDir(3) + "/state", "1: DOWN\n");
  node->Write(node->PortDir(3) + "/phys_state", "2: Polling\n");
  auto f = Doctor(*node).Run({"L1"});
  EXPECT_EQ(Worst(f, "port.down"), Severity::kFail) << Dump(f);
  EXPECT_NE(Dump(f).find("mlx5_3 port 1"), std::string::npos);
  // An IB port in INIT (no subnet manager) is down too.
  auto node2 = Ib();
  node2->Write(node2->PortDir(0) + "/state", "2: INIT\n");
  auto f2 = Doctor(*node2).Run({"port.down"});
  EXPECT_EQ(Worst(f2, "port.down"), Severity::kFail);
  EXPECT_NE(Dump(f2).find("INIT"), std::string::npos);
}

TEST_F(DoctorTest, PortRateLowAgainstSiblingsAndProfile) {
  auto node = Ib();
  node->Write(node->PortDir(5) + "/rate", "200 Gb/sec (4X HDR)\n");
  auto f = Doctor(*node).Run({"port.rate.low"});
  EXPECT_EQ(Worst(f, "port.rate.low"), Severity::kWarn) << Dump(f);
  Profile p;
  p.rate_gbps = 400;
  auto g = Doctor(*node, &p).Run({"port.rate.low"});
  EXPECT_EQ(Worst(g, "port.rate.low"), Severity::kFail) << Dump(g);
}

TEST_F(DoctorTest, PortLinkLayer) {
  auto node = Ib();
  Profile p;
  p.link_layer = "Ethernet";
  auto f = Doctor(*node, &p).Run({"port.link-layer"});
  EXPECT_EQ(Worst(f, "port.link-layer"), Severity::kFail) << Dump(f);
  EXPECT_NE(Dump(f).find("LINK_TYPE_P1"), std::string::npos);
  // Without a profile the link layer is only reported.
  EXPECT_EQ(Worst(Doctor(*node).Run({"port.link-layer"}), "port.link-layer"), Severity::kPass);
}

TEST_F(DoctorTest, PcieDowngradedNicAndGpuWidth) {
  auto node = Ib();
  node->Write(node->NicPci(2) + "/current_link_speed", "16.0 GT/s PCIe\n");
  node->Write(node->NicPci(2) + "/current_link_width", "8\n");
  auto f = Doctor(*node).Run({"pcie.downgraded"});
  EXPECT_EQ(Worst(f, "pcie.downgraded"), Severity::kFail) << Dump(f);
  EXPECT_NE(Dump(f).find("x8 instead of x16"), std::string::npos);
  EXPECT_NE(Dump(f).find("Gen4"), std::string::npos);
}

TEST_F(DoctorTest, PcieIdleGpuSpeedIsOnlyInfo) {
  auto node = Ib();
  node->Write(node->GpuPci(1) + "/current_link_speed", "2.5 GT/s PCIe\n");
  auto f = Doctor(*node).Run({"pcie.downgraded"});
  EXPECT_EQ(Worst(f, "pcie.downgraded"), Severity::kInfo) << Dump(f);
}

TEST_F(DoctorTest, TopoGpuNicFarAcrossSockets) {
  // Planted: GPU3 reports the other socket and hangs off its own host bridge,
  // so every NIC is SYS from it.
  auto node = Ib();
  std::string bdf = node->GpuBdf(3);
  node->Link("sys/bus/pci/devices/" + bdf, "../../../devices/pci0000:f0/0000:f0:01.0/" + bdf);
  node->Write("sys/devices/pci0000:f0/0000:f0:01.0/class", "0x060400\n");
  node->Write("sys/devices/pci0000:f0/0000:f0:01.0/vendor", "0x8086\n");
  node->Write("sys/devices/pci0000:f0/0000:f0:01.0/" + bdf + "/class", "0x030200\n");
  node->Write("sys/devices/pci0000:f0/0000:f0:01.0/" + bdf + "/vendor", "0x10de\n");
  node->Write("sys/devices/pci0000:f0/0000:f0:01.0/" + bdf + "/device", "0x2335\n");
  node->Write("sys/devices/pci0000:f0/0000:f0:01.0/" + bdf + "/numa_node", "7\n");
  auto f = Doctor(*node).Run({"topo.gpu-nic.far"});
  EXPECT_EQ(Worst(f, "topo.gpu-nic.far"), Severity::kFail) << Dump(f);
  EXPECT_NE(Dump(f).find("SYS"), std::string::npos);
}

TEST_F(DoctorTest, TopoRailUnbalanced) {
  // Planted: GPU5 sits in the wrong slot, below GPU4's PCIe switch. GPU4 and
  // GPU5 now both have mlx5_4 as their only near NIC, and mlx5_5 (still on
  // switch 5) is nearest to no GPU.
  auto node = Ib();
  std::string gpu = node->GpuBdf(5);
  std::string old_dir = "sys/devices/pci0000:60/0000:60:01.0/0000:61:00.0/0000:62:00.0/" + gpu;
  std::string new_parent = "pci0000:50/0000:50:01.0/0000:51:00.0/0000:52:00.0";
  fs::rename(fs::path(node->root()) / old_dir, fs::path(node->root()) / ("sys/devices/" + new_parent + "/" + gpu));
  node->Link("sys/bus/pci/devices/" + gpu, "../../../devices/" + new_parent + "/" + gpu);
  Doctor d(*node);
  auto f = d.Run({"topo.rail.unbalanced"});
  EXPECT_EQ(Worst(f, "topo.rail.unbalanced"), Severity::kWarn) << Dump(f);
  EXPECT_NE(Dump(f).find("mlx5_5"), std::string::npos) << Dump(f);
}

TEST_F(DoctorTest, NodeCountAgainstProfile) {
  auto node = Ib();
  node->Remove("sys/class/infiniband/mlx5_7");
  Profile p;
  p.nic_count = 8;
  p.gpu_count = 8;
  auto f = Doctor(*node, &p).Run({"node.count"});
  EXPECT_EQ(Worst(f, "node.count"), Severity::kFail) << Dump(f);
}

// ---- planted faults: L2 ------------------------------------------------------------

TEST_F(DoctorTest, NetdevDown) {
  auto node = Roce();
  node->Write(node->NetDir(1) + "/operstate", "down\n");
  node->Write(node->NetDir(1) + "/carrier", "0\n");
  auto f = Doctor(*node).Run({"netdev.down"});
  EXPECT_EQ(Worst(f, "netdev.down"), Severity::kFail) << Dump(f);
}

TEST_F(DoctorTest, NetdevMtuMismatchAndBelowProfile) {
  auto node = Roce();
  node->Write(node->NetDir(6) + "/mtu", "1500\n");
  auto f = Doctor(*node).Run({"netdev.mtu.mismatch"});
  EXPECT_EQ(Worst(f, "netdev.mtu.mismatch"), Severity::kWarn) << Dump(f);
  EXPECT_NE(Dump(f).find(node->Netdev(6)), std::string::npos);
  Profile p;
  p.mtu = 9000;
  EXPECT_EQ(Worst(Doctor(*node, &p).Run({"netdev.mtu.mismatch"}), "netdev.mtu.mismatch"), Severity::kFail);
}

TEST_F(DoctorTest, RoceNoIpv4) {
  auto node = Roce();
  node->SetIpv4(2, "");
  auto f = Doctor(*node).Run({"roce.no-ipv4"});
  EXPECT_EQ(Worst(f, "roce.no-ipv4"), Severity::kFail) << Dump(f);
}

TEST_F(DoctorTest, RoceGidNoV2) {
  auto node = Roce();
  // Only RoCE v1 entries left for the IPv4 address.
  node->Write(node->PortDir(4) + "/gid_attrs/types/3", "IB/RoCE v1\n");
  auto f = Doctor(*node).Run({"roce.gid.no-v2"});
  EXPECT_EQ(Worst(f, "roce.gid.no-v2"), Severity::kFail) << Dump(f);
}

// ---- planted faults: RoCE QoS ---------------------------------------------------------

TEST_F(DoctorTest, RocePfcOff) {
  auto node = Roce();
  node->SetDcb(0, 0x00, true);
  auto f = Doctor(*node).Run({"roce.pfc.off"});
  EXPECT_EQ(Worst(f, "roce.pfc.off"), Severity::kWarn) << Dump(f);
  Profile p;
  p.pfc_priority = 3;
  EXPECT_EQ(Worst(Doctor(*node, &p).Run({"roce.pfc.off"}), "roce.pfc.off"), Severity::kFail);
}

TEST_F(DoctorTest, RocePfcUnknownWithoutDcbDataIsNeverAFailure) {
  auto node = std::make_unique<NodeFixture>(Dir("roce-nodcb"), NodeSpec{.roce = true, .with_dcb = false});
  Profile p;
  p.pfc_priority = 3;
  auto f = Doctor(*node, &p).Run({"RoCE"});
  EXPECT_EQ(Worst(f, "roce.pfc.off"), Severity::kUnknown) << Dump(f);
  EXPECT_EQ(Worst(f, "roce.pfc.mismatch"), Severity::kUnknown) << Dump(f);
  EXPECT_EQ(Worst(f, "roce.trust.pcp"), Severity::kUnknown) << Dump(f);
  EXPECT_NE(Dump(f).find("live node"), std::string::npos);
}

TEST_F(DoctorTest, RocePfcMismatch) {
  auto node = Roce();
  node->SetDcb(7, 0x10, true);  // priority 4 on one rail
  auto f = Doctor(*node).Run({"roce.pfc.mismatch"});
  EXPECT_EQ(Worst(f, "roce.pfc.mismatch"), Severity::kFail) << Dump(f);
}

TEST_F(DoctorTest, RoceEcnOff) {
  auto node = Roce();
  node->Write(node->NetDir(3) + "/ecn/roce_rp/enable/3", "0\n");
  auto f = Doctor(*node).Run({"roce.ecn.off"});
  EXPECT_EQ(Worst(f, "roce.ecn.off"), Severity::kWarn) << Dump(f);
  EXPECT_NE(Dump(f).find("reaction point"), std::string::npos);
  // Inbox driver: no ecn/ directory at all -> unknown, not a failure.
  auto inbox = std::make_unique<NodeFixture>(Dir("roce-inbox"), NodeSpec{.roce = true, .with_ecn = false});
  EXPECT_EQ(Worst(Doctor(*inbox).Run({"roce.ecn.off"}), "roce.ecn.off"), Severity::kUnknown);
}

TEST_F(DoctorTest, RoceTrustPcp) {
  auto node = Roce();
  node->SetDcb(1, 0x08, false);  // no DSCP entries in the APP table: trust pcp
  auto f = Doctor(*node).Run({"roce.trust.pcp"});
  EXPECT_EQ(Worst(f, "roce.trust.pcp"), Severity::kWarn) << Dump(f);
  // The OFED sysfs file wins over the APP table.
  auto node2 = Roce();
  node2->Write(node2->NetDir(0) + "/qos/trust", "pcp\n");
  EXPECT_EQ(Worst(Doctor(*node2).Run({"roce.trust.pcp"}), "roce.trust.pcp"), Severity::kWarn);
}

// ---- planted faults: GDR --------------------------------------------------------------

TEST_F(DoctorTest, GdrNoPeerMemory) {
  auto node = Ib();
  node->Remove("sys/module/nvidia_peermem");
  node->Write("proc/modules", "mlx5_ib 491520 0 - Live 0x0\nib_uverbs 200704 1 mlx5_ib, Live 0x0\n");
  auto f = Doctor(*node).Run({"gdr.no-peer-memory"});
  EXPECT_EQ(Worst(f, "gdr.no-peer-memory"), Severity::kFail) << Dump(f);
  // dma-buf path: open kernel modules on a 6.x kernel are enough.
  node->Write("proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.07  Release Build\n");
  EXPECT_EQ(Worst(Doctor(*node).Run({"gdr.no-peer-memory"}), "gdr.no-peer-memory"), Severity::kPass);
}

TEST_F(DoctorTest, PcieAcsRedirect) {
  auto node = Ib();
  std::string bdf = node->DownstreamBdf(2, 1);  // the NIC-side downstream port of pair 2
  node->WriteBinary("sys/bus/pci/devices/" + bdf + "/config",
                    NodeFixture::ConfigSpaceWithAcs(0x005f, kAcsRequestRedirect | kAcsCompletionRedirect));
  auto f = Doctor(*node).Run({"pcie.acs.redirect"});
  EXPECT_EQ(Worst(f, "pcie.acs.redirect"), Severity::kFail) << Dump(f);
  EXPECT_NE(Dump(f).find(bdf), std::string::npos);
  EXPECT_NE(Dump(f).find("ReqRedir+"), std::string::npos);
}

TEST_F(DoctorTest, PcieAcsUnreadableConfigIsUnknown) {
  auto node = Ib();
  // What an unprivileged read returns: the first 64 bytes.
  node->WriteBinary("sys/bus/pci/devices/" + node->DownstreamBdf(0, 0) + "/config", std::string(64, '\0'));
  auto f = Doctor(*node).Run({"pcie.acs.redirect"});
  EXPECT_EQ(Worst(f, "pcie.acs.redirect"), Severity::kUnknown) << Dump(f);
}

TEST_F(DoctorTest, IommuTranslating) {
  auto node = Ib();
  node->Write("sys/kernel/iommu_groups/17/type", "DMA-FQ\n");
  node->Link(node->NicPci(0) + "/iommu_group", "../../../../../../kernel/iommu_groups/17");
  auto f = Doctor(*node).Run({"iommu.translating"});
  EXPECT_EQ(Worst(f, "iommu.translating"), Severity::kWarn) << Dump(f);
}

// ---- planted faults: container -----------------------------------------------------------

TEST_F(DoctorTest, SysMemlockLow) {
  auto node = Ib();
  node->Write("proc/self/limits", "Max locked memory         8388608              8388608              bytes\n");
  node->Write("proc/self/status", "CapEff:\t00000000a80425fb\n");
  auto f = Doctor(*node).Run({"sys.memlock.low"});
  EXPECT_EQ(Worst(f, "sys.memlock.low"), Severity::kFail) << Dump(f);
  // CAP_IPC_LOCK lifts the limit.
  node->Write("proc/self/status", "CapEff:\t00000000a80465fb\n");
  EXPECT_EQ(Worst(Doctor(*node).Run({"sys.memlock.low"}), "sys.memlock.low"), Severity::kPass);
}

TEST_F(DoctorTest, SysCapIpcLockInContainer) {
  auto node = Ib();
  node->Write("proc/self/limits", "Max locked memory         65536              65536              bytes\n");
  node->Write("proc/self/status", "CapEff:\t00000000a80425fb\n");
  node->Write("proc/self/cgroup", "0::/kubepods.slice/kubepods-pod123.slice/cri-containerd-abc.scope\n");
  auto f = Doctor(*node).Run({"sys.cap-ipc-lock"});
  EXPECT_EQ(Worst(f, "sys.cap-ipc-lock"), Severity::kFail) << Dump(f);
}

TEST_F(DoctorTest, SysUverbsMissing) {
  auto node = Ib();
  node->Remove("dev/infiniband/uverbs4");
  auto f = Doctor(*node).Run({"sys.uverbs.missing"});
  EXPECT_EQ(Worst(f, "sys.uverbs.missing"), Severity::kFail) << Dump(f);
  EXPECT_NE(Dump(f).find("uverbs4"), std::string::npos);
}

TEST_F(DoctorTest, SysRdmaNetns) {
  // The RoCE netdev of mlx5_2 moved to another namespace: sysfs still names
  // it in the GID attributes, /sys/class/net no longer lists it.
  auto node = Roce();
  node->Remove(node->NetDir(2));
  node->Remove("sys/bus/pci/devices/" + node->NicBdf(2) + "/net");
  auto f = Doctor(*node).Run({"sys.rdma-netns"});
  EXPECT_EQ(Worst(f, "sys.rdma-netns"), Severity::kFail) << Dump(f);
}

// ---- planted faults: NCCL ---------------------------------------------------------------

TEST_F(DoctorTest, NcclIbDisabled) {
  auto node = Ib();
  Doctor d(*node);
  d.env().Set("NCCL_IB_DISABLE", "1", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.ib-disabled"}), "nccl.ib-disabled"), Severity::kFail);
  d.env().Set("NCCL_IB_DISABLE", "0", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.ib-disabled"}), "nccl.ib-disabled"), Severity::kPass);
}

TEST_F(DoctorTest, NcclSocketIfname) {
  auto node = Ib();
  Doctor d(*node);
  d.env().Set("NCCL_SOCKET_IFNAME", "eth", "test");  // no eth* here
  EXPECT_EQ(Worst(d.Run({"nccl.socket-ifname"}), "nccl.socket-ifname"), Severity::kFail);
  d.env().Set("NCCL_SOCKET_IFNAME", "eno", "test");  // only the default-route interface
  EXPECT_EQ(Worst(d.Run({"nccl.socket-ifname"}), "nccl.socket-ifname"), Severity::kWarn);
  d.env().Set("NCCL_SOCKET_IFNAME", "ibp", "test");
  auto f = d.Run({"nccl.socket-ifname"});
  EXPECT_EQ(Worst(f, "nccl.socket-ifname"), Severity::kPass) << Dump(f);
  d.env().Set("NCCL_SOCKET_IFNAME", "^=eno1,lo", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.socket-ifname"}), "nccl.socket-ifname"), Severity::kPass);
}

TEST_F(DoctorTest, NcclIbHca) {
  auto node = std::make_unique<NodeFixture>(Dir("ib12"), NodeSpec{.pairs = 12});  // mlx5_0..mlx5_11
  Doctor d(*node);
  d.env().Set("NCCL_IB_HCA", "mlx5_1", "test");  // also mlx5_10, mlx5_11
  auto f = d.Run({"nccl.ib-hca"});
  EXPECT_EQ(Worst(f, "nccl.ib-hca"), Severity::kWarn) << Dump(f);
  EXPECT_NE(Dump(f).find("mlx5_10"), std::string::npos);
  d.env().Set("NCCL_IB_HCA", "=mlx5_1", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.ib-hca"}), "nccl.ib-hca"), Severity::kPass);
  d.env().Set("NCCL_IB_HCA", "=mlx5_0,mlx5_99", "test");  // one typo
  EXPECT_EQ(Worst(d.Run({"nccl.ib-hca"}), "nccl.ib-hca"), Severity::kWarn);
  d.env().Set("NCCL_IB_HCA", "mlx4", "test");  // selects nothing: TCP fallback
  EXPECT_EQ(Worst(d.Run({"nccl.ib-hca"}), "nccl.ib-hca"), Severity::kFail);
  d.env().Set("NCCL_IB_HCA", "^mlx5", "test");  // excludes everything
  EXPECT_EQ(Worst(d.Run({"nccl.ib-hca"}), "nccl.ib-hca"), Severity::kFail);
}

TEST_F(DoctorTest, NcclGidIndex) {
  auto node = Roce();
  Doctor d(*node);
  d.env().Set("NCCL_IB_GID_INDEX", "3", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.gid-index"}), "nccl.gid-index"), Severity::kPass);
  d.env().Set("NCCL_IB_GID_INDEX", "1", "test");  // RoCE v2 but link-local
  EXPECT_EQ(Worst(d.Run({"nccl.gid-index"}), "nccl.gid-index"), Severity::kFail);
  d.env().Set("NCCL_IB_GID_INDEX", "2", "test");  // RoCE v1
  EXPECT_EQ(Worst(d.Run({"nccl.gid-index"}), "nccl.gid-index"), Severity::kWarn);
  d.env().Set("NCCL_IB_GID_INDEX", "4", "test");  // empty slot
  EXPECT_EQ(Worst(d.Run({"nccl.gid-index"}), "nccl.gid-index"), Severity::kFail);
}

TEST_F(DoctorTest, NcclNetGdrLevel) {
  auto node = Ib();  // every GPU is PIX from its NIC
  Doctor d(*node);
  d.env().Set("NCCL_NET_GDR_LEVEL", "LOC", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.net-gdr-level"}), "nccl.net-gdr-level"), Severity::kWarn);
  d.env().Set("NCCL_NET_GDR_LEVEL", "0", "test");  // old numbering: LOC
  EXPECT_EQ(Worst(d.Run({"nccl.net-gdr-level"}), "nccl.net-gdr-level"), Severity::kWarn);
  d.env().Set("NCCL_NET_GDR_LEVEL", "PIX", "test");
  EXPECT_EQ(Worst(d.Run({"nccl.net-gdr-level"}), "nccl.net-gdr-level"), Severity::kPass);
  d.env().Set("NCCL_NET_GDR_LEVEL", "pxb", "test");  // NCCL compares case-sensitively
  EXPECT_EQ(Worst(d.Run({"nccl.net-gdr-level"}), "nccl.net-gdr-level"), Severity::kWarn);
}

// ---- sysroots without the doctor's evidence, and captures -------------------------------

TEST_F(DoctorTest, SysrootWithoutDoctorEvidenceIsUnknownNotFail) {
  // An inventory-only capture: no /proc/modules, no infiniband_verbs, no marker.
  auto node = Ib();
  node->Remove("fabcheck/doctor/evidence.json");
  node->Remove("sys/class/infiniband_verbs");
  node->Remove("sys/module/nvidia_peermem");
  node->Remove("proc/modules");
  node->Remove("proc/self");
  auto f = Doctor(*node).Run({"GDR", "container"});
  EXPECT_EQ(Worst(f, "sys.uverbs.missing"), Severity::kUnknown) << Dump(f);
  EXPECT_EQ(Worst(f, "gdr.no-peer-memory"), Severity::kUnknown) << Dump(f);
  EXPECT_EQ(Worst(f, "sys.memlock.low"), Severity::kUnknown) << Dump(f);
  for (const auto& finding : f) EXPECT_NE(finding.severity, Severity::kFail) << Dump(f);
  // With the evidence marker the same absence is a finding: ib_uverbs is not loaded.
  node->Write("fabcheck/doctor/evidence.json", "{}");
  EXPECT_EQ(Worst(Doctor(*node).Run({"sys.uverbs.missing"}), "sys.uverbs.missing"), Severity::kFail);
}

TEST_F(DoctorTest, CaptureOfAFixtureGivesTheSameFindings) {
  // Record what inventory and every check read, write a capture, and check
  // that doctor on the capture says exactly what it says on the tree.
  auto node = Roce();
  node->SetDcb(2, 0x00, true);  // something to find
  auto dir_root = sys::SysRoot::Open(node->root());
  ASSERT_TRUE(dir_root.ok());
  dir_root->StartRecording();
  inventory::ReadOptions options;
  options.query_libraries = false;
  (void)inventory::ReadInventory(*dir_root, options);
  ReadEvidence(*dir_root);
  fs::path capture = Dir("capture") += ".tar.gz";
  ASSERT_TRUE(dir_root->WriteCapture(capture.string(), "{}").ok());
  auto from_tree = Doctor(*node).Run();
  auto cap_root = sys::SysRoot::Open(capture.string());
  ASSERT_TRUE(cap_root.ok()) << cap_root.status().ToString();
  model::Inventory inv = inventory::ReadInventory(*cap_root, options);
  NcclEnv env;
  Context ctx;
  ctx.root = &*cap_root;
  ctx.inventory = &inv;
  ctx.env = &env;
  ctx.evidence_complete = EvidenceComplete(*cap_root);
  EXPECT_TRUE(ctx.evidence_complete);
  auto from_capture = RunChecks(ctx, AllChecks());
  // Evidence names where it was read (the tree or the capture); the rest is identical.
  auto normalize = [](std::string text, const std::string& prefix) {
    for (size_t at; (at = text.find(prefix)) != std::string::npos;) text.replace(at, prefix.size(), "ROOT");
    return text;
  };
  EXPECT_EQ(normalize(Dump(from_capture), capture.string() + ":"), normalize(Dump(from_tree), node->root()));
  EXPECT_TRUE(Fired(from_capture, "roce.pfc.off"));
  fs::remove(capture);
}

// ---- framework ------------------------------------------------------------------------

TEST(RegistryTest, IdsAreUniqueAndSelectable) {
  std::set<std::string> ids;
  for (const Check* c : AllChecks()) EXPECT_TRUE(ids.insert(c->id).second) << c->id;
  for (const char* id : {"port.down", "port.rate.low", "port.link-layer", "pcie.downgraded", "topo.gpu-nic.far",
                         "topo.rail.unbalanced", "netdev.down", "netdev.mtu.mismatch", "roce.no-ipv4", "roce.gid.no-v2",
                         "roce.pfc.off", "roce.pfc.mismatch", "roce.ecn.off", "roce.trust.pcp", "gdr.no-peer-memory",
                         "pcie.acs.redirect", "iommu.translating", "sys.memlock.low", "sys.uverbs.missing",
                         "sys.cap-ipc-lock", "sys.rdma-netns", "nccl.ib-disabled", "nccl.socket-ifname", "nccl.ib-hca",
                         "nccl.gid-index", "nccl.net-gdr-level"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  auto l1 = SelectChecks({"l1,nccl.ib-hca"});
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(l1->back()->id, std::string("nccl.ib-hca"));
  auto bad = SelectChecks({"L9"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("L9"), std::string::npos);
}

TEST(RegistryTest, DocsCatalogIsUpToDate) {
  std::ifstream in(std::string(FABCHECK_SOURCE_DIR) + "/docs/checks.md");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), CatalogMarkdown())
      << "docs/checks.md is out of date: regenerate it with `fabcheck doctor --catalog > docs/checks.md`";
}

}  // namespace
}  // namespace fabcheck::checks
