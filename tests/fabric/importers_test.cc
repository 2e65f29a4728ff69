// Importers over real outputs: ibnetdiscover captures of an EDR fat tree and a
// single-switch QDR fabric, lldpcli in both JSON shapes, kubectl node lists
// labelled the way Topograph and GKE label them (tests/data/fabric).
#include "fabric/importers.h"

#include <gtest/gtest.h>

#include <random>

#include "base/input.h"

namespace fabcheck::fabric {
namespace {

std::string Data(const std::string& name) {
  auto text = ReadFileBounded(std::string(FABCHECK_TESTDATA_DIR) + "/fabric/" + name);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

const Member* Find(const Fabric& f, const std::string& name) {
  for (const auto& m : f.members) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

TEST(Ibnetdiscover, FatTreeLeavesAndSpines) {
  auto r = ImportIbnetdiscover(Data("ibnetdiscover-edr.txt"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Fabric& f = r->fabric;
  EXPECT_EQ(f.rails, 1);
  EXPECT_EQ(f.members.size(), 36u);  // 24 hosts on one leaf, 12 on the other
  // Every switch says "SwitchIB Mellanox Technologies", so they keep their ids.
  ASSERT_NE(Find(f, "node018"), nullptr);
  EXPECT_EQ(Find(f, "node018")->leaves[0], "S-ec0d9a0300ec8240");
  EXPECT_EQ(Find(f, "gpu041")->leaves[0], "S-ec0d9a0300f548e0");
  ASSERT_EQ(f.spines.size(), 1u);
  EXPECT_EQ(f.spines[0], (std::vector<std::string>{"S-ec0d9a0300ec81e0", "S-ec0d9a0300ec8200"}));
  EXPECT_TRUE(NaturalLess(f.members[0].name, f.members[1].name) || f.members[0].name < f.members[1].name);
}

TEST(Ibnetdiscover, CaBlocksAndUniqueSwitchNames) {
  auto r = ImportIbnetdiscover(Data("ibnetdiscover-qdr.txt"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->fabric.members.size(), 5u);
  EXPECT_EQ(Find(r->fabric, "ip-160")->leaves[0], "Infiniscale-IV Mellanox Technologies");
  EXPECT_TRUE(r->fabric.spines.empty());
}

TEST(Ibnetdiscover, HostsWithFewerPortsThanRailsAreNotedNotDropped) {
  auto r = ImportIbnetdiscover(Data("ibnetdiscover-qdr.txt"), {.rails = 2});
  EXPECT_FALSE(r.ok());  // nobody has two ports: no member left
  // Give ip-160 a second port, cabled from the switch block.
  std::string text = Data("ibnetdiscover-qdr.txt");
  text.insert(text.find("\n\nvendid"), "\n[2]     \"H-0002c903000d7aac\"[2](2c903000d7aae)      # \"ip-160 HCA-1\" lid 7 4xQDR");
  auto two = ImportIbnetdiscover(text, {.rails = 2});
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ(two->fabric.members.size(), 1u);
  EXPECT_EQ(two->notes.size(), 4u);
  EXPECT_NE(two->notes[0].find("fewer than the 2 rails"), std::string::npos);
}

TEST(Ibnetdiscover, GarbageIsAClearError) {
  auto r = ImportIbnetdiscover("hello\nworld\n", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no Switch or Ca block"), std::string::npos);
  auto bad = ImportIbnetdiscover("[1] \"H-0001\"[1]\n", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos);
}

TEST(Lldp, BothJsonShapesRailsInOrder) {
  std::vector<LldpHost> hosts = {{"gpu01", Data("lldp-gpu01.json")}, {"gpu02", Data("lldp-gpu02.json")}};
  auto r = ImportLldp(hosts, {"ens1f0np0", "ens2f0np0"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->fabric.rails, 2);
  EXPECT_EQ(Find(r->fabric, "gpu01")->leaves, (std::vector<std::string>{"leaf-r0-01", "leaf-r1-01"}));
  EXPECT_EQ(Find(r->fabric, "gpu02")->leaves, (std::vector<std::string>{"leaf-r0-01", "leaf-r1-01"}));
  // Without --iface every interface with a neighbour is a rail, the management port too.
  auto all = ImportLldp(hosts, {});
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->fabric.rails, 3);
  EXPECT_EQ(Find(all->fabric, "gpu02")->leaves[0], "mgmt-sw01");
}

TEST(Lldp, MissingInterfaceAndGarbageNameTheHost) {
  auto r = ImportLldp({{"gpu01", Data("lldp-gpu01.json")}}, {"ens9f0"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lldp gpu01: no neighbour on ens9f0"), std::string::npos);
  auto g = ImportLldp({{"gpu07", "{\"nope\": 1}"}}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("lldp gpu07: not lldpcli JSON"), std::string::npos);
}

TEST(K8s, TopographLabelsAndUnlabelledNodesNoted) {
  auto r = ImportK8sNodes(Data("k8s-nodes.json"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->fabric.source, "kubernetes node label network.topology.nvidia.com/block");
  ASSERT_EQ(r->fabric.members.size(), 3u);
  EXPECT_EQ(Find(r->fabric, "gpu-node-a2")->leaves[0], "s1");
  EXPECT_EQ(Find(r->fabric, "gpu-node-b1")->address, "10.1.0.21");
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("cpu-control-1"), std::string::npos);
  auto rails = ImportK8sNodes(Data("k8s-nodes.json"), {.leaf_label = "", .rails = 2});
  ASSERT_TRUE(rails.ok());
  EXPECT_EQ(Find(rails->fabric, "gpu-node-a1")->leaves[1], "s1/r1");
}

TEST(K8s, GkeSubblockAndExplicitLabel) {
  auto r = ImportK8sNodes(Data("gke-nodes.json"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Find(r->fabric, "gke-a3-pool-7f1c-0002")->leaves[0], "5e6f7a8b");
  auto block = ImportK8sNodes(Data("gke-nodes.json"), {.leaf_label = "cloud.google.com/gce-topology-block"});
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(Find(block->fabric, "gke-a3-pool-7f1c-0002")->leaves[0], "8f1c0b6e");
  auto none = ImportK8sNodes(Data("gke-nodes.json"), {.leaf_label = "example.com/rack"});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("none of 2 nodes carries example.com/rack"), std::string::npos);
  auto garbage = ImportK8sNodes("[]", {});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("kubectl get nodes -o json"), std::string::npos);
}

// Cut and mangled real inputs: every importer answers (a fabric or an error
// naming the input), never crashes or hangs.
TEST(Importers, TruncatedAndMangledInputsAreAnswered) {
  std::mt19937 rng(3);
  const std::string ib = Data("ibnetdiscover-edr.txt"), lldp = Data("lldp-gpu02.json"), k8s = Data("k8s-nodes.json");
  for (const std::string* text : {&ib, &lldp, &k8s}) {
    for (size_t cut = 0; cut < text->size(); cut += 97) {
      std::string t = text->substr(0, cut);
      for (int flips = 0; flips < 3; ++flips) {
        if (!t.empty()) t[rng() % t.size()] = static_cast<char>(rng() % 256);
      }
      auto a = ImportIbnetdiscover(t, {});
      auto b = ImportLldp({{"h", t}}, {});
      auto c = ImportK8sNodes(t, {});
      auto d = ParseFabric(t, "t");
      for (const Status& s : {a.status(), b.status(), c.status(), d.status()}) {
        if (!s.ok()) {
          EXPECT_FALSE(s.message().empty());
        }
      }
    }
  }
}

}  // namespace
}  // namespace fabcheck::fabric
