#include "fabric/fabric.h"

#include <gtest/gtest.h>

namespace fabcheck::fabric {
namespace {

constexpr char kTwoRails[] = R"(schema: fabcheck.fabric/v1
rails: 2
spines:
  - [spine-r0-00, spine-r0-01]
  - [spine-r1-00, spine-r1-01]
members:
  - {name: n0000, leaves: [leaf-r0-00, leaf-r1-00]}
  - {name: n0001, leaves: [leaf-r0-00, leaf-r1-00]}
  - {name: n0002, address: 10.0.0.3, leaves: [leaf-r0-01, leaf-r1-01]}
  - {name: n0003, leaf: leaf-x}
)";

TEST(Fabric, ParsesYamlAndIndexesLeaves) {
  auto f = ParseFabric(kTwoRails, "t.yaml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->rails, 2);
  ASSERT_EQ(f->members.size(), 4u);
  EXPECT_EQ(f->members[3].leaves, (std::vector<std::string>{"leaf-x", "leaf-x"}));
  FabricIndex index(*f);
  EXPECT_EQ(index.leaf_count(0), 3);
  EXPECT_EQ(index.leaf(0, 0), index.leaf(1, 0));
  EXPECT_NE(index.leaf(0, 1), index.leaf(2, 1));
  EXPECT_EQ(index.leaf_members(1, index.leaf(2, 1)), std::vector<int>{2});
  EXPECT_EQ(index.spines(1)[1], "spine-r1-01");
  EXPECT_EQ(index.Find("10.0.0.3"), 2);
  EXPECT_EQ(index.Find("n0001"), 1);
  EXPECT_EQ(index.Find("nobody"), -1);
}

TEST(Fabric, RoundTripsThroughYamlAndJson) {
  auto f = ParseFabric(kTwoRails, "t.yaml");
  ASSERT_TRUE(f.ok());
  auto again = ParseFabric(ToYaml(*f), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << ToYaml(*f);
  EXPECT_EQ(ToJson(*again)["members"], ToJson(*f)["members"]);
  auto from_json = ParseFabric(ToJson(*f).dump(), "t.json");
  ASSERT_TRUE(from_json.ok()) << from_json.status().message();
  EXPECT_EQ(from_json->spines, f->spines);
}

void ExpectError(const std::string& text, const std::string& words) {
  auto f = ParseFabric(text, "bad.yaml");
  ASSERT_FALSE(f.ok()) << text;
  EXPECT_NE(f.status().message().find(words), std::string::npos) << f.status().message();
}

TEST(Fabric, MalformedFilesNameTheObjectAndTheFix) {
  ExpectError("members: []", "schema must be fabcheck.fabric/v1");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: []", "members must be a non-empty list");
  ExpectError("schema: fabcheck.fabric/v1\nrails: 0\nmembers: [{name: a, leaf: l}]", "rails must be");
  ExpectError("schema: fabcheck.fabric/v1\nrails: 2\nmembers: [{name: a, leaves: [l]}]",
              "members[0] (a) lists 1 leaves for 2 rails");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: [{leaf: l}]", "members[0] has no name");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: [{name: a}]", "has no leaves");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: [{name: a, leaf: l, row: 3}]", "unknown key 'row'");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: [{name: a, leaf: l}, {name: a, leaf: m}]", "listed twice");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: [{name: a, leaf: l}, {name: a, address: 1.2.3.4, leaf: m}]",
              "give each of them its address");
  ExpectError("schema: fabcheck.fabric/v1\nspines: [[s]]\nrails: 2\nmembers: [{name: a, leaf: l}]",
              "spines lists 1 rails for 2 rails");
  ExpectError("schema: fabcheck.fabric/v1\nmembers: [{name: a, leaf: l}\n", "not valid YAML or JSON at line");
  ExpectError("[1, 2]", "a fabric file is a mapping");
}

// Spines may list the router addresses they answer TTL probes from: the
// sweep maps a flow's traced hop to its spine with them.
TEST(Fabric, SpineAddressesMapTracedHopsToSpines) {
  constexpr char kText[] = R"(schema: fabcheck.fabric/v1
spines:
  - [{name: spine-0, addresses: [10.78.10.2, 10.78.20.2]}, spine-1]
members:
  - {name: a, leaf: leaf-0}
  - {name: b, leaf: leaf-1}
)";
  auto f = ParseFabric(kText, "s.yaml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  FabricIndex index(*f);
  EXPECT_TRUE(index.knows_routers(0));
  EXPECT_EQ(index.SpineOfRouter(0, "10.78.20.2"), 0);
  EXPECT_EQ(index.SpineOfRouter(0, "10.78.1.254"), -1);  // a leaf's address: not a spine
  EXPECT_EQ(index.SpineOfRouter(3, "10.78.20.2"), -1);
  for (const std::string& text : {ToYaml(*f), ToJson(*f).dump()}) {
    auto again = ParseFabric(text, "again");
    ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
    EXPECT_EQ(again->spine_addresses, f->spine_addresses);
    EXPECT_EQ(again->spines, f->spines);
  }
  auto plain = ParseFabric(kTwoRails, "t.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(FabricIndex(*plain).knows_routers(0));
  const std::pair<const char*, const char*> bad[] = {
      {"spines:\n  - [{name: s0, addresses: [10.0.0.1]}, {name: s1, addresses: [10.0.0.1]}]\n", "both s0 and s1"},
      {"spines:\n  - [{name: s0, adress: [10.0.0.1]}]\n", "unknown key 'adress'"},
      {"spines:\n  - [{addresses: [10.0.0.1]}]\n", "has no name"},
  };
  for (const auto& [spines, why] : bad) {
    auto r = ParseFabric(std::string("schema: fabcheck.fabric/v1\n") + spines + "members:\n  - {name: a, leaf: l}\n",
                         "bad.yaml");
    ASSERT_FALSE(r.ok()) << spines;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

// Three tiers: cores may list their router addresses too, so a flow between
// pods traced to its fourth hop names its spine, core and far spine.
TEST(Fabric, CoreAddressesMapTheThirdHopToTheCore) {
  constexpr char kText[] = R"(schema: fabcheck.fabric/v1
spines:
  - [{name: spine-0, addresses: [10.0.10.1]}, {name: spine-1, addresses: [10.0.11.1]},
     {name: spine-2, addresses: [10.0.12.1]}, {name: spine-3, addresses: [10.0.13.1]}]
cores:
  - [{name: core-0, addresses: [10.0.200.1, 10.0.200.2]}, core-1]
members:
  - {name: a, leaf: leaf-0}
  - {name: b, leaf: leaf-1}
)";
  auto f = ParseFabric(kText, "c.yaml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  FabricIndex index(*f);
  EXPECT_TRUE(index.knows_routers(0));
  EXPECT_TRUE(index.knows_core_routers(0));
  EXPECT_EQ(index.CoreOfRouter(0, "10.0.200.2"), 0);
  EXPECT_EQ(index.CoreOfRouter(0, "10.0.10.1"), -1);  // a spine's, not a core's
  EXPECT_EQ(index.CoreOfRouter(1, "10.0.200.2"), -1);
  // Between pods: leaf, spine-1, core-0, spine-2 (the far pod's), far leaf.
  auto p = index.PathOfHops(0, {"10.1.0.254", "10.0.11.1", "10.0.200.1", "10.0.12.1", "10.2.0.254"});
  EXPECT_EQ(p.spine, 1);
  EXPECT_EQ(p.core, 0);
  EXPECT_EQ(p.spine_down, 2);
  // Inside a pod: leaf, spine, far leaf; no core.
  p = index.PathOfHops(0, {"10.1.0.254", "10.0.13.1", "10.1.1.254"});
  EXPECT_EQ(p.spine, 3);
  EXPECT_EQ(p.core, -1);
  EXPECT_EQ(p.spine_down, -1);
  // A core that did not answer (rate-limited ICMP): the far spine is not taken for the first.
  p = index.PathOfHops(0, {"", "10.0.11.1", "", "10.0.12.1"});
  EXPECT_EQ(p.spine, 1);
  EXPECT_EQ(p.core, -1);
  EXPECT_EQ(p.spine_down, -1);
  // A far spine that did not answer: the way down is unknown, so nothing is said.
  p = index.PathOfHops(0, {"10.1.0.254", "10.0.11.1", "10.0.200.1", ""});
  EXPECT_EQ(p.spine, -1);
  EXPECT_EQ(p.core, -1);
  EXPECT_EQ(p.spine_down, -1);
  // A core seen before any spine is not on a path this fabric has.
  p = index.PathOfHops(0, {"10.0.200.1", "10.0.11.1"});
  EXPECT_EQ(p.core, -1);
  EXPECT_EQ(p.spine, 1);
  for (const std::string& text : {ToYaml(*f), ToJson(*f).dump()}) {
    auto again = ParseFabric(text, "again");
    ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
    EXPECT_EQ(again->core_addresses, f->core_addresses);
    EXPECT_EQ(again->cores, f->cores);
  }
  const std::pair<const char*, const char*> bad[] = {
      {"cores:\n  - [{name: c0, addresses: [10.0.0.1]}]\n", "both s0 and c0"},
      {"cores:\n  - [{name: c0, adresses: [10.0.0.9]}]\n", "unknown key 'adresses'"},
      {"cores:\n  - [{addresses: [10.0.0.9]}]\n", "has no name"},
      {"cores:\n  - c0\n", "must be a list of core names"},
  };
  for (const auto& [cores, why] : bad) {
    auto r = ParseFabric(std::string("schema: fabcheck.fabric/v1\nspines:\n  - [{name: s0, addresses: [10.0.0.1]}]\n") +
                             cores + "members:\n  - {name: a, leaf: l}\n",
                         "bad.yaml");
    ASSERT_FALSE(r.ok()) << cores;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

TEST(Fabric, TwoMembersWithOneNameAreFoundByAddressOnly) {
  auto f = ParseFabric("schema: fabcheck.fabric/v1\nmembers: [{name: a, address: 10.0.0.1, leaf: l},"
                       " {name: a, address: 10.0.0.2, leaf: l}]", "t");
  ASSERT_TRUE(f.ok()) << f.status().message();
  FabricIndex index(*f);
  EXPECT_EQ(index.Find("a"), -1);
  EXPECT_EQ(index.Find("10.0.0.2"), 1);
}

}  // namespace
}  // namespace fabcheck::fabric
