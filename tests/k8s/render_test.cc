// What `fabcheck k8s render` writes passes lint with no error, the rendered
// examples in deploy/kubernetes/render-examples/ are up to date, and
// everything under deploy/kubernetes/ passes lint with no error.
#include "k8s/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "test_util.h"

namespace fabcheck::k8s {
namespace {

using testing::Describe;
using testing::ReadFile;

const std::string kDeploy = std::string(FABCHECK_SOURCE_DIR) + "/deploy/kubernetes";

std::string RenderAll(const RenderProfile& p) {
  std::string all;
  for (const auto& f : Render(p)) all += "---\n" + f.content;
  return all;
}

// Pinned as a go-live deployment pins it (k8s.image.unpinned).
const std::string kPinnedImage = "registry.example.com/fabcheck:0.1.0@sha256:" + std::string(64, 'c');

TEST(Render, EveryNetworkTypeLintsClean) {
  for (const char* type : {"sriov", "ib-sriov", "host-device", "macvlan", "ipvlan"}) {
    std::string text = "image: " + kPinnedImage + "\nnetworkType: " + type +
                       "\nrdmaResource: " +
                       (std::string(type) == "macvlan" || std::string(type) == "ipvlan" ? "rdma/rdma_shared_device_a"
                                                                                        : "nvidia.com/rdma_vf") +
                       "\nmaster: ens1f0np0\nmtu: 9000\nnodes: 4\nnodeSelector:\n  nvidia.com/gpu.present: \"true\"\n";
    auto p = ParseRenderProfile(text, "p.yaml");
    ASSERT_TRUE(p.ok()) << p.status().message();
    LintResult r = testing::LintText(RenderAll(*p));
    EXPECT_EQ(r.Count(Level::kError), 0) << type << ":\n" << Describe(r);
    EXPECT_EQ(r.Count(Level::kWarning), 0) << type << ":\n" << Describe(r);
    EXPECT_EQ(testing::CountId(r, "k8s.multinode.no-rdma"), 0) << type << ":\n" << Describe(r);
    EXPECT_GE(r.set->objects.size(), 7u);
  }
}

TEST(Render, AnImageByTagIsWhatLintCallsUnpinned) {
  // render warns about a tag; lint of what it wrote says the same, once per
  // pod template that runs the image, and nothing else.
  auto p = ParseRenderProfile("image: registry.example.com/fabcheck:0.1.0\nnetworkType: sriov\n"
                              "rdmaResource: nvidia.com/rdma_vf\nmaster: ens1f0np0\nmtu: 9000\nnodes: 4\n"
                              "nodeSelector:\n  nvidia.com/gpu.present: \"true\"\n",
                              "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  LintResult r = testing::LintText(RenderAll(*p));
  EXPECT_GT(testing::CountId(r, "k8s.image.unpinned"), 0) << Describe(r);
  for (const auto& f : r.findings) EXPECT_EQ(f.finding.id, "k8s.image.unpinned") << Describe(r);
  EXPECT_NE(r.findings.front().finding.message.find("registry.example.com/fabcheck:0.1.0"), std::string::npos);
}

TEST(Render, ImageDefaultsToTheBuiltImage) {
  auto p = ParseRenderProfile("rdmaResource: rdma/a\n", "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->image, DefaultImage());
  EXPECT_EQ(DefaultImage().rfind("localhost/fabcheck:", 0), 0u) << DefaultImage();
  EXPECT_FALSE(ImagePinned(p->image));
  for (const auto& f : Render(*p)) {
    if (f.content.find("image:") == std::string::npos) continue;
    EXPECT_NE(f.content.find("image: " + DefaultImage() + "\n"), std::string::npos) << f.name;
  }
}

TEST(Render, ImageReferencesAreChecked) {
  const std::string digest = "@sha256:" + std::string(64, 'a');
  for (const auto& ok : std::vector<std::string>{"fabcheck", "localhost/fabcheck:0.1.0", "localhost/fabcheck:0.1.0" + digest,
                               "registry.example.com:5000/team/fabcheck:v1.2_3" + digest, "ghcr.io/a/b" + digest}) {
    EXPECT_TRUE(ValidateImageReference(ok).ok()) << ok;
  }
  EXPECT_TRUE(ImagePinned("localhost/fabcheck:0.1.0" + digest));
  for (const auto& bad : std::vector<std::string>{"", "Fabcheck:1", "fabcheck:0.1.0@sha256:abc", "fabcheck@sha512:" + std::string(128, 'a'),
                                "fabcheck:0.1.0@sha256:" + std::string(64, 'A'), "fabcheck:a:b", "fab check",
                                "-fabcheck", "fabcheck:" + std::string(129, 't'),
                                std::string(100000, 'a')}) {
    auto st = ValidateImageReference(bad);
    EXPECT_FALSE(st.ok()) << bad;
    if (!st.ok()) {
      EXPECT_NE(st.message().find("image reference"), std::string::npos) << st.message();
    }
  }
  auto p = ParseRenderProfile("image: fabcheck@sha256:12\nrdmaResource: rdma/a\n", "p.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("p.yaml:1"), std::string::npos) << p.status().message();
}

TEST(Render, ProfileMistakesAreNamed) {
  auto bad = ParseRenderProfile("image: x\nrdmaResource: not a resource\n", "p.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("p.yaml:2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseRenderProfile("image: x\nrdmaResource: rdma/a\ngpus: 8\n", "p.yaml").ok());
  EXPECT_FALSE(ParseRenderProfile("image: x\nrdmaResource: rdma/a\nnetworkType: macvlan\n", "p.yaml").ok());
  EXPECT_FALSE(ParseRenderProfile("image: x\nrdmaResource: rdma/a\nnodes: 1\n", "p.yaml").ok());
  EXPECT_FALSE(ParseRenderProfile("image: \"x\\ny: 1\"\nrdmaResource: rdma/a\n", "p.yaml").ok());
}

TEST(Render, ExamplesInTheRepositoryAreUpToDate) {
  std::string root = kDeploy + "/render-examples";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no render examples";
  int examples = 0;
  for (const auto& dir : std::filesystem::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    std::string profile_path = dir.path().string() + "/profile.yaml";
    auto p = ParseRenderProfile(ReadFile(profile_path), profile_path);
    ASSERT_TRUE(p.ok()) << p.status().message();
    for (const auto& f : Render(*p)) {
      EXPECT_EQ(ReadFile(dir.path().string() + "/" + f.name), f.content)
          << dir.path() << "/" << f.name << " is stale: run 'fabcheck k8s render --cluster-profile " << profile_path
          << " -o " << dir.path().string() << "'";
    }
    ++examples;
  }
  EXPECT_GE(examples, 2);
}

TEST(Deploy, EverythingUnderDeployKubernetesLintsWithoutError) {
  // Each rendered example is its own deployment (its own NADs); the rest of
  // deploy/kubernetes/ is fabcheck's hand-written set. Lint each set apart, so
  // one example's NADs do not make another set's references look wrong.
  std::vector<std::vector<std::string>> sets(1);
  for (const auto& entry : std::filesystem::directory_iterator(kDeploy)) {
    std::string path = entry.path().string();
    if (entry.is_directory() && entry.path().filename() == "render-examples") {
      for (const auto& example : std::filesystem::directory_iterator(path)) sets.push_back({example.path().string()});
    } else {
      sets[0].push_back(path);
    }
  }
  size_t objects = 0;
  for (const auto& paths : sets) {
    if (paths.empty()) continue;
    auto r = LintPaths(paths, LintConfig{}, *FindProfile("generic"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    objects += r->set->objects.size();
    EXPECT_EQ(r->Count(Level::kError), 0) << paths[0] << ":\n" << Describe(*r);
  }
  EXPECT_GT(objects, 0u);
}

TEST(Deploy, LintingTheWholeFolderIsClean) {
  // What a user runs: `fabcheck k8s lint deploy/kubernetes/`, one set. No
  // finding at any level (the exporter's read-only /sys mount is suppressed
  // with its reason) but k8s.image.unpinned: the files name the tag
  // scripts/build-image.sh builds, and a deployment pins its digest
  // (kustomization.yaml, or `k8s render --image REPO@sha256:...`), which lint
  // cannot see. The data-plane NAD the agent and sweep attach is defined in
  // the folder, so k8s.nad.missing has something to check.
  auto only_unpinned = [](const LintResult& result) {
    return std::all_of(result.findings.begin(), result.findings.end(),
                       [](const auto& f) { return f.finding.id == "k8s.image.unpinned"; });
  };
  auto r = LintPaths({kDeploy}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(only_unpinned(*r)) << Describe(*r);
  EXPECT_GT(testing::CountId(*r, "k8s.image.unpinned"), 0) << Describe(*r);
  EXPECT_TRUE(r->set->skipped_documents.empty());
  EXPECT_NE(r->set->Find("NetworkAttachmentDefinition", "fabcheck", "rdma-net"), nullptr);
  for (const auto& s : r->suppressed) {
    EXPECT_EQ(s.finding.id, "k8s.hostpath.devices") << s.finding.message;
  }
  // The hand-written files alone (without the rendered examples' NADs) still
  // resolve fabcheck/rdma-net.
  std::vector<std::string> own;
  for (const auto& entry : std::filesystem::directory_iterator(kDeploy)) {
    if (entry.is_regular_file()) own.push_back(entry.path().string());
  }
  auto hand = LintPaths(own, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(hand.ok());
  EXPECT_TRUE(only_unpinned(*hand)) << Describe(*hand);
  EXPECT_TRUE(hand->set->Find("NetworkAttachmentDefinition", "fabcheck", "rdma-net"));
}

TEST(Examples, RealisticManifestsLintAsExpected) {
  // tests/k8s/manifests/realistic/: full stacks modelled on the Network Operator, SR-IOV and Multus docs.
  std::string dir = std::string(FABCHECK_SOURCE_DIR) + "/tests/k8s/manifests/realistic";
  auto r = LintPaths({dir + "/clean"}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->set->objects.size(), 5u);
  EXPECT_EQ(r->Count(Level::kError), 0) << Describe(*r);
  EXPECT_EQ(r->Count(Level::kWarning), 0) << Describe(*r);
  auto broken = LintPaths({dir + "/broken"}, LintConfig{}, *FindProfile("generic"));
  ASSERT_TRUE(broken.ok());
  std::set<std::string> ids;
  for (const auto& f : broken->findings) ids.insert(f.finding.id);
  for (const char* id : {"k8s.rdma.no-ipc-lock", "k8s.nccl.socket-ifname", "k8s.nad.resource-not-requested",
                         "k8s.shm.missing", "yaml.duplicate-key", "k8s.psa.incompatible", "cluster.nad.mtu"}) {
    EXPECT_TRUE(ids.count(id)) << id << " missing:\n" << Describe(*broken);
  }
}

}  // namespace
}  // namespace fabcheck::k8s
