#include "perf/verbs/gid.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "base/strings.h"

namespace fabcheck::perf::verbs {

std::string_view GidTypeName(GidType type) {
  switch (type) {
    case GidType::kIb: return "IB";
    case GidType::kRoceV1: return "RoCE v1";
    case GidType::kRoceV2: return "RoCE v2";
    case GidType::kUnknown: break;
  }
  return "unknown";
}

GidType ParseGidType(std::string_view text) {
  text = Trim(text);
  if (text == "RoCE v2") return GidType::kRoceV2;
  // The kernel prints "IB/RoCE v1" for both IB and RoCE v1 slots; the link
  // layer tells them apart, which the caller knows.
  if (text == "IB/RoCE v1" || text == "RoCE v1") return GidType::kRoceV1;
  if (text == "IB") return GidType::kIb;
  return GidType::kUnknown;
}

Result<GidBytes> ParseGid(std::string_view text) {
  std::string s(Trim(text));
  GidBytes gid{};
  if (s.empty() || inet_pton(AF_INET6, s.c_str(), gid.data()) != 1) {
    return InvalidArgumentError(fmt::format("'{}' is not a GID (want 8 groups of hex digits, or an IPv6 address)", s));
  }
  return gid;
}

std::string FormatGid(const GidBytes& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.data(), text, sizeof(text));
  return text;
}

bool GidIsZero(const GidBytes& gid) {
  return std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
}

bool GidIsLinkLocal(const GidBytes& gid) {
  static constexpr uint8_t kPrefix[8] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};
  return std::memcmp(gid.data(), kPrefix, sizeof(kPrefix)) == 0;
}

bool GidIsIpv4Mapped(const GidBytes& gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid[i] != 0) return false;
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}

std::optional<std::string> GidIpv4(const GidBytes& gid) {
  if (!GidIsIpv4Mapped(gid)) return std::nullopt;
  return fmt::format("{}.{}.{}.{}", gid[12], gid[13], gid[14], gid[15]);
}

Result<GidRange> GidRange::Parse(std::string_view text) {
  auto slash = text.find('/');
  std::string addr(Trim(text.substr(0, slash)));
  std::optional<unsigned long long> bits =
      slash == std::string_view::npos ? std::nullopt : ParseUint(Trim(text.substr(slash + 1)));
  GidRange r;
  in_addr v4{};
  if (inet_pton(AF_INET, addr.c_str(), &v4) == 1) {
    if (!bits || *bits > 32) return InvalidArgumentError(fmt::format("bad IPv4 range '{}' (want A.B.C.D/0..32)", text));
    r.prefix[10] = r.prefix[11] = 0xff;
    std::memcpy(&r.prefix[12], &v4, 4);
    r.bits = 96 + static_cast<int>(*bits);
    return r;
  }
  if (inet_pton(AF_INET6, addr.c_str(), r.prefix.data()) == 1) {
    if (!bits || *bits > 128) return InvalidArgumentError(fmt::format("bad IPv6 range '{}' (want ADDR/0..128)", text));
    r.bits = static_cast<int>(*bits);
    return r;
  }
  return InvalidArgumentError(fmt::format("bad address range '{}' (want 10.0.0.0/8 or fd00::/8)", text));
}

bool GidRange::Contains(const GidBytes& gid) const {
  for (int bit = 0; bit < bits; ++bit) {
    uint8_t mask = static_cast<uint8_t>(0x80u >> (bit % 8));
    if ((gid[bit / 8] & mask) != (prefix[bit / 8] & mask)) return false;
  }
  return true;
}

std::string DescribeGidTable(const std::vector<GidEntry>& table) {
  std::vector<std::string> lines;
  for (const GidEntry& e : table) {
    if (GidIsZero(e.gid)) continue;
    lines.push_back(fmt::format("{} {} {} {}", e.index, GidTypeName(e.type), FormatGid(e.gid),
                                e.netdev.empty() ? "-" : e.netdev));
  }
  return lines.empty() ? "(empty GID table)" : Join(lines, "; ");
}

namespace {

// Why auto-selection would not take `e` ("" when it would).
std::string Rejection(const GidEntry& e, const GidPolicy& policy) {
  if (GidIsZero(e.gid)) return "empty slot";
  GidType want = policy.roce_version == 1 ? GidType::kRoceV1 : GidType::kRoceV2;
  if (e.type != want) return fmt::format("{} (not {})", GidTypeName(e.type), GidTypeName(want));
  if (GidIsLinkLocal(e.gid)) return "link-local (not routable)";
  bool v4 = GidIsIpv4Mapped(e.gid);
  if (policy.family == AddrFamily::kIpv4 && !v4) return "not an IPv4 address";
  if (policy.family == AddrFamily::kIpv6 && v4) return "not an IPv6 address";
  if (policy.range && !policy.range->Contains(e.gid)) return "outside the address range";
  return "";
}

}  // namespace

Result<GidChoice> SelectGid(const std::vector<GidEntry>& table, bool infiniband,
                            const std::vector<std::string>& port_netdevs, std::optional<int> user_index,
                            const GidPolicy& policy) {
  auto find = [&](int index) -> const GidEntry* {
    for (const GidEntry& e : table) {
      if (e.index == index && !GidIsZero(e.gid)) return &e;
    }
    return nullptr;
  };
  GidChoice choice;
  if (user_index) {
    const GidEntry* e = find(*user_index);
    if (e == nullptr) {
      return NotFoundError(fmt::format("--gid-index {} is an empty slot of this port (table: {}); "
                                       "drop --gid-index to pick automatically",
                                       *user_index, DescribeGidTable(table)));
    }
    choice.entry = *e;
    choice.reason = fmt::format("--gid-index {}: {} {}", e->index, GidTypeName(e->type), FormatGid(e->gid));
    if (!infiniband) {
      std::string why = Rejection(*e, policy);
      if (!why.empty()) {
        choice.notes.push_back(fmt::format("GID index {} is {}: auto-selection would not use it", e->index, why));
      }
    }
    return choice;
  }
  if (infiniband) {
    const GidEntry* e = find(0);
    if (e == nullptr) return NotFoundError("InfiniBand port has no GID at index 0 (is the port up and the SM running?)");
    choice.entry = *e;
    choice.reason = fmt::format("auto: InfiniBand, index 0 ({})", FormatGid(e->gid));
    return choice;
  }
  // The port's own netdev first, then its uppers in the order given; lowest
  // index within each (NCCL keeps the first acceptable index it meets).
  auto rank = [&](const GidEntry& e) -> int {
    if (port_netdevs.empty()) return 0;
    auto it = std::find(port_netdevs.begin(), port_netdevs.end(), e.netdev);
    return it == port_netdevs.end() ? -1 : static_cast<int>(it - port_netdevs.begin());
  };
  const GidEntry* best = nullptr;
  for (const GidEntry& e : table) {
    if (!Rejection(e, policy).empty() || rank(e) < 0) continue;
    if (best == nullptr || rank(e) < rank(*best) || (rank(e) == rank(*best) && e.index < best->index)) best = &e;
  }
  std::string family = policy.family == AddrFamily::kIpv4 ? "IPv4" : "IPv6";
  std::string version = policy.roce_version == 1 ? "RoCE v1" : "RoCE v2";
  if (best == nullptr) {
    std::string where = port_netdevs.empty() ? "this port" : "netdev " + port_netdevs.front();
    return NotFoundError(fmt::format(
        "no {} {} GID on {} (table: {}); give {} an {} address (ip addr add ... dev {}), or pass --gid-index N",
        version, family, where, DescribeGidTable(table), port_netdevs.empty() ? "the netdev" : port_netdevs.front(),
        family, port_netdevs.empty() ? "NETDEV" : port_netdevs.front()));
  }
  choice.entry = *best;
  choice.reason = fmt::format("auto: {} {} {} on {}", version, family, FormatGid(best->gid),
                              best->netdev.empty() ? "the port" : best->netdev);
  return choice;
}

}  // namespace fabcheck::perf::verbs
