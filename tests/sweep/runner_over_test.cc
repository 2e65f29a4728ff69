// The coordinator loop over a scripted transport: the fabric is matched to
// the members (twins by address), strategies run through the same loop, and
// the verdict carries element findings and the suspects left unconfirmed.
#include <gtest/gtest.h>

#include <functional>

#include "sweep/agent_transport.h"
#include "sweep/runner.h"

namespace fabcheck::sweep {
namespace {

class ScriptedTransport : public Transport {
 public:
  using Speed = std::function<std::optional<double>(int a, int b, int round)>;
  ScriptedTransport(std::vector<std::string> names, Speed speed) : names_(std::move(names)), speed_(std::move(speed)) {}
  std::vector<model::SweepMember> Discover() override {
    std::vector<model::SweepMember> m;
    for (size_t i = 0; i < names_.size(); ++i) {
      model::SweepMember x;
      x.index = static_cast<int>(i);
      x.name = names_[i];
      x.control = "10.0.0." + std::to_string(i + 1) + ":18521";
      x.data_addresses = {"10.1.0." + std::to_string(i + 1)};
      m.push_back(x);
    }
    AssignDisplayNames(&m);
    return m;
  }
  int rails() const override { return 1; }
  std::vector<std::optional<model::SweepPairResult>> RunRound(const std::vector<TestSpec>& specs, int round) override {
    ++rounds_;
    std::vector<std::optional<model::SweepPairResult>> out;
    for (const auto& s : specs) {
      model::SweepPairResult p;
      p.a = s.a, p.b = s.b, p.rail = s.rail, p.round = round;
      p.bw_gbps = speed_(s.a, s.b, round);
      if (!p.bw_gbps) p.error = "connection reset";
      p.path_mtu = 9000;
      out.push_back(p);
    }
    return out;
  }
  bool Reachable(int) const override { return true; }
  double ElapsedSeconds() const override { return rounds_ * 10.0; }
  std::string TransportName() const override { return "scripted"; }

 private:
  std::vector<std::string> names_;
  Speed speed_;
  int rounds_ = 0;
};

fabric::Fabric OneLeaf(const std::vector<std::string>& names, const std::vector<std::string>& addresses = {}) {
  fabric::Fabric f;
  for (size_t i = 0; i < names.size(); ++i) {
    f.members.push_back({names[i], i < addresses.size() ? addresses[i] : "", {i < 4 ? "leaf-a" : "leaf-b"}});
  }
  return f;
}

TEST(RunSweepOver, TwinsAreMatchedByAddressAndNamedApart) {
  std::vector<std::string> names = {"gpu", "gpu", "n2", "n3", "n4", "n5", "n6", "n7"};
  // The second "gpu" (10.0.0.2) is slow with everybody.
  ScriptedTransport t(names, [](int a, int b, int) -> std::optional<double> { return a == 1 || b == 1 ? 40 : 100; });
  fabric::Fabric f = OneLeaf(names, {"10.0.0.1", "10.0.0.2"});
  SweepOptions o;
  o.pattern = Pattern::kAdaptive;
  o.fabric = &f;
  auto r = RunSweepOver(t, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->members[1].display, "gpu@10.0.0.2");
  ASSERT_EQ(r->verdict.elements.size(), 1u);
  EXPECT_EQ(r->verdict.elements[0].kind, "node");
  EXPECT_EQ(r->verdict.elements[0].element, "gpu@10.0.0.2");
  EXPECT_EQ(r->verdict.findings[0].id, "sweep.element.node");
  EXPECT_EQ(r->verdict.severity, model::Severity::kFail);
  EXPECT_DOUBLE_EQ(r->elapsed_s, 10.0 * r->rounds_completed);
}

TEST(RunSweepOver, AOneOffFailureIsASuspectNotAFinding) {
  std::vector<std::string> names = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
  ScriptedTransport t(names, [](int a, int b, int round) -> std::optional<double> {
    if (round == 1 && a == 0 && b == 1) return std::nullopt;
    return 100;
  });
  fabric::Fabric f = OneLeaf(names);
  SweepOptions o;
  o.pattern = Pattern::kRing;
  o.fabric = &f;
  auto r = RunSweepOver(t, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->verdict.elements.empty());
  int suspects = 0;
  for (const auto& x : r->verdict.findings) {
    if (x.id == "sweep.element.suspect") ++suspects;
  }
  EXPECT_EQ(suspects, 2);  // either end may be the one that flaps
  EXPECT_EQ(r->verdict.severity, model::Severity::kInfo);
}

TEST(RunSweepOver, MembersTheFabricDoesNotPlaceAreNamed) {
  std::vector<std::string> names = {"n0", "n1", "n2", "n3"};
  ScriptedTransport t(names, [](int, int, int) -> std::optional<double> { return 100; });
  fabric::Fabric f = OneLeaf({"n0", "n1", "n2"});
  SweepOptions o;
  o.pattern = Pattern::kTopology;
  o.fabric = &f;
  auto r = RunSweepOver(t, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not place n3"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace fabcheck::sweep
