#include "sim/sim_transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>

namespace fabcheck::sim {

SimTransport::SimTransport(const Clos& clos, FabricState state, SimTransportOptions options)
    : clos_(clos), state_(std::move(state)), options_(options) {}

std::vector<model::SweepMember> SimTransport::Discover() {
  std::vector<model::SweepMember> members;
  const ClosOptions& o = clos_.options();
  for (int m = 0; m < o.nodes; ++m) {
    model::SweepMember x;
    x.index = m;
    x.name = x.display = clos_.Member(m);
    x.control = "sim:" + x.name;
    for (int r = 0; r < o.rails; ++r) {
      x.data_addresses.push_back(clos_.Nic(m, r));
      x.interface_mtu.push_back(state_.mtu[state_.Nic(m, r)]);
    }
    members.push_back(std::move(x));
  }
  return members;
}

std::vector<double> SimTransport::MaxMinRates(const std::vector<double>& capacity,
                                              const std::vector<std::vector<int>>& links) {
  const size_t nl = capacity.size(), nf = links.size();
  std::vector<double> rate(nf, 0), frozen_load(nl, 0);
  std::vector<int> active(nl, 0), version(nl, 0);
  std::vector<char> frozen(nf, 0);
  // Flows of each link (CSR).
  std::vector<size_t> start(nl + 1, 0);
  for (const auto& l : links) {
    for (int id : l) ++start[static_cast<size_t>(id) + 1];
  }
  for (size_t i = 0; i < nl; ++i) start[i + 1] += start[i];
  std::vector<int> flows_of(start[nl]);
  std::vector<size_t> fill(start.begin(), start.end() - 1);
  for (size_t f = 0; f < nf; ++f) {
    for (int id : links[f]) flows_of[fill[static_cast<size_t>(id)]++] = static_cast<int>(f);
  }
  for (size_t i = 0; i < nl; ++i) active[i] = static_cast<int>(start[i + 1] - start[i]);
  using Entry = std::tuple<double, int, int>;  // level, link, version
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (size_t i = 0; i < nl; ++i) {
    if (active[i] > 0) heap.emplace(capacity[i] / active[i], static_cast<int>(i), 0);
  }
  // Progressive filling: the link whose fair level is lowest saturates first
  // and freezes its flows there; the levels of the others only rise.
  while (!heap.empty()) {
    auto [level, link, v] = heap.top();
    heap.pop();
    if (v != version[static_cast<size_t>(link)] || active[static_cast<size_t>(link)] == 0) continue;
    for (size_t k = start[static_cast<size_t>(link)]; k < start[static_cast<size_t>(link) + 1]; ++k) {
      const int f = flows_of[k];
      if (frozen[static_cast<size_t>(f)]) continue;
      frozen[static_cast<size_t>(f)] = 1;
      rate[static_cast<size_t>(f)] = level;
      for (int other : links[static_cast<size_t>(f)]) {
        const size_t o = static_cast<size_t>(other);
        frozen_load[o] += level;
        --active[o];
        ++version[o];
        if (active[o] > 0 && other != link) heap.emplace((capacity[o] - frozen_load[o]) / active[o], other, version[o]);
      }
    }
  }
  return rate;
}

void SimTransport::SimulateRail(int rail, const std::vector<sweep::TestSpec>& specs, const std::vector<size_t>& which,
                                int round, std::vector<std::optional<model::SweepPairResult>>* out) {
  const ClosOptions& o = clos_.options();
  const int n = o.nodes, m = clos_.total_spines(), leaves = clos_.leaves();
  const int cores = clos_.three_tier() ? o.cores : 0;
  std::mt19937_64 rng(options_.seed * 1000003 + static_cast<uint64_t>(round) * 131 + static_cast<uint64_t>(rail));
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  // Links: 0..n-1 NIC send side (port + cable up), n..2n-1 receive side, then
  // leaf->spine and spine->leaf uplinks, then (three tiers) spine->core and
  // core->spine links.
  std::vector<double> capacity(2 * static_cast<size_t>(n) + 2 * static_cast<size_t>(leaves) * m +
                               2 * static_cast<size_t>(m) * cores);
  for (int x = 0; x < n; ++x) {
    const size_t k = state_.Nic(x, rail);
    capacity[x] = capacity[n + x] = o.nic_gbps * std::min(state_.nic_factor[k], state_.cable_factor[k]);
  }
  const size_t up0 = 2 * static_cast<size_t>(n), down0 = up0 + static_cast<size_t>(leaves) * m;
  const size_t core_up0 = down0 + static_cast<size_t>(leaves) * m, core_down0 = core_up0 + static_cast<size_t>(m) * cores;
  for (int s = 0; s < m; ++s) {
    for (int c = 0; c < cores; ++c) {
      const size_t k = static_cast<size_t>(s) * cores + c;
      capacity[core_up0 + k] = clos_.core_link_gbps() * state_.core_link_factor[state_.CoreLink(rail, s, c)];
      capacity[core_down0 + k] = clos_.core_link_gbps() * state_.core_link_factor_down[state_.CoreLink(rail, s, c)];
    }
  }
  // A flapping uplink is down in some rounds (its own draw, so the other
  // draws of a round stay as they were): flows ECMP hashed onto it crawl
  // until the routers move them.
  std::mt19937_64 flap_rng(options_.seed * 7919 + static_cast<uint64_t>(round) * 257 + static_cast<uint64_t>(rail));
  for (int l = 0; l < leaves; ++l) {
    for (int s = 0; s < m; ++s) {
      const size_t k = state_.Uplink(rail, l, s);
      const bool down = state_.uplink_flap[k] > 0 && unit(flap_rng) < state_.uplink_flap[k];
      const double flap = down ? 0.02 : 1;
      capacity[up0 + static_cast<size_t>(l) * m + s] = clos_.uplink_gbps() * state_.uplink_factor[k] * flap;
      capacity[down0 + static_cast<size_t>(l) * m + s] = clos_.uplink_gbps() * state_.uplink_factor_down[k] * flap;
    }
  }
  struct Running {
    size_t spec;
    size_t first_flow;
    int flows;
  };
  std::vector<Running> running;
  std::vector<std::vector<int>> flow_links;
  std::vector<int16_t> flow_spine, flow_core, flow_far;
  std::vector<float> flow_loss;
  for (size_t i : which) {
    const sweep::TestSpec& t = specs[i];
    model::SweepPairResult p;
    p.a = t.a, p.b = t.b, p.rail = rail, p.round = round;
    p.transport = "simulated";
    const size_t ka = state_.Nic(t.a, rail), kb = state_.Nic(t.b, rail);
    p.local_mtu = state_.mtu[ka];
    p.a_port_gbps = o.nic_gbps * state_.port_factor[ka];
    p.b_port_gbps = o.nic_gbps * state_.port_factor[kb];
    const double down = 1 - (1 - state_.flap[ka]) * (1 - state_.flap[kb]);
    if (down > 0 && unit(rng) < down) {
      p.error = "the link went down during the test (connection reset)";
      (*out)[i] = std::move(p);
      continue;
    }
    p.path_mtu = std::min({state_.mtu[ka], state_.mtu[kb], o.mtu});
    if (state_.mtu[ka] != state_.mtu[kb]) {
      p.error = fmt::format("bandwidth: large messages time out (path MTU {} below the interface MTU {})",
                            *p.path_mtu, std::max(state_.mtu[ka], state_.mtu[kb]));
      (*out)[i] = std::move(p);
      continue;
    }
    (*out)[i] = std::move(p);
    const int la = clos_.leaf_of(t.a), lb = clos_.leaf_of(t.b);
    running.push_back({i, flow_links.size(), std::max(1, t.flows)});
    for (int f = 0; f < std::max(1, t.flows); ++f) {
      std::vector<int> links = {t.a, n + t.b};
      double loss = state_.cable_loss[ka] + state_.cable_loss[kb];
      int16_t spine = -1, core = -1, far = -1;
      if (la != lb) {
        const uint32_t port = t.flow_base + static_cast<uint32_t>(f);
        const int s = clos_.SpineFor(t.a, t.b, rail, port);
        int s2 = s;
        spine = static_cast<int16_t>(s);
        links.push_back(static_cast<int>(up0 + static_cast<size_t>(la) * m + s));
        if (cores > 0 && clos_.pod_of_leaf(la) != clos_.pod_of_leaf(lb)) {
          // Up to a core and down into the far pod: two more hashes.
          const int c = clos_.CoreFor(t.a, t.b, rail, port);
          s2 = clos_.FarSpineFor(t.a, t.b, rail, port);
          core = static_cast<int16_t>(c);
          far = static_cast<int16_t>(s2);
          links.push_back(static_cast<int>(core_up0 + static_cast<size_t>(s) * cores + c));
          links.push_back(static_cast<int>(core_down0 + static_cast<size_t>(s2) * cores + c));
          loss += state_.core_link_loss[state_.CoreLink(rail, s, c)] +
                  state_.core_link_loss_down[state_.CoreLink(rail, s2, c)] + state_.core_loss[state_.CoreAt(rail, c)] +
                  state_.spine_loss[state_.SpineAt(rail, s2)];
        }
        links.push_back(static_cast<int>(down0 + static_cast<size_t>(lb) * m + s2));
        loss += state_.uplink_loss[state_.Uplink(rail, la, s)] + state_.uplink_loss_down[state_.Uplink(rail, lb, s2)] +
                state_.spine_loss[state_.SpineAt(rail, s)];
      }
      flow_links.push_back(std::move(links));
      flow_spine.push_back(spine);
      flow_core.push_back(core);
      flow_far.push_back(far);
      flow_loss.push_back(static_cast<float>(loss));
    }
  }
  const std::vector<double> rate = MaxMinRates(capacity, flow_links);
  for (const Running& r : running) {
    model::SweepPairResult& p = *(*out)[r.spec];
    const sweep::TestSpec& t = specs[r.spec];
    // Host-side noise moves the whole test; each flow jitters a little more.
    const double cv = std::max<double>({options_.noise_cv, state_.noise_cv[t.a], state_.noise_cv[t.b]});
    const bool decoy = state_.noise_cv[t.a] > 0 || state_.noise_cv[t.b] > 0;
    double host = std::max(0.05, 1 + cv * normal(rng));
    if (unit(rng) < (decoy ? 0.2 : options_.tail_probability)) host *= 0.5 + 0.4 * unit(rng);
    double total = 0, worst_loss = 0;
    const bool per_flow = r.flows > 1 || flow_spine[r.first_flow] >= 0;
    for (int f = 0; f < r.flows; ++f) {
      const size_t k = r.first_flow + static_cast<size_t>(f);
      const double goodput = 1 / (1 + 500.0 * flow_loss[k]);
      const double x = std::max(0.0, rate[k] * goodput * host * (1 + 0.005 * normal(rng)));
      total += x;
      worst_loss = std::max<double>(worst_loss, flow_loss[k]);
      if (per_flow) {
        p.flow_gbps.push_back(static_cast<float>(x));
        p.flow_spine.push_back(flow_spine[k]);
        if (cores > 0) {
          p.flow_core.push_back(flow_core[k]);
          p.flow_spine_down.push_back(flow_far[k]);
        }
      }
    }
    p.bw_gbps = total;
    if (worst_loss > 0) p.loss = worst_loss;
  }
}

std::vector<std::optional<model::SweepPairResult>> SimTransport::RunRound(const std::vector<sweep::TestSpec>& specs,
                                                                          int round) {
  ++rounds_;
  std::vector<std::optional<model::SweepPairResult>> out(specs.size());
  std::vector<std::vector<size_t>> by_rail(static_cast<size_t>(rails()));
  for (size_t i = 0; i < specs.size(); ++i) by_rail[static_cast<size_t>(specs[i].rail)].push_back(i);
  for (int r = 0; r < rails(); ++r) SimulateRail(r, specs, by_rail[static_cast<size_t>(r)], round, &out);
  return out;
}

}  // namespace fabcheck::sim
