// NCCL's interface and HCA list matching, reproduced exactly.
//
// NCCL_SOCKET_IFNAME and NCCL_IB_HCA share one parser and one matcher
// (NCCL src/misc/utils.cc parseStringList/matchIfList, v2.23.4):
//   - a leading '^' inverts the whole list (exclude), then a leading '='
//     makes every entry an exact name; otherwise an entry is a PREFIX, so
//     "mlx5_1" also selects mlx5_10..mlx5_19;
//   - entries are comma separated; "name:port" restricts to one port
//     (port -1 = any); empty entries are skipped;
//   - an entry after the 16th (sockets) or 32nd (IB) is ignored.
// The checks must predict what NCCL will select, so this follows NCCL's code
// (including its quirks) rather than what users expect.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::checks {

inline constexpr int kNcclMaxSocketIfs = 16;  // MAX_IFS in NCCL socket.cc
inline constexpr int kNcclMaxIbDevs = 32;     // MAX_IB_DEVS in NCCL net_ib.cc

struct NcclListEntry {
  std::string name;  // a prefix, or an exact name when the list is exact
  int port = -1;     // -1: any port
};

struct NcclList {
  bool exclude = false;  // leading '^'
  bool exact = false;    // leading '=' (after any '^')
  std::vector<NcclListEntry> entries;
  int dropped = 0;       // entries beyond the maximum, which NCCL silently ignores
};

// Parses a list value as NCCL does; never fails (NCCL accepts anything).
NcclList ParseNcclList(std::string_view value, int max_entries);

// Whether one entry matches `name` (and `port`, -1 = any).
bool NcclEntryMatches(const NcclListEntry& entry, bool exact, std::string_view name, int port);

// Whether NCCL selects `name`:`port` under `list`: matchIfList(...) ^ exclude.
// An empty list selects everything (NCCL's "no user list" exception).
bool NcclSelects(const NcclList& list, std::string_view name, int port);

// Renders the list back, for evidence: "^=mlx5_0:1,mlx5_2".
std::string FormatNcclList(const NcclList& list);

}  // namespace fabcheck::checks
