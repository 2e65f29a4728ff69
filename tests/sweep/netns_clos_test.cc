// End to end, as root: the localiser on real packets. A routed two-tier Clos
// in namespaces (tests/sweep/netns_clos.sh): four leaf routers of two hosts,
// two spine routers, ECMP on the 5-tuple at the leaves, TTL-expired answers
// not rate-limited; real agents (with a token file) and `sweep --strategy
// adaptive --topology`, once per fabric state:
//   oneway   leaf-0 -> spine-1 at 20 Mbit/s, the other way untouched: named
//            uplink leaf-0~spine-1, direction leaf-0->spine-1, no host blamed
//   twoway   leaf-2 ~ spine-0 at 20 Mbit/s both ways: named, direction both
//   control  nothing shaped but the hosts (200 Mbit/s each): nothing named
// The repeated-run rates (20 sweeps each) are measured by
// bench/sweep/clos_rates.sh and reported in docs/sweep.md. Skipped, with the
// reason, when not root or namespaces cannot be made.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "fabcheck/model/sweep.h"
#include "netns_helpers.h"

namespace fabcheck::sweep {
namespace {

using netns_test::Sh;

const std::string kScript = std::string(FABCHECK_SOURCE_DIR) + "/tests/sweep/netns_clos.sh";
std::string Script(const std::string& args) {
  static const std::string prefix = "loc" + std::to_string(::getpid()) + "-";
  return "LOC_PREFIX=" + prefix + " sh " + kScript + " " + args;
}

struct Outcome {
  int exit_code = -1;
  model::SweepResult result;
  std::string text;
  bool parsed = false;
};

Outcome SweepOnce(const std::string& dir, const std::string& name) {
  Outcome o;
  const std::string out = dir + "/" + name;
  int rc = std::system((Script("sweep " + std::string(FABCHECK_BINARY) + " " + dir + " " + out)).c_str());
  o.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  o.text = netns_test::ReadFile(out + ".txt");
  auto j = nlohmann::json::parse(netns_test::ReadFile(out + ".json"), nullptr, false);
  if (!j.is_discarded()) {
    try {
      o.result = j.get<model::SweepResult>();
      o.parsed = true;
    } catch (const std::exception&) {
    }
  }
  return o;
}

// No host, NIC or cable blamed: the faults are between switches.
void ExpectNoHostBlamed(const Outcome& o) {
  for (const auto& e : o.result.verdict.elements) {
    EXPECT_EQ(e.kind == "node" || e.kind == "nic" || e.kind == "cable" || e.kind == "mtu", false)
        << e.kind << " " << e.element << ": " << e.why << "\n" << o.text;
  }
}

// Every retest says what it re-measured and why.
void ExpectRetestsExplained(const Outcome& o) {
  for (const auto& r : o.result.retests) {
    EXPECT_FALSE(r.suspect.empty());
    EXPECT_FALSE(r.why.empty()) << r.suspect;
    EXPECT_FALSE(r.pairs.empty()) << r.suspect;
  }
}

TEST(NetnsClos, AdaptiveSweepNamesOneWayAndTwoWayUplinksAndLeavesTheControlClean) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  if (Sh("command -v ip && command -v tc && command -v timeout") != 0) GTEST_SKIP() << "needs iproute2 (ip, tc)";
  if (Sh(Script("up")) != 0) {
    Sh(Script("down"));
    GTEST_SKIP() << "cannot create network namespaces here (ip netns add failed)";
  }
  const std::string dir = ::testing::TempDir() + "/loc" + std::to_string(::getpid()) + "-clos";
  Sh("mkdir -p " + dir);
  std::map<std::string, Outcome> runs;
  std::string errors;
  if (Sh(Script("agents " + std::string(FABCHECK_BINARY) + " " + dir)) != 0) errors = "the agents did not start";
  for (const char* state : {"oneway", "twoway", "none"}) {
    if (!errors.empty()) break;
    if (Sh(Script(std::string("shape ") + state)) != 0) {
      errors = std::string("shape ") + state + " failed";
      break;
    }
    runs[state] = SweepOnce(dir, state);
  }
  Sh(Script("down"));
  ASSERT_TRUE(errors.empty()) << errors;

  const Outcome& one = runs["oneway"];
  ASSERT_TRUE(one.parsed) << one.text;
  EXPECT_EQ(one.exit_code, 2) << one.text;
  std::map<std::string, model::SweepElementFinding> named;
  for (const auto& e : one.result.verdict.elements) named[e.element] = e;
  ASSERT_TRUE(named.count("leaf-0~spine-1")) << one.text;
  EXPECT_EQ(named["leaf-0~spine-1"].kind, "uplink");
  EXPECT_EQ(named["leaf-0~spine-1"].direction, "leaf-0->spine-1") << named["leaf-0~spine-1"].why;
  EXPECT_EQ(named.size(), 1u) << one.text;
  ExpectNoHostBlamed(one);
  ExpectRetestsExplained(one);
  // The agents traced every flow between leaves through both spines.
  std::set<int> spines;
  for (const auto& p : one.result.pairs) {
    for (int16_t s : p.flow_spine) {
      if (s >= 0) spines.insert(s);
    }
  }
  EXPECT_EQ(spines, (std::set<int>{0, 1}));

  const Outcome& two = runs["twoway"];
  ASSERT_TRUE(two.parsed) << two.text;
  EXPECT_EQ(two.exit_code, 2) << two.text;
  named.clear();
  for (const auto& e : two.result.verdict.elements) named[e.element] = e;
  ASSERT_TRUE(named.count("leaf-2~spine-0")) << two.text;
  EXPECT_EQ(named["leaf-2~spine-0"].direction, "both") << named["leaf-2~spine-0"].why;
  EXPECT_EQ(named.size(), 1u) << two.text;
  ExpectNoHostBlamed(two);
  ExpectRetestsExplained(two);

  const Outcome& control = runs["none"];
  ASSERT_TRUE(control.parsed) << control.text;
  EXPECT_TRUE(control.result.verdict.elements.empty()) << control.text;
  EXPECT_EQ(control.exit_code, 0) << control.text;
  ExpectRetestsExplained(control);

  if (::testing::Test::HasFailure()) {
    std::cerr << "netns_clos: the sweeps' output is kept in " << dir << "\n";
  } else {
    Sh("rm -rf " + dir);
  }
}

}  // namespace
}  // namespace fabcheck::sweep
