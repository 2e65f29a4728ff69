#include "sweep/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

namespace fabcheck::sweep {
namespace {

uint64_t Key(int a, int b) {
  if (a > b) std::swap(a, b);
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

int DefaultFlows(const fabric::FabricIndex* f, int flows) {
  if (flows > 0) return flows;
  if (!f || f->spines(0).empty()) return 1;  // without spine names a flow's path cannot be judged
  return FlowsToCoverSpines(static_cast<int>(f->spines(0).size()));
}

// Rounds of `per_leaf(size)` run inside every leaf at once (rail 0's leaves).
std::vector<PlannedRound> InsideLeaves(const fabric::FabricIndex& f, Schedule (*per_leaf)(int), const char* stage) {
  std::vector<PlannedRound> rounds;
  for (int l = 0; l < f.leaf_count(0); ++l) {
    const auto& m = f.leaf_members(0, l);
    if (m.size() < 2) continue;
    Schedule s = per_leaf(static_cast<int>(m.size()));
    if (rounds.size() < s.rounds.size()) rounds.resize(s.rounds.size());
    for (size_t r = 0; r < s.rounds.size(); ++r) {
      for (const Pair& p : s.rounds[r]) rounds[r].pairs.push_back({m[p.a], m[p.b], 1});
    }
  }
  for (auto& r : rounds) r.stage = stage;
  return rounds;
}

// One round per (leaf round, group): leaf A's g-th share against leaf B's,
// member i with member (i + shift) of the other leaf.
PlannedRound LeafAgainstLeaf(const fabric::FabricIndex& f, const Round& leaf_pairs, int group, int groups,
                             int shift, int flows) {
  PlannedRound round;
  round.stage = "inter-leaf";
  auto share = [&](int leaf) {
    std::vector<int> out;
    const auto& m = f.leaf_members(0, leaf);
    for (size_t i = 0; i < m.size(); ++i) {
      if (static_cast<int>(i % static_cast<size_t>(groups)) == group) out.push_back(m[i]);
    }
    return out;
  };
  for (const Pair& lp : leaf_pairs) {
    std::vector<int> a = share(lp.a), b = share(lp.b);
    if (a.empty() || b.empty()) continue;
    const size_t k = std::min(a.size(), b.size());
    for (size_t i = 0; i < k; ++i) {
      round.pairs.push_back({a[i], b[(i + static_cast<size_t>(shift)) % b.size()], flows});
    }
  }
  return round;
}

// How many shares a leaf is cut into so that one share at a time is `uplink_load` of it.
int Groups(double uplink_load) {
  return std::max(1, static_cast<int>(std::ceil(1.0 / std::clamp(uplink_load, 0.01, 1.0))));
}

class StaticPlanner : public Planner {
 public:
  explicit StaticPlanner(std::vector<PlannedRound> rounds) : rounds_(std::move(rounds)) {}
  std::optional<PlannedRound> Next(const Evidence*, const std::vector<model::SweepPairResult>&,
                                   const std::vector<model::SweepMember>& members) override {
    while (next_ < rounds_.size()) {
      PlannedRound r = rounds_[next_++];
      std::erase_if(r.pairs, [&](const PlannedPair& p) { return !members[p.a].reachable || !members[p.b].reachable; });
      if (!r.pairs.empty()) return r;
    }
    return std::nullopt;
  }
  int planned() const override { return static_cast<int>(rounds_.size()); }

 private:
  std::vector<PlannedRound> rounds_;
  size_t next_ = 0;
};

class AdaptivePlanner : public Planner {
 public:
  AdaptivePlanner(const PlanOptions& o, const fabric::FabricIndex& f, int flows) : o_(o), f_(f), flows_(flows) {
    // Inside each leaf, the first rounds of the circle method: a few distinct
    // partners per NIC, enough for a NIC fault to show with all of them and a
    // flapping link to fail more than once.
    cheap_ = InsideLeaves(f, &PairwiseSchedule, "intra-leaf");
    if (static_cast<int>(cheap_.size()) > o.intra_leaf_rounds) cheap_.resize(static_cast<size_t>(o.intra_leaf_rounds));
    Schedule leaf_ring = RingSchedule(f.leaf_count(0));
    const int groups = Groups(o.uplink_load);
    for (size_t t = 0; t < leaf_ring.rounds.size(); ++t) {
      for (int g = 0; g < groups; ++g) {
        cheap_.push_back(LeafAgainstLeaf(f, leaf_ring.rounds[t], g, groups, static_cast<int>(t), flows));
      }
    }
    // Three tiers: neighbours in the leaf ring are mostly in one pod, so only
    // the leaves at pod boundaries would cross the cores, far below what
    // loads a spine-core link (a link at a fifth of its capacity is slow only
    // when loaded). Each leaf against the leaf half the ring away (another
    // pod: pods are runs of consecutive leaves) loads every spine-core link
    // as the ring loads the uplinks.
    const int leaves = f.leaf_count(0);
    if (!f.cores(0).empty() && leaves >= 2) {
      Round across;
      for (int l = 0; l < leaves / 2; ++l) across.push_back({l, l + leaves / 2});
      for (int g = 0; g < groups; ++g) cheap_.push_back(LeafAgainstLeaf(f, across, g, groups, 1, flows));
    }
  }

  std::optional<PlannedRound> Next(const Evidence* so_far, const std::vector<model::SweepPairResult>& last_round,
                                   const std::vector<model::SweepMember>& members) override {
    for (const auto& t : last_round) tested_.insert(Key(t.a, t.b));
    auto alive = [&](int m) { return members[m].reachable; };
    while (next_ < cheap_.size() && issued_ < o_.max_rounds) {
      PlannedRound r = cheap_[next_++];
      std::erase_if(r.pairs, [&](const PlannedPair& p) { return !alive(p.a) || !alive(p.b); });
      ++issued_;
      if (!r.pairs.empty()) return r;
    }
    if (issued_ >= o_.max_rounds) return std::nullopt;
    if (!so_far) return std::nullopt;  // the runner always gives it with a fabric
    Localization loc = Localize(*so_far, members, o_.localize);
    std::vector<char> busy(members.size(), 0);
    PlannedRound round;
    round.stage = "retest";
    auto take = [&](int a, int b, int flows) {
      if (a == b) return;  // a member's test with itself runs over loopback and measures nothing of the fabric
      busy[a] = busy[b] = 1;
      round.pairs.push_back({a, b, flows});
      tested_.insert(Key(a, b));
    };
    for (const Suspect& s : loc.suspects) {
      const std::string key = SuspectKey(s);
      if (attempts_[key] >= o_.max_attempts) continue;
      const size_t before = round.pairs.size();
      Retest(*so_far, s, members, loc, busy, take);
      if (round.pairs.size() == before) continue;
      ++attempts_[key];
      model::SweepRetest why;
      why.suspect = SuspectName(s, f_, members);
      why.why = s.why;
      for (size_t i = before; i < round.pairs.size(); ++i) why.pairs.push_back({round.pairs[i].a, round.pairs[i].b});
      round.retests.push_back(std::move(why));
    }
    if (round.pairs.empty()) return std::nullopt;
    ++issued_;
    return round;
  }
  int planned() const override { return std::max<int>(issued_, static_cast<int>(cheap_.size())); }

 private:
  // Pairs that re-measure one suspect, through `take(a, b, flows)`.
  template <typename Take>
  void Retest(const Evidence& ev, const Suspect& s, const std::vector<model::SweepMember>& members,
              const Localization& loc,
              const std::vector<char>& busy, Take&& take) {
    auto alive = [&](int m) { return members[m].reachable; };
    const int n = static_cast<int>(members.size());
    auto good_everywhere = [&](int m) {
      if (!alive(m)) return false;
      for (uint8_t st : loc.nic_state[m]) {
        if (st != 1) return false;
      }
      return true;
    };
    {
      if (s.kind == Suspect::Kind::kUplink) {
        // Good members of the leaf against good members of other leaves, many
        // flows each; for a spine-core link, leaves of other pods, with
        // enough flows to reach every core through the suspect's spine.
        const auto& mine = f_.leaf_members(s.rail, s.leaf);
        const std::vector<char> far = s.core >= 0 ? OtherPods(ev, s) : std::vector<char>();
        const int flows = s.core >= 0 ? CoreFlows(ev, s) : flows_ * 2;
        const int leaves = f_.leaf_count(s.rail);
        int made = 0;
        for (int a : mine) {
          if (made >= 4) break;
          if (busy[a] || !good_everywhere(a)) continue;
          for (int step = 1; step < leaves; ++step) {
            // Core links: from half the ring away on, a new leaf for each pair.
            const int leaf = s.core >= 0 ? (s.leaf + leaves / 2 + made + step - 1) % leaves
                                         : (s.leaf + step * (made + 1)) % leaves;
            // Only a partner on another leaf crosses an uplink (and the member itself is no partner).
            if (leaf == s.leaf || (!far.empty() && !far[leaf])) continue;
            const auto& other = f_.leaf_members(s.rail, leaf);
            auto it = std::find_if(other.begin(), other.end(),
                                   [&](int b) { return b != a && !busy[b] && good_everywhere(b); });
            if (it == other.end()) continue;
            take(a, *it, flows);
            ++made;
            break;
          }
        }
        return;
      }
      if (s.kind == Suspect::Kind::kPath) {
        // Other partners: the sender with another good member of the
        // receiver's leaf, the receiver with another of the sender's, and
        // good members of both leaves with each other: slow only between
        // these two ends, or between their leaves whoever tests.
        const int la = f_.leaf(s.member, s.rail), lb = f_.leaf(s.partner, s.rail);
        auto other_of = [&](int leaf, int not_this) {
          for (int m : f_.leaf_members(s.rail, leaf)) {
            if (m != not_this && !busy[m] && good_everywhere(m)) return m;
          }
          return -1;
        };
        if (!busy[s.member] && alive(s.member)) {
          if (int b = other_of(lb, s.partner); b >= 0) take(s.member, b, flows_);
        }
        if (!busy[s.partner] && alive(s.partner)) {
          if (int a = other_of(la, s.member); a >= 0) take(a, s.partner, flows_);
        }
        const int a = other_of(la, s.member), b = other_of(lb, s.partner);
        if (a >= 0 && b >= 0) take(a, b, flows_);
        return;
      }
      // A suspect NIC: a known-good partner on its leaf it has not met yet (any leaf as a last resort).
      if (busy[s.member] || !alive(s.member)) return;
      int partner = -1;
      for (int p : f_.leaf_members(s.rail, f_.leaf(s.member, s.rail))) {
        if (p != s.member && !busy[p] && good_everywhere(p) && !tested_.count(Key(s.member, p))) {
          partner = p;
          break;
        }
      }
      for (int p = 0; partner < 0 && p < n; ++p) {
        if (p != s.member && !busy[p] && good_everywhere(p) && !tested_.count(Key(s.member, p))) partner = p;
      }
      if (partner < 0) return;
      take(s.member, partner, f_.leaf(s.member, s.rail) == f_.leaf(partner, s.rail) ? 1 : flows_);
    }
  }
  // Leaves of other pods than the suspect spine's: no flow of theirs went up
  // that spine, while some went up others (a pod is the spines its leaves
  // reach; the fabric file does not say, the flows do). Empty: nothing known.
  std::vector<char> OtherPods(const Evidence& ev, const Suspect& s) const {
    const RailSums& rs = ev.rail(s.rail);
    std::vector<char> far(static_cast<size_t>(rs.ids.leaves), 0);
    bool any = false;
    for (int l = 0; l < rs.ids.leaves; ++l) {
      int flows = 0;
      for (int k = 0; k < rs.ids.spines; ++k) flows += rs.flows_across(rs.ids.uplink(l, k));
      far[l] = flows > 0 && rs.flows_across(rs.ids.uplink(l, s.spine)) == 0;
      any = any || far[l];
    }
    return any ? far : std::vector<char>();
  }
  // Flows per test so that, through the suspect's spine (one of the m its
  // leaf was seen to use), every core gets one with p >= 0.9.
  int CoreFlows(const Evidence& ev, const Suspect& s) const {
    const RailSums& rs = ev.rail(s.rail);
    int m = 0;
    for (int k = 0; k < rs.ids.spines; ++k) m += rs.flows_across(rs.ids.uplink(s.leaf, k)) > 0;
    if (m == 0) m = rs.ids.spines;
    const int cores = std::max(1, rs.ids.cores);
    return std::min(kMaxFlows, std::max(flows_ * 2, FlowsToCover(cores, 1.0 / (m * cores))));
  }
  static constexpr int kMaxFlows = 512;

  static std::string SuspectKey(const Suspect& s) {
    return fmt::format("{}:{}:{}:{}:{}:{}", static_cast<int>(s.kind), s.member, s.rail, s.leaf, s.spine, s.core);
  }

  PlanOptions o_;
  const fabric::FabricIndex& f_;
  int flows_;
  std::vector<PlannedRound> cheap_;
  size_t next_ = 0;
  int issued_ = 0;
  std::unordered_set<uint64_t> tested_;
  std::map<std::string, int> attempts_;
};

// Members in leaf order (rail 0), so a ring pairs neighbours on one leaf.
std::vector<int> LeafOrder(const fabric::FabricIndex& f) {
  std::vector<int> order;
  for (int l = 0; l < f.leaf_count(0); ++l) {
    for (int m : f.leaf_members(0, l)) order.push_back(m);
  }
  return order;
}

}  // namespace

std::vector<PlannedRound> TopologyRounds(const fabric::FabricIndex& f, int flows, double uplink_load) {
  std::vector<PlannedRound> rounds = InsideLeaves(f, &PairwiseSchedule, "intra-leaf");
  Schedule leaves = PairwiseSchedule(f.leaf_count(0));
  const int groups = Groups(uplink_load);
  for (size_t t = 0; t < leaves.rounds.size(); ++t) {
    // Alternate the share of each leaf from one leaf round to the next.
    rounds.push_back(LeafAgainstLeaf(f, leaves.rounds[t], static_cast<int>(t) % groups, groups,
                                     static_cast<int>(t / static_cast<size_t>(groups)), flows));
  }
  return rounds;
}

Result<std::unique_ptr<Planner>> MakePlanner(const PlanOptions& o, int n, const fabric::FabricIndex* f) {
  if (n < 2) return InvalidArgumentError(fmt::format("a sweep needs at least 2 members, got {}", n));
  if (f && f->members() != n) {
    return InternalError(fmt::format("the fabric has {} members, the sweep {}", f->members(), n));
  }
  if (o.uplink_load <= 0 || o.uplink_load > 1) return InvalidArgumentError("the uplink load must be in (0, 1]");
  const int flows = DefaultFlows(f, o.flows);
  if (o.pattern == Pattern::kTopology || o.pattern == Pattern::kAdaptive) {
    if (!f) {
      return InvalidArgumentError(fmt::format("the {} strategy plans by leaf: give the fabric (--topology FILE; "
                                              "fabcheck fabric builds one)", PatternName(o.pattern)));
    }
    if (o.pattern == Pattern::kTopology) {
      return std::unique_ptr<Planner>(new StaticPlanner(TopologyRounds(*f, flows, o.uplink_load)));
    }
    return std::unique_ptr<Planner>(new AdaptivePlanner(o, *f, flows));
  }
  ASSIGN_OR_RETURN(Schedule s, MakeSchedule(o.pattern, n, o.peers, o.seed));
  // With a fabric, a ring runs in leaf order, and tests between leaves get several flows.
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  if (f && o.pattern == Pattern::kRing) order = LeafOrder(*f);
  std::vector<PlannedRound> rounds;
  for (const Round& r : s.rounds) {
    PlannedRound pr;
    pr.stage = std::string(PatternName(o.pattern));
    for (const Pair& p : r) {
      const int a = order[p.a], b = order[p.b];
      pr.pairs.push_back({a, b, f && f->leaf(a, 0) != f->leaf(b, 0) ? flows : 1});
    }
    rounds.push_back(std::move(pr));
  }
  return std::unique_ptr<Planner>(new StaticPlanner(std::move(rounds)));
}

}  // namespace fabcheck::sweep
