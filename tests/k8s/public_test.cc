// Manifests modelled on public projects (tests/k8s/manifests/public/): each
// file says, in "# expect <profile>: ID ..." lines, the exact findings that
// `fabcheck k8s lint` must report. They pin the false positives found by
// linting the Network Operator, RDMA shared device plugin, SR-IOV, Multus,
// MPI Operator, Volcano, GPU Operator, CoreWeave, AKS, GKE and OCI examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "base/strings.h"
#include "test_util.h"

namespace fabcheck::k8s {
namespace {

using testing::Describe;
using testing::ReadFile;

const std::string kPublic = std::string(FABCHECK_SOURCE_DIR) + "/tests/k8s/manifests/public";

std::vector<std::string> Ids(const LintResult& r) {
  std::vector<std::string> ids;
  for (const auto& f : r.findings) ids.push_back(f.finding.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(Public, EachFixtureReportsExactlyItsExpectedRules) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kPublic)) {
    if (entry.path().extension() != ".yaml") continue;
    std::string path = entry.path().string();
    std::istringstream lines(ReadFile(path));
    std::string line;
    bool has_source = false;
    while (std::getline(lines, line)) {
      has_source = has_source || StartsWith(line, "# Source: https://github.com/");
      if (!StartsWith(line, "# expect ")) continue;
      auto colon = line.find(':');
      ASSERT_NE(colon, std::string::npos) << path << ": " << line;
      std::string profile(Trim(line.substr(9, colon - 9)));
      std::vector<std::string> expected;
      for (const auto& id : Split(line.substr(colon + 1), ' ', true)) {
        if (id != "-") expected.push_back(id);
      }
      std::sort(expected.begin(), expected.end());
      auto p = FindProfile(profile);
      ASSERT_TRUE(p.ok()) << path << ": " << p.status().message();
      auto r = LintPaths({path}, LintConfig{}, *p);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(Ids(*r), expected) << path << " (profile " << profile << "):\n" << Describe(*r);
      ++checked;
    }
    EXPECT_TRUE(has_source) << path << " needs a '# Source: https://github.com/...' line";
  }
  EXPECT_GE(checked, 12);
}

TEST(Public, InferredRdmaIsAWarningNamedAsAGuess) {
  auto r = LintPaths({kPublic + "/multus-sriov-intel.yaml"}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(r.ok());
  // Its image by tag (k8s.image.unpinned) is the file's other finding.
  ASSERT_EQ(Ids(*r), (std::vector<std::string>{"k8s.image.unpinned", "k8s.rdma.no-ipc-lock"})) << Describe(*r);
  for (const auto& f : r->findings) {
    if (f.finding.id != "k8s.rdma.no-ipc-lock") continue;
    EXPECT_EQ(f.level, Level::kWarning);
    EXPECT_NE(f.finding.message.find("probably"), std::string::npos);
  }
}

TEST(Public, NodeAgentsGetInfoNotWarnings) {
  auto r = LintPaths({kPublic + "/gpu-operator-mig-manager.yaml"}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(r.ok());
  // privileged, the writable /sys mount and the image by tag: info for a node agent.
  EXPECT_EQ(r->Count(Level::kInfo), 3) << Describe(*r);
  EXPECT_EQ(r->Count(Level::kWarning) + r->Count(Level::kError), 0) << Describe(*r);
}

TEST(Public, RepositoryFolderSkipsWhatIsNotKubernetes) {
  // Linting a checkout: Helm values, kustomize patches, Grafana files are
  // skipped (and listed), a kubeconfig needs no metadata.name, Multus's own
  // ClusterRole is a controller's, and a Go template gets a hint.
  auto r = LintPaths({kPublic + "/repo-layout"}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->set->skipped_documents.size(), 3u);
  int syntax = 0, schema = 0, unpinned = 0;
  for (const auto& f : r->findings) {
    // Multus's own DaemonSet (deploy/rbac.yaml) pulls its image by tag: info.
    if (f.finding.id == "k8s.image.unpinned") {
      ++unpinned;
      EXPECT_EQ(f.level, Level::kInfo);
      EXPECT_NE(f.finding.location->file.find("rbac.yaml"), std::string::npos) << Describe(*r);
      continue;
    }
    // Otherwise only the two Go templates are reported, each with the hint to lint the render.
    syntax += f.finding.id == "yaml.syntax";
    schema += f.finding.id == "schema.invalid";
    EXPECT_TRUE(f.finding.location->file.find("-template.yaml") != std::string::npos) << Describe(*r);
    EXPECT_NE(f.finding.message.find("helm template"), std::string::npos) << f.finding.message;
  }
  EXPECT_GE(syntax, 1) << Describe(*r);
  EXPECT_GE(schema, 1) << Describe(*r);
  EXPECT_EQ(unpinned, 1) << Describe(*r);
  EXPECT_EQ(syntax + schema + unpinned, static_cast<int>(r->findings.size())) << Describe(*r);
  // Named explicitly, a file that is not a Kubernetes object is still an error.
  auto explicit_file = LintPaths({kPublic + "/repo-layout/values.yaml"}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(explicit_file.ok());
  ASSERT_EQ(Ids(*explicit_file), std::vector<std::string>{"schema.invalid"}) << Describe(*explicit_file);
}

TEST(Public, MultusRoleBoundToAUserIsStillReported) {
  std::string rbac = ReadFile(kPublic + "/repo-layout/deploy/rbac.yaml");
  std::string user = rbac;
  user.replace(user.find("{kind: ServiceAccount, name: multus, namespace: kube-system}"),
               std::string("{kind: ServiceAccount, name: multus, namespace: kube-system}").size(),
               "{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}");
  EXPECT_EQ(testing::CountId(testing::LintText(rbac), "cluster.rbac.network-admin"), 0);
  EXPECT_EQ(testing::CountId(testing::LintText(user), "cluster.rbac.network-admin"), 1);
}

TEST(Public, SharedDevicePluginPodNeedsANetworkOnlyWhenTheLinkIsNotKnownToBeIb) {
  std::string text = ReadFile(kPublic + "/rdma-shared-dp-configmap.yaml");
  std::string pod = text.substr(text.rfind("---\n") + 4);
  EXPECT_EQ(testing::CountId(testing::LintText(pod), "k8s.rdma.no-network"), 1);  // the ConfigMap is not in the set
  EXPECT_EQ(testing::CountId(testing::LintText(text), "k8s.rdma.no-network"), 0);  // ib0/ib1: InfiniBand
}

TEST(Profiles, OpenShiftEnforcesAnEnforceLabelAsWritten) {
  // OpenShift's synchronizer sets only the warn and audit labels (OpenShift
  // docs, "Understanding and managing pod security admission"): a namespace
  // that enforces baseline rejects IPC_LOCK there too.
  std::string yaml = R"(apiVersion: v1
kind: Namespace
metadata:
  name: train
  labels: {pod-security.kubernetes.io/enforce: baseline}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: train}
spec:
  containers:
    - name: c
      image: busybox
      securityContext: {capabilities: {add: [IPC_LOCK]}}
)";
  for (const char* profile : {"generic", "openshift"}) {
    LintResult r = testing::LintText(yaml, profile);
    ASSERT_EQ(testing::CountId(r, "k8s.psa.incompatible"), 1) << profile << "\n" << Describe(r);
    for (const auto& f : r.findings) {
      if (f.finding.id == "k8s.psa.incompatible") EXPECT_EQ(f.level, Level::kError) << profile;
    }
  }
}

TEST(Config, GlobalNamespacesParamAllowsSharedNetworks) {
  std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: team-a
  annotations: {k8s.v1.cni.cncf.io/networks: "shared-nets/roce-a"}
spec:
  containers: [{name: c, image: busybox}]
)";
  EXPECT_EQ(testing::CountId(testing::LintText(pod), "k8s.nad.cross-namespace"), 1);
  auto config = ParseLintConfig("params: {k8s.nad.cross-namespace: {globalNamespaces: [shared-nets]}}\n", "c.yaml");
  ASSERT_TRUE(config.ok());
  ASSERT_TRUE(ValidateConfig(*config).ok());
  EXPECT_EQ(testing::CountId(testing::LintText(pod, "generic", *config), "k8s.nad.cross-namespace"), 0);
}

}  // namespace
}  // namespace fabcheck::k8s
