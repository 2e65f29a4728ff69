// What the localiser keeps of a sweep's tests: running sums per element of
// the fabric, not the tests. The topology strategy at 4,096 members x 8 rails
// runs 3 million directional tests, two thirds of them between leaves with 33
// flows each; kept whole they cost about 2 GB and judging them 1.8 s of CPU.
// The localiser's rules need far less: per NIC its best test, a few counts,
// a few partners, its path MTUs and port rates; per link and switch how many
// flows crossed it; and the slow flows and failed tests themselves, which are
// few. So the memory grows with members x rails (and the fabric's links), and
// a test costs one pass when it arrives.
//
// What is judged when a test arrives, not at the end: whether a flow is slow.
// A flow is slow when it moved less than `slow` of the best flow of its own
// test (the second best with 4 flows or more: one lucky TCP flow must not make
// its healthy peers read as slow): a path element slows the flows hashed through it, a busy host or a
// slow NIC slows every flow of the test alike, so those never blame a link
// (the reference of the whole sweep is known only at the end; this needs none).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "fabcheck/model/sweep.h"
#include "fabric/fabric.h"

namespace fabcheck::sweep {

// Quantiles of a stream: exact for the first kExact values, then from a
// histogram of bins 0.1% wide (from 6e-5 to 1e6), so a rail's
// reference is within 0.1% of the exact one whatever the number of tests.
class QuantileSketch {
 public:
  void Add(double x);
  // The value at rank round(q x (count - 1)) of the sorted values; 0 when empty.
  double Quantile(double q) const;
  size_t count() const { return count_; }

 private:
  static constexpr size_t kExact = 4096;
  std::vector<double> exact_;
  std::vector<uint32_t> bins_;
  size_t count_ = 0;
};

// One NIC (member x rail). Partners are bounded: a NIC is named slow only
// when every test of it was slow, and then what matters is that at least two
// of its partners are known good; when it met more than kPartners, the
// partners kept are those with the best tests so far.
struct NicSums {
  static constexpr int kPartners = 8;
  static constexpr int kValues = 4;
  struct Mtu {
    int mtu = 0, tests = 0;
    int partners[kPartners] = {};
    uint8_t n_partners = 0;
  };
  struct Port {
    float gbps = 0;
    int tests = 0;
  };
  float best_bw = std::numeric_limits<float>::quiet_NaN();
  int best_a = -1, best_b = -1, best_round = 0;  // the best test (evidence)
  int tests = 0;        // tests with a bandwidth
  int intra_tests = 0;  // ...inside the leaf (no uplink or spine on the path)
  int lossy = 0;        // ...of which lost packets
  int partners[kPartners] = {};
  float partner_best[kPartners] = {};  // each partner's best bandwidth when it was kept
  uint8_t n_partners = 0;
  Port ports[kValues];  // this end's port rate in its tests with a bandwidth
  uint8_t n_ports = 0;
  Mtu mtus[kValues];    // path MTUs of its tests
  uint8_t n_mtus = 0;
  int mtu_tests = 0;
};

// Flows slower than `slow` x their test's best flow, grouped by the path they
// took (link and switch ids of their rail: see LinkIds): a lossy spine slows
// an eighth of every flow, so the flows themselves would grow with the tests;
// their paths are bounded by the fabric.
struct SlowFlow {
  static constexpr int kRounds = 8;
  int link[4] = {0, 0, 0, 0};
  int links = 0;
  int sw[3] = {0, 0, 0};
  int switches = 0;
  int leaf_a = 0, leaf_b = 0;
  int count = 0;                // slow flows on this path
  int rounds[kRounds] = {};     // distinct rounds they were slow in (the first kRounds)
  int n_rounds = 0;
  int a = 0, b = 0, round = 0;  // the first of them (evidence)
  float gbps = 0, expected = 0; // its rate and its test's best flow
  bool crosses(int l) const {
    for (int k = 0; k < links; ++k) {
      if (link[k] == l) return true;
    }
    return false;
  }
};

// A test between two leaves, kept while its rail has no per-flow paths (the
// localiser then judges leaf to leaf paths from whole tests).
struct LeafTest {
  int a = 0, b = 0, round = 0;
  float bw = 0;
};

// A test between leaves whose flows had known paths and which was well below
// the rail's reference as it stood when the test arrived (kept loosely; the
// localiser judges it against the final reference). When every flow of a test
// crossed the same bad element, its flows are alike and say nothing; the test
// as a whole still does.
struct SlowTest {
  int a = 0, b = 0, round = 0;
  int leaf_a = 0, leaf_b = 0;
  float bw = 0;
  uint64_t spines = 0;  // the spines its flows went up (bit s; spines >= 64 share bit 63)
};

struct FailedTest {
  int a = 0, b = 0, rail = 0;
};

// Link ids of a rail: leaf-spine uplink leaf x spines + spine, then the
// spine-core links after them. Switch ids: spines, then cores.
// Each link is judged per direction (a dirty optic, a bad transceiver lane or
// one congested egress queue slows one way only): the directed id of link l
// is 2 l + kUp (leaf->spine, spine->core) or 2 l + kDown (spine->leaf,
// core->spine). link_flows and a slow flow's links hold directed ids.
struct LinkIds {
  static constexpr int kUp = 0, kDown = 1;
  int spines = 0, cores = 0, leaves = 0;
  int uplinks() const { return leaves * spines; }
  int links() const { return uplinks() + spines * cores; }
  int uplink(int leaf, int spine) const { return leaf * spines + spine; }
  int core_link(int spine, int core) const { return uplinks() + spine * cores + core; }
  static int directed(int link, int dir) { return 2 * link + dir; }
  static int link_of(int directed) { return directed / 2; }
  static int dir_of(int directed) { return directed % 2; }
};

struct RailSums {
  QuantileSketch bw, port;
  std::map<int, int64_t> path_mtu;  // value -> tests
  bool paths = false;               // a flow of this rail had a known spine
  LinkIds ids;
  std::vector<int> link_flows, switch_flows;  // link_flows by directed id
  // Flows across undirected link l, both ways.
  int flows_across(int l) const {
    return link_flows[static_cast<size_t>(LinkIds::directed(l, LinkIds::kUp))] +
           link_flows[static_cast<size_t>(LinkIds::directed(l, LinkIds::kDown))];
  }
  std::vector<SlowFlow> slow;
  std::unordered_map<uint64_t, uint32_t> slow_index;  // path key -> index into slow
  std::vector<LeafTest> leaf_tests;  // only while !paths
  std::vector<SlowTest> slow_tests;  // inter-leaf tests with paths, below kSlowTestKeep x the running reference
  double running_ref = 0;            // the rail's reference as of running_ref_at tests
  size_t running_ref_at = 0;
  static constexpr double kSlowTestKeep = 0.8;
  static constexpr size_t kSlowTestsMax = 1 << 16;
};

class Evidence {
 public:
  // `fabric` must outlive the evidence; indexed like the sweep's members.
  Evidence(const fabric::FabricIndex& fabric, double flow_slow = 0.75);
  // Folds one directional test in. Tests of a member with itself (loopback)
  // and tests that name no member of the fabric are ignored.
  void Add(const model::SweepPairResult& test);
  // A round's tests at once: the same, with each next test's flows fetched
  // into the cache while one is folded (they arrive cold, and reading them
  // is most of the cost).
  void Add(const std::vector<model::SweepPairResult>& tests);

  const fabric::FabricIndex& fabric() const { return fabric_; }
  int members() const { return members_; }
  int rails() const { return rails_; }
  size_t tests() const { return tests_; }
  const NicSums& nic(int member, int rail) const { return nics_[Slot(member, rail)]; }
  const RailSums& rail(int r) const { return rail_[static_cast<size_t>(r)]; }
  const std::vector<FailedTest>& failed() const { return failed_; }
  size_t Slot(int member, int rail) const { return static_cast<size_t>(member) * rails_ + rail; }

 private:
  void AddSide(const model::SweepPairResult& t, int me, int other);
  void AddFlows(const model::SweepPairResult& t, int la, int lb);
  void KeepIfSlow(const model::SweepPairResult& t, int la, int lb);

  const fabric::FabricIndex& fabric_;
  int members_ = 0, rails_ = 1;
  double flow_slow_ = 0.75;
  size_t tests_ = 0;
  std::vector<NicSums> nics_;
  std::vector<int> leaf_;  // per NIC slot: its leaf (the fabric's index, flat)
  std::vector<RailSums> rail_;
  std::vector<FailedTest> failed_;
};

}  // namespace fabcheck::sweep
