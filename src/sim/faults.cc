#include "sim/faults.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

namespace fabcheck::sim {
namespace {

struct KindInfo {
  FaultKind kind;
  std::string_view name;
  Element::Kind element;
  std::string_view value;  // the field it needs ("factor|loss": either)
};

const KindInfo kKinds[] = {
    {FaultKind::kNodeSlow, "node_slow", Element::Kind::kMember, "factor"},
    {FaultKind::kNicSlow, "nic_slow", Element::Kind::kNic, "factor"},
    {FaultKind::kCableDegraded, "cable_degraded", Element::Kind::kCable, "factor|loss"},
    {FaultKind::kUplinkDegraded, "uplink_degraded", Element::Kind::kUplink, "factor|loss"},
    {FaultKind::kSpineLoss, "spine_loss", Element::Kind::kSpine, "loss"},
    {FaultKind::kMtuMismatch, "mtu_mismatch", Element::Kind::kNic, "mtu"},
    {FaultKind::kFlap, "flap", Element::Kind::kCable, "factor"},
    {FaultKind::kNoise, "noise", Element::Kind::kMember, "cv"},
    {FaultKind::kUplinkFlap, "uplink_flap", Element::Kind::kUplink, "factor"},
    {FaultKind::kSpineCongested, "spine_congested", Element::Kind::kSpine, "factor"},
};

const KindInfo& Info(FaultKind k) {
  for (const auto& i : kKinds) {
    if (i.kind == k) return i;
  }
  return kKinds[0];
}

std::string_view ElementWord(Element::Kind k) {
  switch (k) {
    case Element::Kind::kMember: return "a member (n0001)";
    case Element::Kind::kNic: return "a NIC (n0001/r3)";
    case Element::Kind::kCable: return "a NIC-leaf link (n0001/r3~leaf-r3-00)";
    case Element::Kind::kUplink: return "a leaf-spine link (leaf-r3-07~spine-r3-12)";
    case Element::Kind::kSpine: return "a spine (spine-r3-12)";
    case Element::Kind::kLeaf: return "a leaf";
    case Element::Kind::kCore: return "a core (core-r3-02)";
    case Element::Kind::kCoreLink: return "a spine-core link (spine-r3-12~core-r3-02)";
  }
  return "an element";
}

}  // namespace

std::string_view FaultKindName(FaultKind kind) { return Info(kind).name; }

Result<std::vector<Fault>> ParseFaults(std::string_view text, const Clos& clos) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    return InvalidArgumentError("faults: not a JSON list; write [{\"kind\": \"nic_slow\", \"element\": "
                                "\"n0001/r3\", \"factor\": 0.5}, ...]");
  }
  std::vector<Fault> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& j = doc[i];
    const std::string where = fmt::format("faults[{}]", i);
    if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string() || !j.contains("element") ||
        !j["element"].is_string()) {
      return InvalidArgumentError(where + ": needs \"kind\" and \"element\" strings");
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() != "kind" && it.key() != "element" && it.key() != "factor" && it.key() != "loss" &&
          it.key() != "mtu" && it.key() != "cv" && it.key() != "direction") {
        return InvalidArgumentError(fmt::format("{}: unknown key '{}' (known: kind, element, factor, loss, mtu, cv, "
                                                "direction)", where, it.key()));
      }
    }
    const std::string kind = j["kind"].get<std::string>();
    const KindInfo* info = nullptr;
    for (const auto& k : kKinds) {
      if (k.name == kind) info = &k;
    }
    if (!info) {
      return InvalidArgumentError(fmt::format("{}: unknown kind '{}' (known: node_slow, nic_slow, cable_degraded, "
                                              "uplink_degraded, spine_loss, mtu_mismatch, flap, noise, uplink_flap, spine_congested)",
                                              where, kind));
    }
    Fault f;
    f.kind = info->kind;
    f.element = j["element"].get<std::string>();
    auto e = clos.Parse(f.element);
    if (!e.ok()) return InvalidArgumentError(fmt::format("{} ({}): {}", where, kind, e.status().message()));
    // One tier up, the same kinds: a spine-core link degrades, a core drops.
    const bool upper = (info->kind == FaultKind::kUplinkDegraded && e->kind == Element::Kind::kCoreLink) ||
                       (info->kind == FaultKind::kSpineLoss && e->kind == Element::Kind::kCore);
    if (e->kind != info->element && !upper) {
      return InvalidArgumentError(fmt::format("{} ({}): '{}' is not {}{}", where, kind, f.element,
                                              ElementWord(info->element),
                                              info->kind == FaultKind::kUplinkDegraded ? " or a spine-core link"
                                              : info->kind == FaultKind::kSpineLoss  ? " or a core"
                                                                                     : ""));
    }
    f.where = *e;
    auto number = [&](const char* key, double lo, double hi, bool open_lo) -> Result<std::optional<double>> {
      if (!j.contains(key)) return std::optional<double>();
      if (!j[key].is_number()) return InvalidArgumentError(fmt::format("{} ({}): {} must be a number", where, kind, key));
      double v = j[key].get<double>();
      if (!(open_lo ? v > lo : v >= lo) || !(v <= hi)) {
        return InvalidArgumentError(fmt::format("{} ({}): {} {} is outside {}{}, {}]", where, kind, key, v,
                                                open_lo ? "(" : "[", lo, hi));
      }
      return std::optional<double>(v);
    };
    ASSIGN_OR_RETURN(f.factor, number("factor", 0, 1, true));
    ASSIGN_OR_RETURN(f.loss, number("loss", 0, 0.5, true));
    ASSIGN_OR_RETURN(f.cv, number("cv", 0, 2, true));
    ASSIGN_OR_RETURN(auto mtu, number("mtu", 576, 65536, false));
    if (mtu) f.mtu = static_cast<int>(*mtu);
    const std::string_view need = info->value;
    const bool ok = need == "factor" ? f.factor.has_value()
                    : need == "loss" ? f.loss.has_value()
                    : need == "mtu"  ? f.mtu.has_value()
                    : need == "cv"   ? f.cv.has_value()
                                     : (f.factor.has_value() != f.loss.has_value());
    if (!ok) {
      return InvalidArgumentError(fmt::format("{} ({}): give {}", where, kind,
                                              need == "factor|loss" ? "either factor or loss (not both)"
                                                                    : std::string(need)));
    }
    if (j.contains("direction")) {
      if (info->kind != FaultKind::kUplinkDegraded || !j["direction"].is_string() ||
          (j["direction"] != "up" && j["direction"] != "down")) {
        return InvalidArgumentError(fmt::format("{} ({}): direction is for uplink_degraded only, \"up\" (leaf->spine, "
                                                "spine->core) or \"down\"; leave it out for both ways", where, kind));
      }
      f.direction = j["direction"].get<std::string>();
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Fault> HarshMix(const Clos& clos, uint64_t seed) {
  std::vector<Fault> out = RealisticMix(clos, seed);
  const ClosOptions& o = clos.options();
  std::mt19937_64 rng(seed * 7919 + 17);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  auto scaled = [&](double per_2048) { return std::max(1, static_cast<int>(per_2048 * o.nodes / 2048.0 + 0.5)); };
  // Switch faults on spines no other switch fault touches, so each has one answer.
  std::set<std::pair<int, int>> used_spines;
  for (const Fault& f : out) {
    if (f.where.spine >= 0) used_spines.insert({f.where.rail, f.where.spine});
  }
  auto add = [&](FaultKind k, std::string element) {
    Fault f;
    f.kind = k;
    f.element = std::move(element);
    f.where = *clos.Parse(f.element);
    out.push_back(f);
    return &out.back();
  };
  auto uplink = [&]() -> std::optional<std::pair<int, int>> {  // a fresh (rail, leaf x spine) with its spine
    for (int tries = 0; tries < 100; ++tries) {
      const int r = pick(o.rails), l = pick(clos.leaves());
      const int s = clos.three_tier() ? clos.pod_of_leaf(l) * o.spines + pick(o.spines) : pick(o.spines);
      if (used_spines.insert({r, s}).second) return std::pair<int, int>(r, l * clos.total_spines() + s);
    }
    return std::nullopt;
  };
  auto uplink_name = [&](std::pair<int, int> u) {
    return clos.Uplink(u.first, u.second / clos.total_spines(), u.second % clos.total_spines());
  };
  for (int i = 0; i < scaled(2); ++i) {
    auto u = uplink();
    if (!u) break;
    Fault* f = add(FaultKind::kUplinkDegraded, uplink_name(*u));
    f->factor = uniform(0.1, 0.3);
    f->direction = i % 2 ? "down" : "up";
  }
  for (int i = 0; i < scaled(2); ++i) {
    auto u = uplink();
    if (!u) break;
    Fault* f = add(FaultKind::kUplinkDegraded, uplink_name(*u));
    f->loss = uniform(0.001, 0.01);  // gray loss: the link stays up
    f->direction = i % 2 ? "up" : "down";
  }
  for (int i = 0; i < scaled(1); ++i) {
    auto u = uplink();
    if (!u) break;
    add(FaultKind::kUplinkFlap, uplink_name(*u))->factor = uniform(0.3, 0.6);
  }
  for (int i = 0; i < scaled(1); ++i) {
    const int r = pick(o.rails), s = pick(clos.total_spines());
    if (!used_spines.insert({r, s}).second) continue;
    add(FaultKind::kSpineCongested, clos.Spine(r, s))->factor = uniform(0.25, 0.4);
  }
  return out;
}

std::vector<Fault> RealisticMix(const Clos& clos, uint64_t seed) {
  const ClosOptions& o = clos.options();
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  auto scaled = [&](double per_2048) { return std::max(1, static_cast<int>(per_2048 * o.nodes / 2048.0 + 0.5)); };
  std::set<int> used_members;
  auto member = [&] {
    for (;;) {
      int m = pick(o.nodes);
      if (used_members.insert(m).second) return m;
    }
  };
  std::set<std::pair<int, int>> used_spines;  // (rail, spine)
  std::vector<Fault> out;
  auto add = [&](FaultKind k, std::string element) {
    Fault f;
    f.kind = k;
    f.element = std::move(element);
    f.where = *clos.Parse(f.element);
    out.push_back(f);
    return &out.back();
  };
  for (int i = 0; i < scaled(2); ++i) add(FaultKind::kNodeSlow, clos.Member(member()))->factor = uniform(0.3, 0.6);
  for (int i = 0; i < scaled(4); ++i) {
    // PCIe x8 instead of x16, or a Gen3 link: half; or worse.
    add(FaultKind::kNicSlow, clos.Nic(member(), pick(o.rails)))->factor = i % 2 ? 0.5 : uniform(0.2, 0.6);
  }
  for (int i = 0; i < scaled(4); ++i) {
    Fault* f = add(FaultKind::kCableDegraded, clos.Cable(member(), pick(o.rails)));
    if (i % 2) {
      f->factor = i % 4 == 1 ? 0.5 : 0.25;  // trained at half or a quarter of its lanes
    } else {
      f->loss = uniform(0.002, 0.01);
    }
  }
  for (int i = 0; i < scaled(3); ++i) {
    // The draws in this order keep the two-tier mix of a seed as it was.
    const int r = pick(o.rails), local = pick(o.spines);
    int l = -1, s = local;
    if (clos.three_tier()) {
      l = pick(clos.leaves());
      s = clos.pod_of_leaf(l) * o.spines + local;
    }
    if (!used_spines.insert({r, s}).second) continue;
    if (l < 0) l = pick(clos.leaves());
    Fault* f = add(FaultKind::kUplinkDegraded, clos.Uplink(r, l, s));
    if (i % 2) {
      f->factor = uniform(0.1, 0.3);
    } else {
      f->loss = uniform(0.005, 0.02);
    }
  }
  for (int i = 0; i < scaled(1); ++i) {
    int r = pick(o.rails), s = pick(clos.total_spines());
    if (!used_spines.insert({r, s}).second) continue;
    add(FaultKind::kSpineLoss, clos.Spine(r, s))->loss = uniform(0.002, 0.01);
  }
  if (clos.three_tier()) {
    // The tier above: degraded spine-core links and a lossy core, on spines
    // and cores no other switch fault touches.
    std::set<std::pair<int, int>> used_cores;
    for (int i = 0; i < scaled(2); ++i) {
      const int r = pick(o.rails), s = pick(clos.total_spines()), c = pick(o.cores);
      if (!used_spines.insert({r, s}).second || !used_cores.insert({r, c}).second) continue;
      Fault* f = add(FaultKind::kUplinkDegraded, clos.CoreLink(r, s, c));
      if (i % 2) {
        f->factor = uniform(0.1, 0.3);
      } else {
        f->loss = uniform(0.005, 0.02);
      }
    }
    const int r = pick(o.rails), c = pick(o.cores);
    if (used_cores.insert({r, c}).second) add(FaultKind::kSpineLoss, clos.Core(r, c))->loss = uniform(0.002, 0.01);
  }
  for (int i = 0; i < scaled(2); ++i) add(FaultKind::kMtuMismatch, clos.Nic(member(), pick(o.rails)))->mtu = 1500;
  for (int i = 0; i < scaled(2); ++i) add(FaultKind::kFlap, clos.Cable(member(), pick(o.rails)))->factor = uniform(0.2, 0.4);
  for (int i = 0; i < scaled(4); ++i) add(FaultKind::kNoise, clos.Member(member()))->cv = uniform(0.15, 0.3);
  return out;
}

nlohmann::json ToJson(const std::vector<Fault>& faults) {
  nlohmann::json j = nlohmann::json::array();
  for (const Fault& f : faults) {
    nlohmann::json e = {{"kind", FaultKindName(f.kind)}, {"element", f.element}};
    if (f.factor) e["factor"] = *f.factor;
    if (f.loss) e["loss"] = *f.loss;
    if (f.mtu) e["mtu"] = *f.mtu;
    if (f.cv) e["cv"] = *f.cv;
    if (!f.direction.empty()) e["direction"] = f.direction;
    j.push_back(std::move(e));
  }
  return j;
}

FabricState Apply(const Clos& clos, const std::vector<Fault>& faults) {
  const ClosOptions& o = clos.options();
  FabricState s;
  s.rails = o.rails;
  s.spines = clos.total_spines();
  s.leaves = clos.leaves();
  s.cores = clos.three_tier() ? o.cores : 0;
  const size_t nics = static_cast<size_t>(o.nodes) * o.rails;
  s.nic_factor.assign(nics, 1);
  s.cable_factor.assign(nics, 1);
  s.port_factor.assign(nics, 1);
  s.cable_loss.assign(nics, 0);
  s.flap.assign(nics, 0);
  s.mtu.assign(nics, o.mtu);
  s.noise_cv.assign(o.nodes, 0);
  s.uplink_factor.assign(static_cast<size_t>(o.rails) * s.leaves * s.spines, 1);
  s.uplink_loss.assign(s.uplink_factor.size(), 0);
  s.uplink_factor_down.assign(s.uplink_factor.size(), 1);
  s.uplink_loss_down.assign(s.uplink_factor.size(), 0);
  s.uplink_flap.assign(s.uplink_factor.size(), 0);
  s.spine_loss.assign(static_cast<size_t>(o.rails) * s.spines, 0);
  s.core_link_factor.assign(static_cast<size_t>(o.rails) * s.spines * s.cores, 1);
  s.core_link_loss.assign(s.core_link_factor.size(), 0);
  s.core_link_factor_down.assign(s.core_link_factor.size(), 1);
  s.core_link_loss_down.assign(s.core_link_factor.size(), 0);
  s.core_loss.assign(static_cast<size_t>(o.rails) * s.cores, 0);
  for (const Fault& f : faults) {
    const Element& e = f.where;
    switch (f.kind) {
      case FaultKind::kNodeSlow:
        for (int r = 0; r < o.rails; ++r) s.nic_factor[s.Nic(e.member, r)] *= static_cast<float>(*f.factor);
        break;
      case FaultKind::kNicSlow: s.nic_factor[s.Nic(e.member, e.rail)] *= static_cast<float>(*f.factor); break;
      case FaultKind::kCableDegraded:
        if (f.factor) {
          s.cable_factor[s.Nic(e.member, e.rail)] *= static_cast<float>(*f.factor);
          s.port_factor[s.Nic(e.member, e.rail)] *= static_cast<float>(*f.factor);
        } else {
          s.cable_loss[s.Nic(e.member, e.rail)] += static_cast<float>(*f.loss);
        }
        break;
      case FaultKind::kUplinkDegraded: {
        const bool up = f.direction != "down", down = f.direction != "up";
        const bool core = e.kind == Element::Kind::kCoreLink;
        const size_t k = core ? s.CoreLink(e.rail, e.spine, e.core) : s.Uplink(e.rail, e.leaf, e.spine);
        auto& factor_up = core ? s.core_link_factor : s.uplink_factor;
        auto& factor_down = core ? s.core_link_factor_down : s.uplink_factor_down;
        auto& loss_up = core ? s.core_link_loss : s.uplink_loss;
        auto& loss_down = core ? s.core_link_loss_down : s.uplink_loss_down;
        if (f.factor) {
          if (up) factor_up[k] *= static_cast<float>(*f.factor);
          if (down) factor_down[k] *= static_cast<float>(*f.factor);
        } else {
          if (up) loss_up[k] += static_cast<float>(*f.loss);
          if (down) loss_down[k] += static_cast<float>(*f.loss);
        }
        break;
      }
      case FaultKind::kUplinkFlap: s.uplink_flap[s.Uplink(e.rail, e.leaf, e.spine)] = static_cast<float>(*f.factor); break;
      case FaultKind::kSpineCongested:
        for (int l = 0; l < s.leaves; ++l) {
          if (clos.three_tier() && clos.pod_of_leaf(l) != e.spine / o.spines) continue;
          s.uplink_factor[s.Uplink(e.rail, l, e.spine)] *= static_cast<float>(*f.factor);
          s.uplink_factor_down[s.Uplink(e.rail, l, e.spine)] *= static_cast<float>(*f.factor);
        }
        break;
      case FaultKind::kSpineLoss:
        if (e.kind == Element::Kind::kCore) {
          s.core_loss[s.CoreAt(e.rail, e.core)] += static_cast<float>(*f.loss);
        } else {
          s.spine_loss[s.SpineAt(e.rail, e.spine)] += static_cast<float>(*f.loss);
        }
        break;
      case FaultKind::kMtuMismatch: s.mtu[s.Nic(e.member, e.rail)] = *f.mtu; break;
      case FaultKind::kFlap: s.flap[s.Nic(e.member, e.rail)] = static_cast<float>(*f.factor); break;
      case FaultKind::kNoise: s.noise_cv[e.member] = static_cast<float>(*f.cv); break;
    }
  }
  return s;
}

Expected ExpectedFinding(const Fault& f) {
  // Two-way faults: the finding names the element, no direction.
  auto on = [&](std::string kind) { return Expected{std::move(kind), f.element, ""}; };
  switch (f.kind) {
    case FaultKind::kNodeSlow: return on("node");
    case FaultKind::kNicSlow: return on("nic");
    case FaultKind::kCableDegraded: return on("cable");
    case FaultKind::kUplinkDegraded: {
      if (f.direction.empty()) return on("uplink");
      // leaf~spine or spine~core: "up" goes from the first to the second.
      const size_t tilde = f.element.find('~');
      const std::string lo = f.element.substr(0, tilde), hi = f.element.substr(tilde + 1);
      return {"uplink", f.element, f.direction == "up" ? lo + "->" + hi : hi + "->" + lo};
    }
    case FaultKind::kUplinkFlap: return on("uplink");
    case FaultKind::kSpineCongested: return on("spine");
    case FaultKind::kSpineLoss: return on(f.where.kind == Element::Kind::kCore ? "core" : "spine");
    case FaultKind::kMtuMismatch: return on("mtu");
    case FaultKind::kFlap: return on("cable");
    case FaultKind::kNoise: return Expected{"", "", ""};
  }
  return Expected{"", "", ""};
}

}  // namespace fabcheck::sim
