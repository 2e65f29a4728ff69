// Every rule fires on its positive manifest and stays quiet on its negative
// one (tests/k8s/manifests/<ID>/{positive,negative}.yaml, optional config.yaml).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <set>

#include "k8s/registry.h"
#include "test_util.h"

namespace fabcheck::k8s {
namespace {

using testing::CountId;
using testing::Describe;
using testing::ReadFile;

const std::string kManifests = std::string(FABCHECK_SOURCE_DIR) + "/tests/k8s/manifests/";

LintResult LintRuleFile(const std::string& id, const std::string& which) {
  std::string dir = kManifests + id + "/";
  LintConfig config;
  if (std::filesystem::exists(dir + "config.yaml")) {
    auto loaded = LoadLintConfig(dir + "config.yaml");
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    if (loaded.ok()) config = *loaded;
  }
  std::string profile = config.profile.empty() ? "generic" : config.profile;
  return testing::LintText(ReadFile(dir + which), profile, config, id + "/" + which);
}

class RuleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RuleTest, FiresOnPositive) {
  const std::string& id = GetParam();
  ASSERT_TRUE(std::filesystem::exists(kManifests + id + "/positive.yaml")) << "missing positive manifest for " << id;
  LintResult r = LintRuleFile(id, "positive.yaml");
  EXPECT_GT(CountId(r, id), 0) << id << " did not fire; findings:\n" << Describe(r);
  for (const auto& f : r.findings) {
    if (f.finding.id != id) continue;
    ASSERT_TRUE(f.finding.location.has_value());
    EXPECT_GT(f.finding.location->line, 0) << "finding without a line: " << f.finding.message;
    EXPECT_FALSE(f.finding.remedy.empty());
    EXPECT_FALSE(f.finding.object.empty());
  }
}

TEST_P(RuleTest, QuietOnNegative) {
  const std::string& id = GetParam();
  ASSERT_TRUE(std::filesystem::exists(kManifests + id + "/negative.yaml")) << "missing negative manifest for " << id;
  LintResult r = LintRuleFile(id, "negative.yaml");
  EXPECT_EQ(CountId(r, id), 0) << id << " fired on its negative manifest:\n" << Describe(r);
  // Negative manifests are clean examples: no other rule may call them wrong either.
  EXPECT_EQ(r.Count(Level::kError), 0) << Describe(r);
}

std::vector<std::string> RuleIds() {
  std::vector<std::string> ids;
  for (const auto& r : AllRules()) ids.push_back(r.info.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleTest, ::testing::ValuesIn(RuleIds()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

TEST(Registry, IdsAreUniqueAndDocumented) {
  std::set<std::string> seen;
  for (const auto& r : AllRules()) {
    EXPECT_TRUE(seen.insert(r.info.id).second) << "duplicate rule " << r.info.id;
    EXPECT_FALSE(r.info.title.empty()) << r.info.id;
    EXPECT_FALSE(r.info.why.empty()) << r.info.id;
    EXPECT_FALSE(r.info.remedy.empty()) << r.info.id;
    EXPECT_FALSE(r.info.evidence.empty()) << r.info.id;
  }
  // The issue fixes these IDs; all of them must exist.
  for (const char* id :
       {"k8s.rdma.no-ipc-lock", "k8s.rdma.ipc-lock-nonroot", "k8s.shm.missing", "k8s.privileged", "k8s.host-network",
        "k8s.hostpath.devices", "k8s.rdma.no-network", "k8s.nad.missing", "k8s.nad.cross-namespace",
        "k8s.nad.resource-not-requested", "k8s.nccl.socket-ifname", "k8s.nccl.transport-disabled",
        "k8s.nccl.gid-index-fixed", "k8s.nccl.ib-hca", "k8s.rails.gpu-nic-ratio", "k8s.env.shell-syntax",
        "k8s.multinode.no-rdma", "k8s.psa.incompatible", "kubelet.topology.not-guaranteed",
        "kubelet.topology.unsatisfiable", "kubelet.memory-manager.no-reserved", "cluster.rdma-shared.hca-max",
        "cluster.rdma-shared.selectors", "cluster.sriov.resource-mismatch", "cluster.sriov.not-rdma",
        "cluster.nad.mtu", "cluster.ipam.range", "cluster.nad.config-invalid", "cluster.tenant.no-isolation",
        "cluster.rbac.network-admin", "yaml.duplicate-key", "schema.invalid"}) {
    EXPECT_NE(FindRule(id), nullptr) << id;
  }
}

}  // namespace
}  // namespace fabcheck::k8s
