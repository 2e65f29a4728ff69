// The doctor's parsers: PCI config space (ACS), /proc files, env files, profiles, dcbnl replies.
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "checks/dcb.h"
#include "checks/env.h"
#include "sys/pci_config.h"
#include "checks/proc.h"
#include "checks/profile.h"
#include "node_fixture.h"

namespace fabcheck::checks {
namespace {

using sys::FindAcs;
using sys::FormatAcsFlags;
using sys::kAcsCompletionRedirect;
using sys::kAcsRequestRedirect;
using sys::kAcsSourceValidation;
using sys::kAcsUpstreamForwarding;

// ---- PCI config space --------------------------------------------------------

std::string Config(size_t size) { return std::string(size, '\0'); }
void Put32(std::string& c, size_t at, uint32_t v) {
  for (int b = 0; b < 4; ++b) c[at + b] = static_cast<char>((v >> (8 * b)) & 0xff);
}
uint32_t ExtHeader(uint16_t id, uint8_t version, uint16_t next) {
  return id | (static_cast<uint32_t>(version) << 16) | (static_cast<uint32_t>(next) << 20);
}

TEST(AcsTest, FindsAcsAfterOtherExtendedCapabilities) {
  // A PLX/Broadcom switch downstream port as lspci shows it: AER at 0x100,
  // then ACS at 0x148 with ReqRedir+ CmpltRedir+ UpstreamFwd+ enabled.
  std::string c = fixtures::NodeFixture::ConfigSpaceWithAcs(0x005f, kAcsRequestRedirect | kAcsCompletionRedirect |
                                                                       kAcsUpstreamForwarding | kAcsSourceValidation);
  auto acs = FindAcs(c);
  ASSERT_TRUE(acs.ok()) << acs.status().ToString();
  ASSERT_TRUE(acs->has_value());
  EXPECT_EQ((*acs)->offset, 0x148);
  EXPECT_EQ((*acs)->capability, 0x005f);
  EXPECT_TRUE((*acs)->RedirectEnabled());
  EXPECT_EQ(FormatAcsFlags((*acs)->control),
            "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-");
}

TEST(AcsTest, AcsPresentButRedirectOff) {
  std::string c = fixtures::NodeFixture::ConfigSpaceWithAcs(0x005f, kAcsSourceValidation);
  auto acs = FindAcs(c);
  ASSERT_TRUE(acs.ok() && acs->has_value());
  EXPECT_FALSE((*acs)->RedirectEnabled());
}

TEST(AcsTest, ThreeCapabilitiesDeep) {
  std::string c = Config(4096);
  Put32(c, 0x100, ExtHeader(0x0001, 2, 0x140));  // AER
  Put32(c, 0x140, ExtHeader(0x0003, 1, 0x150));  // Device serial number
  Put32(c, 0x150, ExtHeader(0x000D, 1, 0x000));  // ACS, last
  c[0x156] = kAcsCompletionRedirect;
  auto acs = FindAcs(c);
  ASSERT_TRUE(acs.ok() && acs->has_value());
  EXPECT_EQ((*acs)->offset, 0x150);
  EXPECT_TRUE((*acs)->RedirectEnabled());
}

TEST(AcsTest, NoAcsCapability) {
  std::string c = Config(4096);
  Put32(c, 0x100, ExtHeader(0x0001, 2, 0x000));
  auto acs = FindAcs(c);
  ASSERT_TRUE(acs.ok());
  EXPECT_FALSE(acs->has_value());
  // No extended capabilities at all (header 0, or all ones on a missing device).
  EXPECT_FALSE(FindAcs(Config(4096))->has_value());
  std::string ones(4096, static_cast<char>(0xff));
  EXPECT_FALSE(FindAcs(ones)->has_value());
}

// Bytes read from a real device (tests/data/pci/README.md): a GPU passed
// through to a VM, whose hypervisor zeroed the IDs of some capabilities but
// kept their next pointers.
std::string RealGpuConfig() {
  std::ifstream in(std::string(FABCHECK_TESTDATA_DIR) + "/pci/h200-vm-gpu-0000_00_06.0.config", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(AcsTest, RealGpuConfigSpaceWalksPastZeroedCapabilitiesAndHasNoAcs) {
  std::string c = RealGpuConfig();
  ASSERT_EQ(c.size(), 4096u) << "tests/data/pci/h200-vm-gpu-0000_00_06.0.config missing or cut";
  auto acs = FindAcs(c);
  ASSERT_TRUE(acs.ok()) << acs.status().ToString();
  EXPECT_FALSE(acs->has_value());
}

TEST(AcsTest, AcsInsideARealCapabilityListIsFound) {
  // The same real list with its zeroed capability at 0x134 turned into ACS:
  // the walk must cross 0x100 (ID 0) and 0x12c (Secondary PCIe) to reach it.
  std::string c = RealGpuConfig();
  ASSERT_EQ(c.size(), 4096u);
  c[0x134] = 0x0d;
  c[0x135] = 0x00;
  c[0x138] = 0x1f;  // capability: SrcValid TransBlk ReqRedir CmpltRedir UpstreamFwd
  c[0x13a] = static_cast<char>(kAcsRequestRedirect | kAcsCompletionRedirect);
  c[0x13b] = 0;
  auto acs = FindAcs(c);
  ASSERT_TRUE(acs.ok() && acs->has_value()) << acs.status().ToString();
  EXPECT_EQ((*acs)->offset, 0x134);
  EXPECT_EQ((*acs)->capability & 0x1f, 0x1f);
  EXPECT_TRUE((*acs)->RedirectEnabled());
}

TEST(AcsTest, UnprivilegedReadIsAnErrorNotAnAnswer) {
  auto acs = FindAcs(Config(64));  // what a non-root read of /sys/.../config returns
  ASSERT_FALSE(acs.ok());
  EXPECT_EQ(acs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(acs.status().message().find("root"), std::string::npos);
}

TEST(AcsTest, MalformedListsDoNotHang) {
  std::string loop = Config(4096);
  Put32(loop, 0x100, ExtHeader(0x0001, 1, 0x100));  // points at itself
  EXPECT_EQ(FindAcs(loop).status().code(), StatusCode::kDataLoss);
  std::string back = Config(4096);
  Put32(back, 0x100, ExtHeader(0x0001, 1, 0x40));  // into the standard header
  EXPECT_EQ(FindAcs(back).status().code(), StatusCode::kDataLoss);
  std::string truncated = Config(0x110);
  Put32(truncated, 0x100, ExtHeader(0x0001, 1, 0x200));
  EXPECT_EQ(FindAcs(truncated).status().code(), StatusCode::kDataLoss);
}

// ---- /proc -------------------------------------------------------------------

TEST(ProcTest, MemlockLimit) {
  auto l = ParseMemlockLimit(
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         8388608              unlimited            bytes     \n");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->soft, 8388608u);
  EXPECT_EQ(l->hard, kRlimUnlimited);
  EXPECT_EQ(FormatLimit(l->soft), "8 MiB");
  EXPECT_FALSE(ParseMemlockLimit("Max open files 1024 1024 files\n").ok());
  EXPECT_FALSE(ParseMemlockLimit("Max locked memory  lots  more  bytes\n").ok());
}

TEST(ProcTest, CapEffAndIpcLockBit) {
  auto cap = ParseCapEff("Name:\tx\nCapPrm:\t0\nCapEff:\t00000000a80425fb\n");
  ASSERT_TRUE(cap.ok());
  EXPECT_EQ(*cap, 0xa80425fbu);  // docker's default set: no CAP_IPC_LOCK
  EXPECT_FALSE((*cap >> kCapIpcLock) & 1);
  EXPECT_TRUE((*ParseCapEff("CapEff:\t000001ffffffffff\n") >> kCapIpcLock) & 1);
  EXPECT_FALSE(ParseCapEff("CapEff:\tzz\n").ok());
}

TEST(ProcTest, ModulesAndKernelVersion) {
  auto m = ParseModules("nvidia_peermem 16384 0 - Live 0x0 (OE)\nmlx5_ib 1 0 - Live 0x0\n");
  EXPECT_TRUE(m.count("nvidia_peermem"));
  EXPECT_TRUE(m.count("mlx5_ib"));
  EXPECT_EQ(ParseKernelVersion("6.1.0-18-amd64"), std::make_pair(6, 1));
  EXPECT_EQ(ParseKernelVersion("5.15.0"), std::make_pair(5, 15));
  EXPECT_EQ(ParseKernelVersion("garbage"), std::nullopt);
}

// ---- env files -----------------------------------------------------------------

TEST(EnvTest, ParsesKeyValueLines) {
  auto vars = ParseEnvText("# job\nexport NCCL_IB_HCA==mlx5_0,mlx5_1\n\nNCCL_SOCKET_IFNAME=\"eth0\"\nEMPTY=\n",
                           "job.env");
  ASSERT_TRUE(vars.ok()) << vars.status().ToString();
  ASSERT_EQ(vars->size(), 3u);
  EXPECT_EQ((*vars)[0].first, "NCCL_IB_HCA");
  EXPECT_EQ((*vars)[0].second.value, "=mlx5_0,mlx5_1");  // the '=' of an exact list survives
  EXPECT_EQ((*vars)[0].second.source, "job.env line 2");
  EXPECT_EQ((*vars)[1].second.value, "eth0");
  EXPECT_EQ((*vars)[2].second.value, "");
}

TEST(EnvTest, BadLinesNameFileAndLine) {
  auto bad = ParseEnvText("NCCL_IB_HCA=mlx5_0\nthis is not an assignment\n", "job.env");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("job.env line 2"), std::string::npos);
  auto bad_name = ParseEnvText("1NCCL=3\n", "job.env");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_NE(bad_name.status().message().find("'1NCCL'"), std::string::npos);
}

TEST(EnvTest, LayersEnvFileOverConfFile) {
  std::filesystem::path dir = fixtures::FixtureTempDir() / ("fcdoctor-env-" + std::to_string(::getpid()));
  fixtures::NodeFixture node(dir / "root", {.pairs = 1});
  node.Write("etc/nccl.conf", "NCCL_IB_HCA=mlx5_9\nNCCL_DEBUG=INFO\n");
  std::string env_file = (dir / "job.env").string();
  node.Write("../job.env", "NCCL_IB_HCA=mlx5_0\n");
  auto root = sys::SysRoot::Open(node.root());
  ASSERT_TRUE(root.ok());
  EnvSources sources;
  sources.env_files = {env_file};
  auto env = LoadNcclEnv(*root, sources);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->Get("NCCL_IB_HCA")->value, "mlx5_0");
  EXPECT_EQ(env->Get("NCCL_DEBUG")->value, "INFO");
  EXPECT_EQ(env->Get("NCCL_DEBUG")->source, "/etc/nccl.conf line 2");
  EXPECT_FALSE(env->Get("NCCL_IB_GID_INDEX").has_value());
  sources.env_files = {(dir / "missing.env").string()};
  EXPECT_EQ(LoadNcclEnv(*root, sources).status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

// ---- profiles -----------------------------------------------------------------

TEST(ProfileTest, ParsesEveryField) {
  auto p = ParseProfile(R"(schema: fabcheck.profile/v1
name: test
gpus: {count: 8, pcie_gen: 5, pcie_width: 16}
nics: {count: 8, devices: [mlx5_0, mlx5_1], link_layer: infiniband, rate_gbps: 400, pcie_gen: 5, pcie_width: 16}
network: {mtu: 9000}
roce: {pfc_priority: 3, trust: dscp}
system: {min_memlock: unlimited}
)", "test.yaml");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->gpu_count, 8);
  EXPECT_EQ(p->link_layer, "InfiniBand");
  EXPECT_EQ(p->rate_gbps, 400.0);
  EXPECT_EQ(p->mtu, 9000);
  EXPECT_EQ(p->pfc_priority, 3);
  EXPECT_EQ(p->min_memlock_bytes, kUnlimited);
  EXPECT_TRUE(p->IsComputeNic("mlx5_1"));
  EXPECT_FALSE(p->IsComputeNic("mlx5_4"));
}

TEST(ProfileTest, InvalidValuesNameTheKey) {
  struct Bad {
    const char* yaml;
    const char* key;
  };
  for (const Bad& b : {Bad{"nics: {rate_gbps: fast}", "nics.rate_gbps"}, Bad{"roce: {pfc_priority: 9}", "roce.pfc_priority"},
                       Bad{"nics: {link_layer: token-ring}", "nics.link_layer"}, Bad{"nics: {rate: 400}", "nics.rate"},
                       Bad{"network: {mtu: 12}", "network.mtu"}, Bad{"system: {min_memlock: lots}", "system.min_memlock"},
                       Bad{"gpu: {count: 8}", "gpu"}, Bad{"schema: fabcheck.profile/v9", "schema"},
                       Bad{"nics: {devices: mlx5_0}", "nics.devices"}}) {
    auto p = ParseProfile(b.yaml, "bad.yaml");
    ASSERT_FALSE(p.ok()) << b.yaml;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(b.key), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("bad.yaml"), std::string::npos);
  }
  EXPECT_FALSE(ParseProfile("nics: [unclosed", "x.yaml").ok());
}

TEST(ProfileTest, HostKeys) {
  auto p = ParseProfile(R"(nics: {max_payload: 256, max_read_request: 4K, relaxed_ordering: true}
memory:
  hugepages: {2M: 8192, 1G: 16}
  thp: MADVISE
  numa_balancing: off
)", "host.yaml");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->nic_max_payload, 256);
  EXPECT_EQ(p->nic_max_read_request, 4096);
  EXPECT_EQ(p->nic_relaxed_ordering, true);
  EXPECT_EQ(p->min_hugepages, (std::map<uint64_t, uint64_t>{{2048, 8192}, {1048576, 16}}));
  EXPECT_EQ(p->thp, "madvise");
  EXPECT_EQ(p->numa_balancing, false);
  struct Bad {
    const char* yaml;
    const char* key;
  };
  for (const Bad& b : {Bad{"nics: {max_read_request: 300}", "nics.max_read_request"},
                       Bad{"nics: {max_payload: 8192}", "nics.max_payload"},
                       Bad{"nics: {relaxed_ordering: maybe}", "nics.relaxed_ordering"},
                       Bad{"memory: {hugepages: {3X: 1}}", "memory.hugepages.3X"},
                       Bad{"memory: {hugepages: {2M: -1}}", "memory.hugepages.2M"},
                       Bad{"memory: {hugepages: 1024}", "memory.hugepages"},
                       Bad{"memory: {thp: sometimes}", "memory.thp"},
                       Bad{"memory: {numa_balancing: 2}", "memory.numa_balancing"},
                       Bad{"memory: {hugepage: {2M: 1}}", "memory.hugepage"}}) {
    auto bad = ParseProfile(b.yaml, "bad.yaml");
    ASSERT_FALSE(bad.ok()) << b.yaml;
    EXPECT_NE(bad.status().message().find(b.key), std::string::npos) << bad.status().message();
  }
}

TEST(ProfileTest, ASectionOfAnotherShapeIsAnErrorNotAThrow) {
  // Found by the profile fuzzer: a scalar or list where a section map belongs
  // made yaml-cpp throw out of the parser ("internal error").
  for (const char* yaml : {"gpus: 8\n", "nics: [a, b]\n", "gpus:\n  count: 8\nnics: x\nsystem: 3\n",
                           "network: {mtu: [1]}\n", "roce: {pfc_priority: {a: 1}}\n"}) {
    Result<Profile> p = InvalidArgumentError("unset");
    ASSERT_NO_THROW(p = ParseProfile(yaml, "odd.yaml")) << yaml;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << yaml;
      EXPECT_NE(p.status().message().find("odd.yaml"), std::string::npos) << p.status().message();
    }
  }
  std::ifstream in(std::string(FABCHECK_SOURCE_DIR) + "/fuzz/regressions/profile/scalar-section.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  Result<Profile> found = InvalidArgumentError("unset");
  ASSERT_NO_THROW(found = ParseProfile(text, "crash.yaml"));
  EXPECT_FALSE(found.ok());
}

TEST(ProfileTest, ShippedProfilesParse) {
  for (const char* name : {"dgx-h100-ib.yaml", "roce-8gpu.yaml"}) {
    auto p = LoadProfile(std::string(FABCHECK_SOURCE_DIR) + "/profiles/" + name);
    EXPECT_TRUE(p.ok()) << name << ": " << p.status().ToString();
  }
}

// ---- dcbnl ---------------------------------------------------------------------

std::string Attr(uint16_t type, const std::string& payload) {
  std::string out(NLA_HDRLEN, '\0');
  uint16_t len = static_cast<uint16_t>(NLA_HDRLEN + payload.size());
  std::memcpy(out.data(), &len, 2);
  std::memcpy(out.data() + 2, &type, 2);
  out += payload;
  out.append(NLA_ALIGN(payload.size()) - payload.size(), '\0');
  return out;
}

std::string Message(uint16_t type, const std::string& payload) {
  struct nlmsghdr h {};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + payload.size());
  h.nlmsg_type = type;
  std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
  return out + payload;
}

TEST(DcbTest, ParsesPfcAndAppTable) {
  struct ieee_pfc pfc {};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x08;  // priority 3
  struct dcb_app app {};
  app.selector = IEEE_8021QAZ_APP_SEL_DSCP;
  app.priority = 3;
  app.protocol = 26;
  std::string ieee = Attr(DCB_ATTR_IEEE_PFC, std::string(reinterpret_cast<const char*>(&pfc), sizeof(pfc))) +
                     Attr(DCB_ATTR_IEEE_APP_TABLE,
                          Attr(DCB_ATTR_IEEE_APP, std::string(reinterpret_cast<const char*>(&app), sizeof(app))));
  struct dcbmsg dcb {};
  dcb.cmd = DCB_CMD_IEEE_GET;
  std::string payload(reinterpret_cast<const char*>(&dcb), sizeof(dcb));
  payload += Attr(DCB_ATTR_IFNAME, std::string("eth0\0", 5)) + Attr(DCB_ATTR_IEEE | NLA_F_NESTED, ieee);
  auto info = ParseDcbIeeeReply(Message(RTM_GETDCB, payload), "eth0");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->pfc_cap, 8);
  EXPECT_EQ(info->PfcPriorities(), "3");
  ASSERT_EQ(info->apps.size(), 1u);
  EXPECT_EQ(info->Trust(), "dscp");
  auto round = DcbFromJson(DcbToJson(*info));
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round->pfc_en, info->pfc_en);
  EXPECT_EQ(round->Trust(), "dscp");
  // A capture's application table with numbers out of range is refused, not wrapped.
  for (const char* apps : {R"([{"selector": 300, "priority": 3, "protocol": 26}])",
                           R"([{"selector": 5, "priority": -1, "protocol": 26}])",
                           R"([{"selector": 5, "priority": 3, "protocol": 1e12}])",
                           R"([{"selector": "dscp", "priority": 3, "protocol": 26}])"}) {
    auto bad = DcbFromJson(std::string(R"({"pfc_en": 8, "apps": )") + apps + "}");
    ASSERT_FALSE(bad.ok()) << apps;
    EXPECT_NE(bad.status().message().find("application table"), std::string::npos) << bad.status().message();
  }
}

TEST(DcbTest, KernelErrorsBecomeStatuses) {
  struct nlmsgerr err {};
  err.error = -EOPNOTSUPP;
  auto info = ParseDcbIeeeReply(Message(NLMSG_ERROR, std::string(reinterpret_cast<const char*>(&err), sizeof(err))), "veth0");
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("EOPNOTSUPP"), std::string::npos);
  EXPECT_NE(info.status().message().find("veth0"), std::string::npos);
  EXPECT_FALSE(ParseDcbIeeeReply("short", "x").ok());
}

TEST(DcbTest, RequestLayout) {
  std::string req = BuildDcbIeeeGetRequest("eth0", 7);
  struct nlmsghdr h {};
  std::memcpy(&h, req.data(), sizeof(h));
  EXPECT_EQ(h.nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(h.nlmsg_len, req.size());
  EXPECT_EQ(static_cast<uint8_t>(req[NLMSG_HDRLEN + 1]), DCB_CMD_IEEE_GET);
}

TEST(DcbTest, LiveQueryOnLoopbackIsAnErrorNotAHang) {
  // lo has no DCB: the kernel answers EOPNOTSUPP (or the socket is refused
  // in a sandbox); either way an error, never a made-up answer.
  auto info = QueryDcbLive("lo");
  EXPECT_FALSE(info.ok());
}

}  // namespace
}  // namespace fabcheck::checks
