#include "example_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ctime>
#include <map>
#include <memory>
#include <set>

#include <unistd.h>

#include "node_fixture.h"
#include "bundle/bundle.h"
#include "bundle/correlate.h"
#include "checks/runner.h"
#include "inventory/inventory.h"
#include "sys/sysroot.h"

namespace fabcheck::report::example {
namespace {

namespace fs = std::filesystem;
using fixtures::NodeFixture;
using fixtures::NodeSpec;
using model::RungVerdict;

constexpr const char* kNodeType = "8xH100 8xCX7-400G RoCE";
constexpr double kStart = 1796114400;  // 2026-12-01T08:00:00Z
constexpr double kWeek = 7 * 86400;

// Deterministic noise in [-1, 1].
double Noise(uint64_t seed) {
  seed ^= seed >> 33;
  seed *= 0xff51afd7ed558ccdULL;
  seed ^= seed >> 33;
  seed *= 0xc4ceb9fe1a85ec53ULL;
  seed ^= seed >> 33;
  return static_cast<double>(seed % 20001) / 10000.0 - 1.0;
}

uint64_t Fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string Name(int i, int n) { return n <= 99 ? fmt::format("dgx-{:02}", i + 1) : fmt::format("dgx-{:04}", i + 1); }
int RackOf(int i, int n) { return n <= 16 ? i / 4 + 1 : i / 32 + 1; }

std::string Iso(double t) {
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// One node as the ladder's agent reports it: inventory and doctor of a
// generated DGX-class sysroot with the given faults.
struct Node {
  model::Inventory inventory;
  model::DoctorReport doctor;
};

// Evidence that names the temporary fixture directory names it as the node
// would (paths from its root), so the bundle is the same on every run.
void Scrub(std::string& text, const std::string& dir) {
  for (size_t at; (at = text.find(dir)) != std::string::npos;) text.erase(at, dir.size());
}

enum class Fault { kNone, kPcieDowngrade, kMtu4200 };

Result<Node> MakeNode(Fault fault) {
  fs::path dir = fixtures::FixtureTempDir() /
                 fmt::format("fabcheck-example-node-{}-{}", static_cast<int>(fault), ::getpid());
  NodeSpec spec;
  spec.roce = true;
  auto fixture = std::make_unique<NodeFixture>(dir, spec);
  if (fault == Fault::kPcieDowngrade) {
    fixture->Write(fixture->NicPci(2) + "/current_link_speed", "16.0 GT/s PCIe\n");
    fixture->Write(fixture->NicPci(2) + "/current_link_width", "8\n");
  }
  if (fault == Fault::kMtu4200) {
    for (int i = 0; i < 8; ++i) fixture->Write(fixture->NetDir(i) + "/mtu", "4200\n");
  }
  auto root = sys::SysRoot::Open(fixture->root());
  if (!root.ok()) return root.status();
  inventory::ReadOptions read;
  read.query_libraries = false;
  Node node;
  node.inventory = inventory::ReadInventory(*root, read);
  checks::DoctorOptions options;
  options.sysroot = fixture->root();
  options.use_process_env = false;
  options.query_libraries = false;
  auto doctor = checks::RunDoctor(options, "0.1.0");
  if (!doctor.ok()) return doctor.status();
  node.doctor = std::move(*doctor);
  const std::string prefix = fixture->root();
  for (auto& f : node.doctor.findings) {
    Scrub(f.message, prefix);
    Scrub(f.remedy, prefix);
    for (auto& ev : f.evidence) Scrub(ev, prefix);
  }
  for (auto& w : node.doctor.inventory_warnings) Scrub(w, prefix);
  for (auto& w : node.inventory.warnings) Scrub(w.path, prefix), Scrub(w.message, prefix);
  return node;
}

// The template node renamed and readdressed for member `i`.
Node ForMember(const Node& t, const std::string& name, int rack, int i) {
  Node n = t;
  n.inventory.source = "ladder agent on " + name;
  n.inventory.host.hostname = name;
  n.doctor.hostname = name;
  n.doctor.sysroot = "live node";
  for (auto& nd : n.inventory.netdevs) {
    for (auto& a : nd.addresses) {
      if (a.family != "inet" || a.address.rfind("127.", 0) == 0) continue;
      if (nd.name == "eno1") {
        a.address = fmt::format("192.168.{}.{}", rack, 10 + i % 200);
      } else {
        // 10.<rail>.0.5 -> 10.<rail>.<rack>.<host>
        std::string rail = a.address.substr(3, a.address.find('.', 3) - 3);
        a.address = fmt::format("10.{}.{}.{}", rail, rack, 10 + i % 200);
      }
    }
  }
  return n;
}

std::string DataAddress(int rail, int rack, int i) { return fmt::format("10.{}.{}.{}", rail, rack, 10 + i % 200); }

std::vector<model::SizePoint> Curve(double peak, uint64_t seed) {
  std::vector<model::SizePoint> out;
  for (int e = 12; e <= 23; ++e) {
    double bytes = std::pow(2, e);
    double bw = peak * bytes / (bytes + 24576.0) * (1 + 0.004 * Noise(seed + e));
    out.push_back({static_cast<uint64_t>(bytes), std::round(bw * 10) / 10});
  }
  return out;
}

model::RungResult Rung(const char* id, const char* title, double t0, double t1) {
  model::RungResult r;
  r.id = id;
  r.title = title;
  r.start_unix = t0;
  r.end_unix = t1;
  return r;
}

}  // namespace

Result<BundleEvidence> MakeCluster(const ClusterSpec& spec) {
  const int n = spec.members;
  const bool base = spec.baseline;
  Node healthy, downgraded, mtu;
  {
    auto h = MakeNode(Fault::kNone);
    if (!h.ok()) return h.status();
    healthy = std::move(*h);
    auto d = MakeNode(Fault::kPcieDowngrade);
    if (!d.ok()) return d.status();
    downgraded = std::move(*d);
    auto m = MakeNode(Fault::kMtu4200);
    if (!m.ok()) return m.status();
    mtu = std::move(*m);
  }
  BundleEvidence e;
  e.source = base ? "bundle example-8-baseline" : "bundle example-8";
  auto& man = e.manifest;
  const double t0 = base ? kStart - kWeek : kStart;
  man.fabcheck_version = "0.1.0";
  man.created_at = Iso(t0);
  man.coordinator = "mgmt-01";
  man.start_unix = t0;
  man.parameters = {{"rungs", "L1-L4"}, {"pattern", "ring"}, {"keep_going", true}, {"profile", "profiles/dgx-h100-roce.yaml"},
                    {"sizes", "4K-8M"}, {"coll_max", "1G"}};
  // The baseline had dgx-09 instead of dgx-08.
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back(base && i == n - 1 ? n : i);
  const int faulty_pcie = 2, faulty_mtu = 4, slow_a = 1, slow_b = 6, tcp_member = 5;
  for (int i : ids) {
    std::string name = Name(i, std::max(n, 9));
    int rack = RackOf(i, n);
    model::LadderMember m;
    m.id = name;
    m.name = name;
    m.control = fmt::format("192.168.{}.{}:18600", rack, 10 + i % 200);
    for (int r = 0; r < spec.rails; ++r) m.data_addresses.push_back(DataAddress(r, rack, i));
    m.node_type = kNodeType;
    m.rack = fmt::format("r{:02}", rack);
    m.leaf = fmt::format("leaf-r{:02}", rack);
    m.inventory_file = "members/" + name + "/inventory.json";
    m.doctor_file = "members/" + name + "/doctor.json";
    const Node& t = !base && i == faulty_pcie ? downgraded : !base && i == faulty_mtu ? mtu : healthy;
    Node node = ForMember(t, name, rack, i);
    e.inventories[name] = std::move(node.inventory);
    e.doctors[name] = std::move(node.doctor);
    man.members.push_back(std::move(m));
  }
  auto all = [&] {
    std::vector<std::string> v;
    for (const auto& m : man.members) v.push_back(m.id);
    return v;
  };
  auto member = [&](int i) { return Name(i, std::max(n, 9)); };
  double t = t0 + 2;

  // L1L2.node: inventory and doctor everywhere.
  auto node = Rung("L1L2.node", "L1/L2 per node: inventory and doctor", t, t + 11.4);
  t += 12;
  node.parameters = {{"profile", "profiles/dgx-h100-roce.yaml"}};
  node.members = all();
  for (const auto& id : node.members) {
    const auto& d = e.doctors[id];
    bool failed = d.summary.fail > 0;
    for (const auto& f : d.findings) {
      if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) continue;
      model::Finding g = f;
      g.object = id + " " + f.object;
      node.findings.push_back(std::move(g));
    }
    if (!failed) node.members_passed.push_back(id);
  }
  node.verdict = node.members_passed.size() == node.members.size() ? RungVerdict::kPass : RungVerdict::kFail;
  if (node.verdict == RungVerdict::kFail) node.reason = "pcie.downgraded on " + member(faulty_pcie) + " mlx5_2";
  // L1L2.cluster: settings that must agree.
  auto cluster = Rung("L1L2.cluster", "L1/L2 across nodes: settings that must agree", t, t + 0.4);
  t += 1;
  cluster.members = node.members_passed;
  auto agree = [&](const char* setting, auto value_of) {
    model::ConsistencyCheck c;
    c.setting = setting;
    std::map<std::string, int> votes;
    for (const auto& id : cluster.members) {
      std::string v = value_of(id);
      c.values[id] = v;
      if (!v.empty()) votes[v]++;
    }
    int best = 0;
    for (const auto& [v, k] : votes) {
      if (k > best) best = k, c.majority = v;
    }
    for (const auto& [id, v] : c.values) {
      if (!v.empty() && v != c.majority) c.outliers.push_back(id);
    }
    c.verdict = c.outliers.empty() ? RungVerdict::kPass : RungVerdict::kFail;
    cluster.consistency.push_back(std::move(c));
  };
  auto first_port = [&](const std::string& id) -> const model::RdmaPort* {
    const auto& inv = e.inventories[id];
    return inv.rdma_devices.empty() || inv.rdma_devices[0].ports.empty() ? nullptr : &inv.rdma_devices[0].ports[0];
  };
  agree("link_layer", [&](const std::string& id) { auto* p = first_port(id); return p ? p->link_layer : ""; });
  agree("port_rate", [&](const std::string& id) {
    auto* p = first_port(id);
    return p && p->rate_gbps ? fmt::format("{:g} Gb/s", *p->rate_gbps) : "";
  });
  agree("netdev_mtu", [&](const std::string& id) {
    auto* p = first_port(id);
    const auto* nd = p ? e.inventories[id].FindNetDevice(p->netdev) : nullptr;
    return nd && nd->mtu ? std::to_string(*nd->mtu) : "";
  });
  agree("gid_type", [&](const std::string&) { return std::string("RoCE v2"); });
  agree("nccl_gid_index", [&](const std::string& id) {
    auto* p = first_port(id);
    return p && p->nccl_gid_index ? std::to_string(*p->nccl_gid_index) : "";
  });
  agree("pfc_priorities", [&](const std::string&) { return std::string("3"); });
  agree("trust_mode", [&](const std::string&) { return std::string("dscp"); });
  agree("firmware", [&](const std::string& id) {
    const auto& inv = e.inventories[id];
    return inv.rdma_devices.empty() ? "" : inv.rdma_devices[0].fw_ver;
  });
  agree("kernel", [&](const std::string& id) { return e.inventories[id].host.kernel; });
  agree("nccl_version", [&](const std::string&) { return std::string("2.21.5"); });
  agree("cuda_version", [&](const std::string&) { return std::string("12.4"); });
  std::set<std::string> out_ids;
  for (const auto& c : cluster.consistency) out_ids.insert(c.outliers.begin(), c.outliers.end());
  for (const auto& id : cluster.members) {
    if (!out_ids.count(id)) cluster.members_passed.push_back(id);
  }
  cluster.verdict = out_ids.empty() ? RungVerdict::kPass : RungVerdict::kFail;
  if (!out_ids.empty()) cluster.reason = "netdev_mtu 4200 on " + member(faulty_mtu) + " where the majority has 9000";
  // Pairs of the ring over the members still in the run, every rail.
  std::vector<std::string> ring = cluster.members_passed;
  auto path = Rung("L2.path", "L2 path MTU and reachability per pair", t, t + 3.1);
  t += 4;
  path.members = ring;
  auto l3 = Rung("L3", "L3 RDMA perftest between pairs", t, t + 96);
  t += 97;
  l3.members = ring;
  l3.parameters = {{"op", "write"}, {"size", 8388608}, {"sizes", "4K-8M"}, {"pass_ratio", 0.9},
                   {"duration_s", 2}};
  // Small clusters test every direction (--pattern pairwise), large ones a ring.
  const bool pairwise = ring.size() <= 16;
  l3.parameters["pattern"] = pairwise ? "pairwise" : "ring";
  std::vector<std::pair<std::string, std::string>> directions;
  for (size_t k = 0; k < ring.size(); ++k) {
    if (!pairwise) {
      directions.push_back({ring[k], ring[(k + 1) % ring.size()]});
      continue;
    }
    for (size_t j = 0; j < ring.size(); ++j) {
      if (j != k) directions.push_back({ring[k], ring[j]});
    }
  }
  for (size_t k = 0; k < directions.size(); ++k) {
    const auto& [a, b] = directions[k];
    for (int rail = 0; rail < spec.rails; ++rail) {
      model::PairTest p;
      p.a = a, p.b = b, p.rail = rail;
      p.transport = "verbs";
      p.rdma = true;
      p.device_a = p.device_b = fmt::format("mlx5_{}", rail);
      p.path_mtu = 9000;
      p.local_mtu = 9000;
      p.verdict = RungVerdict::kPass;
      path.pairs.push_back(p);
      uint64_t seed = Fnv(a + ">" + b) % 100003 * 131 + static_cast<uint64_t>(rail) * 7 + (base ? 5 : 0);
      bool slow = !base && a == member(slow_a) && b == member(slow_b) && rail == 1;
      double peak = slow ? 148.2 : 392.0 + 2.5 * Noise(seed);
      p.sweep = Curve(peak, seed);
      p.bw_gbps = p.sweep.back().bw_gbps;
      p.expected_gbps = 360;
      p.expected_basis = "400 Gb/s port x 90% (PCIe Gen5 x16 = 504 Gb/s)";
      p.lat_p50_us = std::round((2.92 + 0.05 * Noise(seed + 99)) * 100) / 100;
      p.lat_p99_us = std::round((slow ? 38.7 : 4.1 + 0.3 * Noise(seed + 77)) * 100) / 100;
      if (slow) {
        p.verdict = RungVerdict::kFail;
        p.reason = fmt::format("{:.0f} Gb/s, 41% of the expected 360 Gb/s", *p.bw_gbps);
      }
      l3.pairs.push_back(std::move(p));
    }
  }
  path.verdict = RungVerdict::kPass;
  path.members_passed = ring;
  l3.members_passed = ring;
  bool l3_fail = std::any_of(l3.pairs.begin(), l3.pairs.end(), [](const auto& p) { return p.verdict == RungVerdict::kFail; });
  l3.verdict = l3_fail ? RungVerdict::kFail : RungVerdict::kPass;
  if (l3_fail) l3.reason = fmt::format("{} -> {} rail 1 at 148 Gb/s (cross-rack)", member(slow_a), member(slow_b));
  if (!base && n <= 99) {
    const std::string victim = member(slow_b), sender = member(slow_a);
    l3.counter_deltas = {
        {victim, "mlx5_1/1", "port_rcv_errors", 12, 1852, 1840, 96},
        {victim, "mlx5_1/1", "symbol_error", 40, 5252, 5212, 96},
        {victim, "mlx5_1/1", "hw_counters/out_of_sequence", 0, 311, 311, 96},
        {sender, "mlx5_1/1", "hw_counters/local_ack_timeout_err", 0, 27, 27, 96},
        {sender, "ens36f0np0", "rx_prio3_pause", 1200, 13244, 12044, 96},
    };
  }
  // As the ladder finishes L3: failing pairs carry their ports' counters and
  // suspect, and the member a pair's counters name does not pass the rung
  // (both ends when nothing names one).
  bundle::CorrelatePairCounters(l3);
  std::set<std::string> l3_failed;
  for (const auto& p : l3.pairs) {
    if (p.verdict != RungVerdict::kFail) continue;
    if (p.suspect) {
      l3_failed.insert(p.suspect->member);
    } else {
      l3_failed.insert(p.a);
      l3_failed.insert(p.b);
    }
  }
  std::erase_if(l3.members_passed, [&](const std::string& id) { return l3_failed.count(id) > 0; });
  for (const auto& p : l3.pairs) {
    if (p.suspect) l3.findings.push_back(bundle::SuspectFinding(l3, p));
  }
  // L4: the collectives and what NCCL used.
  auto l4 = Rung("L4", "L4 NCCL collectives and the transport NCCL chose", t, t + 141);
  t += 142;
  l4.members = ring;
  l4.parameters = {{"ops", "all_reduce,all_gather,alltoall"}, {"max_bytes", 1073741824}, {"pass_ratio", 0.8}};
  const bool fallback = !base && std::find(ring.begin(), ring.end(), member(tcp_member)) != ring.end();
  for (const char* op : {"all_reduce", "all_gather", "alltoall"}) {
    model::CollectiveCheck c;
    c.op = op;
    c.max_bytes = 1073741824;
    double top = std::string(op) == "alltoall" ? 292 : 352;
    if (fallback) top = std::string(op) == "alltoall" ? 9.1 : 11.6;
    for (int e2 = 20; e2 <= 30; ++e2) {
      double bytes = std::pow(2, e2);
      c.sweep.push_back({static_cast<uint64_t>(bytes), std::round(top * bytes / (bytes + 6.0e6) * 10) / 10});
    }
    c.busbw_gbps = c.sweep.back().bw_gbps;
    c.expected_gbps = std::string(op) == "alltoall" ? 272 : 320;
    c.expected_basis = "8 x 400 Gb/s NICs per node x 80%";
    c.verdict = c.busbw_gbps >= *c.expected_gbps ? RungVerdict::kPass : RungVerdict::kFail;
    if (c.verdict == RungVerdict::kFail) {
      c.reason = fmt::format("busbw {:.1f} GB/s, {:.0f}% of the expected {:.0f} GB/s", c.busbw_gbps,
                             c.busbw_gbps / *c.expected_gbps * 100, *c.expected_gbps);
    }
    l4.collectives.push_back(std::move(c));
  }
  for (const auto& id : ring) {
    model::NcclTransportCheck nc;
    nc.member = id;
    const auto& inv = e.inventories[id];
    // NCCL_SOCKET_IFNAME names the rail-0 data-plane netdev.
    std::string netdev0;
    for (const auto& nic : inv.nics) {
      if (netdev0.empty() && !nic.rdma_devices.empty() && !nic.netdevs.empty()) netdev0 = nic.netdevs[0];
    }
    const auto* m = e.Member(id);
    if (fallback && id == member(tcp_member)) {
      nc.transports = {"NET/Socket", "P2P/CUMEM"};
      nc.interface = fmt::format("eno1:{}<0>", m->control.substr(0, m->control.find(':')));
      nc.verdict = RungVerdict::kFail;
      nc.reason = "NCCL_IB_HCA=mlx5_O matches no device; NCCL fell back to sockets";
    } else {
      nc.transports = {"NET/IB/GDRDMA", "P2P/CUMEM"};
      for (int r = 0; r < spec.rails; ++r) nc.hcas.push_back(fmt::format("mlx5_{}:1", r));
      nc.interface = fmt::format("{}:{}<0>", netdev0, m->data_addresses[0]);
      nc.gpudirect = true;
      nc.verdict = RungVerdict::kPass;
    }
    l4.nccl.push_back(std::move(nc));
  }
  for (const auto& id : ring) {
    if (!(fallback && id == member(tcp_member))) l4.members_passed.push_back(id);
  }
  bool l4_fail = fallback;
  l4.verdict = l4_fail ? RungVerdict::kFail : RungVerdict::kPass;
  if (l4_fail) l4.reason = member(tcp_member) + " ran NCCL over NET/Socket: every collective at TCP speed";

  // After L3 and L4, their baseline groups on the members that passed them.
  AddBaselineGroups(e, l3, l4, spec.rails);
  for (auto* r : {&node, &cluster, &path, &l3, &l4}) man.rungs.push_back(std::move(*r));
  // Members that left the run, where and why.
  for (auto& m : man.members) {
    for (const auto& r : man.rungs) {
      bool ran = std::find(r.members.begin(), r.members.end(), m.id) != r.members.end();
      bool passed = std::find(r.members_passed.begin(), r.members_passed.end(), m.id) != r.members_passed.end();
      if (ran && !passed) {
        m.dropped_at = r.id;
        m.dropped_reason = r.reason;
        break;
      }
    }
  }
  man.end_unix = t;
  auto& v = man.verdict;
  for (const auto& r : man.rungs) {
    if (r.verdict == RungVerdict::kFail && v.first_failing_rung.empty()) v.first_failing_rung = r.id;
  }
  v.go = v.first_failing_rung.empty();
  v.exit_code = v.go ? 0 : 2;
  v.summary = v.go ? fmt::format("GO: every rung passed on all {} members", man.members.size())
                   : fmt::format("NO-GO: {} failed first ({}); with --keep-going the ladder went on with the rest",
                                 v.first_failing_rung, man.rungs.front().reason.empty() ? "see the rungs" : man.rungs.front().reason);
  return e;
}

Status WriteBundle(const BundleEvidence& e, const std::string& out) {
  auto writer = bundle::Writer::Create(out);
  if (!writer.ok()) return writer.status();
  for (const auto& m : e.manifest.members) {
    if (const auto* inv = e.InventoryOf(m.id)) {
      if (auto s = writer->WriteJson(m.inventory_file, nlohmann::json(*inv)); !s.ok()) return s;
    }
    if (const auto* d = e.DoctorOf(m.id)) {
      if (auto s = writer->WriteJson(m.doctor_file, nlohmann::json(*d)); !s.ok()) return s;
    }
  }
  // The raw samples behind the counter deltas.
  for (const auto& r : e.manifest.rungs) {
    std::map<std::string, std::pair<model::CounterSample, model::CounterSample>> samples;
    for (const auto& d : r.counter_deltas) {
      auto& [before, after] = samples[d.member];
      before.member = after.member = d.member;
      before.rung = after.rung = r.id;
      before.phase = "before";
      after.phase = "after";
      before.time_unix = r.start_unix;
      after.time_unix = r.end_unix;
      before.values[d.object][d.counter] = d.before;
      after.values[d.object][d.counter] = d.after;
    }
    for (const auto& [id, pair] : samples) {
      if (auto s = writer->WriteJson(bundle::CounterFile(id, r.id, "before"), nlohmann::json(pair.first)); !s.ok()) return s;
      if (auto s = writer->WriteJson(bundle::CounterFile(id, r.id, "after"), nlohmann::json(pair.second)); !s.ok()) return s;
    }
  }
  return writer->Finish(e.manifest);
}

}  // namespace fabcheck::report::example
