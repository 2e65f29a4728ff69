#include "sim/clos.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace fabcheck::sim {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser: a switch's hash stand-in
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::optional<int> Number(std::string_view s, std::string_view prefix) {
  if (!StartsWith(s, prefix)) return std::nullopt;
  auto v = ParseInt(s.substr(prefix.size()));
  if (!v || *v < 0 || *v > 1'000'000) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

Result<Clos> Clos::Make(const ClosOptions& o) {
  if (o.nodes < 2 || o.nodes > 65536) return InvalidArgumentError("--nodes must be 2..65536");
  if (o.rails < 1 || o.rails > 16) return InvalidArgumentError("--rails must be 1..16");
  if (o.nodes_per_leaf < 1 || o.nodes_per_leaf > 512) return InvalidArgumentError("--nodes-per-leaf must be 1..512");
  if (o.spines < 1 || o.spines > 256) return InvalidArgumentError("--spines must be 1..256");
  if (!(o.oversubscription >= 1 && o.oversubscription <= 16)) {
    return InvalidArgumentError("--oversubscription must be 1..16 (1 = non-blocking)");
  }
  if (!(o.nic_gbps > 0)) return InvalidArgumentError("--nic-gbps must be positive");
  Clos c;
  c.o_ = o;
  c.leaves_ = (o.nodes + o.nodes_per_leaf - 1) / o.nodes_per_leaf;
  if (o.pods < 1 || o.pods > 64) return InvalidArgumentError("--pods must be 1..64 (1 = two tiers)");
  if (o.pods > 1) {
    if (o.cores < 1 || o.cores > 256) return InvalidArgumentError("three tiers (--pods > 1) need --cores 1..256");
    if (o.pods > c.leaves_) {
      return InvalidArgumentError(fmt::format("--pods {} is more than the {} leaves", o.pods, c.leaves_));
    }
    if (o.spines * o.pods > 1000) return InvalidArgumentError("--spines x --pods must be at most 1000");
  } else if (o.cores != 0) {
    return InvalidArgumentError("--cores needs three tiers: give --pods 2 or more");
  }
  c.leaves_per_pod_ = (c.leaves_ + o.pods - 1) / o.pods;
  c.width_ = std::max<int>(4, static_cast<int>(std::to_string(o.nodes - 1).size()));
  return c;
}

double Clos::uplink_gbps() const {
  return o_.nodes_per_leaf * o_.nic_gbps / (o_.spines * o_.oversubscription);
}

double Clos::core_link_gbps() const {
  return o_.cores > 0 ? leaves_per_pod_ * uplink_gbps() / o_.cores : 0;
}

std::string Clos::Member(int m) const { return fmt::format("n{:0{}d}", m, width_); }
std::string Clos::Nic(int m, int r) const { return fmt::format("{}/r{}", Member(m), r); }
std::string Clos::Leaf(int r, int l) const { return fmt::format("leaf-r{}-{:02d}", r, l); }
std::string Clos::Spine(int r, int s) const { return fmt::format("spine-r{}-{:02d}", r, s); }
std::string Clos::Cable(int m, int r) const { return fmt::format("{}~{}", Nic(m, r), Leaf(r, leaf_of(m))); }
std::string Clos::Uplink(int r, int l, int s) const { return fmt::format("{}~{}", Leaf(r, l), Spine(r, s)); }
std::string Clos::Core(int r, int c) const { return fmt::format("core-r{}-{:02d}", r, c); }
std::string Clos::CoreLink(int r, int s, int c) const { return fmt::format("{}~{}", Spine(r, s), Core(r, c)); }

Result<Element> Clos::Parse(std::string_view name) const {
  std::string scheme = fmt::format("names: {} (member), {} (NIC), {} (NIC-leaf link), {} (leaf), {} (spine), "
                                   "{} (leaf-spine link)", Member(0), Nic(0, 0), Cable(0, 0), Leaf(0, 0),
                                   Spine(0, 0), Uplink(0, 0, 0));
  if (three_tier()) scheme += fmt::format(", {} (core), {} (spine-core link)", Core(0, 0), CoreLink(0, 0, 0));
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError(fmt::format("element '{}': {}; {}", name, why, scheme));
  };
  auto member = [&](std::string_view s) -> Result<int> {
    auto m = Number(s, "n");
    if (!m) return bad("not a member name");
    if (*m >= o_.nodes) return bad(fmt::format("member {} is beyond --nodes {}", *m, o_.nodes));
    return *m;
  };
  auto rail = [&](std::string_view s) -> Result<int> {
    auto r = Number(s, "r");
    if (!r) return bad("the rail is written /rN");
    if (*r >= o_.rails) return bad(fmt::format("rail {} is beyond --rails {}", *r, o_.rails));
    return *r;
  };
  auto switch_of = [&](std::string_view s, std::string_view kind, int limit, Element* e) -> Status {
    // leaf-r3-07 / spine-r3-12
    if (!StartsWith(s, kind) || s.size() <= kind.size() + 2 || s.substr(kind.size(), 2) != "-r") {
      return bad(fmt::format("not a {} name", kind));
    }
    auto parts = Split(s.substr(kind.size() + 1), '-');
    if (parts.size() != 2) return bad(fmt::format("a {} is {}-rR-NN", kind, kind));
    ASSIGN_OR_RETURN(int r, rail(parts[0]));
    auto idx = ParseInt(parts[1]);
    if (!idx || *idx < 0 || *idx >= limit) return bad(fmt::format("no such {} (there are {})", kind, limit));
    if (e->rail >= 0 && e->rail != r) return bad("the two ends are on different rails");
    e->rail = r;
    (kind == "leaf" ? e->leaf : kind == "spine" ? e->spine : e->core) = static_cast<int>(*idx);
    return Status::Ok();
  };
  const int spines = total_spines(), cores = three_tier() ? o_.cores : 0;
  Element e;
  size_t tilde = name.find('~');
  if (tilde != std::string_view::npos) {
    std::string_view left = name.substr(0, tilde), right = name.substr(tilde + 1);
    if (StartsWith(left, "leaf-")) {
      e.kind = Element::Kind::kUplink;
      RETURN_IF_ERROR(switch_of(left, "leaf", leaves_, &e));
      RETURN_IF_ERROR(switch_of(right, "spine", spines, &e));
      if (e.spine / o_.spines != pod_of_leaf(e.leaf)) {
        return bad(fmt::format("{} is in pod {}, {} in pod {}: no link between them", Leaf(e.rail, e.leaf),
                               pod_of_leaf(e.leaf), Spine(e.rail, e.spine), e.spine / o_.spines));
      }
      return e;
    }
    if (StartsWith(left, "spine-")) {
      if (cores == 0) return bad("a two-tier fabric has no spine-core links");
      e.kind = Element::Kind::kCoreLink;
      RETURN_IF_ERROR(switch_of(left, "spine", spines, &e));
      RETURN_IF_ERROR(switch_of(right, "core", cores, &e));
      return e;
    }
    e.kind = Element::Kind::kCable;
    size_t slash = left.find('/');
    if (slash == std::string_view::npos) return bad("a NIC-leaf link starts with the NIC, nNNNN/rR");
    ASSIGN_OR_RETURN(e.member, member(left.substr(0, slash)));
    ASSIGN_OR_RETURN(e.rail, rail(left.substr(slash + 1)));
    Element leaf;
    leaf.rail = e.rail;
    RETURN_IF_ERROR(switch_of(right, "leaf", leaves_, &leaf));
    if (leaf.leaf != leaf_of(e.member)) return bad(fmt::format("{} is cabled to {}", Nic(e.member, e.rail),
                                                               Leaf(e.rail, leaf_of(e.member))));
    e.leaf = leaf.leaf;
    return e;
  }
  if (StartsWith(name, "leaf-")) {
    e.kind = Element::Kind::kLeaf;
    RETURN_IF_ERROR(switch_of(name, "leaf", leaves_, &e));
    return e;
  }
  if (StartsWith(name, "spine-")) {
    e.kind = Element::Kind::kSpine;
    RETURN_IF_ERROR(switch_of(name, "spine", spines, &e));
    return e;
  }
  if (StartsWith(name, "core-")) {
    if (cores == 0) return bad("a two-tier fabric has no cores");
    e.kind = Element::Kind::kCore;
    RETURN_IF_ERROR(switch_of(name, "core", cores, &e));
    return e;
  }
  size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    e.kind = Element::Kind::kNic;
    ASSIGN_OR_RETURN(e.member, member(name.substr(0, slash)));
    ASSIGN_OR_RETURN(e.rail, rail(name.substr(slash + 1)));
    return e;
  }
  e.kind = Element::Kind::kMember;
  ASSIGN_OR_RETURN(e.member, member(name));
  return e;
}

fabric::Fabric Clos::ToFabric() const {
  fabric::Fabric f;
  f.rails = o_.rails;
  f.source = three_tier() ? fmt::format("simulated three-tier Clos: {} members, {} per leaf, {} pods of {} spines, {} "
                                        "cores per rail", o_.nodes, o_.nodes_per_leaf, o_.pods, o_.spines, o_.cores)
                          : fmt::format("simulated Clos: {} members, {} per leaf, {} spines per rail", o_.nodes,
                                        o_.nodes_per_leaf, o_.spines);
  for (int m = 0; m < o_.nodes; ++m) {
    fabric::Member x;
    x.name = Member(m);
    for (int r = 0; r < o_.rails; ++r) x.leaves.push_back(Leaf(r, leaf_of(m)));
    f.members.push_back(std::move(x));
  }
  for (int r = 0; r < o_.rails; ++r) {
    f.spines.emplace_back();
    for (int s = 0; s < total_spines(); ++s) f.spines.back().push_back(Spine(r, s));
    if (three_tier()) {
      f.cores.emplace_back();
      for (int c = 0; c < o_.cores; ++c) f.cores.back().push_back(Core(r, c));
    }
  }
  return f;
}

namespace {
uint64_t FlowHash(int a, int b, int rail, uint32_t port, uint64_t salt) {
  uint64_t h = Mix((static_cast<uint64_t>(a) << 40) ^ (static_cast<uint64_t>(b) << 16) ^ static_cast<uint64_t>(rail));
  return Mix(h ^ port ^ salt);
}
}  // namespace

int Clos::SpineFor(int a, int b, int rail, uint32_t port) const {
  const int pod = pod_of_leaf(leaf_of(a));
  return pod * o_.spines + static_cast<int>(FlowHash(a, b, rail, port, 0) % static_cast<uint64_t>(o_.spines));
}

int Clos::CoreFor(int a, int b, int rail, uint32_t port) const {
  // Each switch hashes with its own seed, as real ones do (else every level
  // would pick the same index and the core tier would mirror the spines).
  return static_cast<int>(FlowHash(a, b, rail, port, 0x5bd1e995u) % static_cast<uint64_t>(std::max(1, o_.cores)));
}

int Clos::FarSpineFor(int a, int b, int rail, uint32_t port) const {
  const int pod = pod_of_leaf(leaf_of(b));
  return pod * o_.spines + static_cast<int>(FlowHash(a, b, rail, port, 0xc2b2ae35u) % static_cast<uint64_t>(o_.spines));
}

}  // namespace fabcheck::sim
