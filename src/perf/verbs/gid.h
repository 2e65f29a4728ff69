// GIDs and the choice of the GID index a verbs test uses (pure logic).
//
// RoCE ports carry one GID per address of their netdev (and of its VLAN or
// bond uppers), per RoCE version; the order depends on when addresses were
// added, so "index 3" is a guess that breaks on some nodes. The rule below is
// NCCL's (src/transport/net_ib: ncclIbGetGidIndex with NCCL_IB_GID_INDEX=-1,
// NCCL_IB_ROCE_VERSION_NUM=2, NCCL_IB_ADDR_FAMILY=AF_INET): a RoCE v2 GID of
// the wanted address family, not all-zero and not link-local, optionally in an
// address range; on InfiniBand, index 0. On top of NCCL we require the GID to
// belong to the port's own netdev (or one of its uppers, after it), and we
// never fall back silently: no match is an error that shows the table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabcheck::perf::verbs {

using GidBytes = std::array<uint8_t, 16>;

enum class GidType { kIb, kRoceV1, kRoceV2, kUnknown };
std::string_view GidTypeName(GidType type);  // "IB", "RoCE v1", "RoCE v2", "unknown"
// The sysfs spelling of a GID type (sys/infiniband.h): "IB/RoCE v1" or "RoCE v2".
GidType ParseGidType(std::string_view text);

// Parses "0000:0000:0000:0000:0000:ffff:0a00:0001" (sysfs) or any IPv6 text
// form ("::ffff:10.0.0.1", "fe80::1").
Result<GidBytes> ParseGid(std::string_view text);
// The shortest readable form: "::ffff:10.0.0.1", "fe80::5054:ff:fe12:3456", "::".
std::string FormatGid(const GidBytes& gid);
bool GidIsZero(const GidBytes& gid);
bool GidIsLinkLocal(const GidBytes& gid);   // fe80::/64
bool GidIsIpv4Mapped(const GidBytes& gid);  // ::ffff:a.b.c.d
// The IPv4 address of an IPv4-mapped GID as text ("10.0.0.1"); nullopt otherwise.
std::optional<std::string> GidIpv4(const GidBytes& gid);

// One slot of a port's GID table, as ibv_query_gid_table or sysfs report it.
struct GidEntry {
  int index = 0;
  GidBytes gid{};
  GidType type = GidType::kUnknown;
  std::string netdev;  // "" for IB ports and unknown owners
};

enum class AddrFamily { kIpv4, kIpv6 };

// An IPv4 or IPv6 prefix, e.g. "10.0.0.0/8", "fd00::/8" (NCCL_IB_ADDR_RANGE).
struct GidRange {
  GidBytes prefix{};  // IPv4 ranges are stored IPv4-mapped
  int bits = 0;       // prefix length on the 128-bit GID
  static Result<GidRange> Parse(std::string_view text);
  bool Contains(const GidBytes& gid) const;
};

struct GidPolicy {
  int roce_version = 2;              // NCCL_IB_ROCE_VERSION_NUM
  AddrFamily family = AddrFamily::kIpv4;  // NCCL_IB_ADDR_FAMILY
  std::optional<GidRange> range;     // NCCL_IB_ADDR_RANGE
};

struct GidChoice {
  GidEntry entry;
  std::string reason;              // "auto: RoCE v2 IPv4 ::ffff:10.0.0.1 on veth0"
  std::vector<std::string> notes;  // warnings about a user-forced index
};

// Picks the GID index for a port.
//   table:        the port's non-empty slots (empty slots may be present; they are skipped)
//   infiniband:   the port's link layer is InfiniBand
//   port_netdevs: the port's netdev first, then its upper devices (VLAN, bond);
//                 empty when unknown (then any owner is accepted)
//   user_index:   --gid-index; used as given when it names a non-empty slot,
//                 with a note when it is not what auto-selection would accept
Result<GidChoice> SelectGid(const std::vector<GidEntry>& table, bool infiniband,
                            const std::vector<std::string>& port_netdevs, std::optional<int> user_index,
                            const GidPolicy& policy = {});

// One line per slot for error messages: "1 RoCE v2 ::ffff:10.0.0.1 veth0".
std::string DescribeGidTable(const std::vector<GidEntry>& table);

}  // namespace fabcheck::perf::verbs
