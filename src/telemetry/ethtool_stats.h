// Driver statistics of a network interface (what `ethtool -S` prints), for
// the per-priority PFC pause and discard counters of mlx5
// (rdma-facts §3.4, §3.5).
//
// Live: SIOCETHTOOL (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS) in
// the exporter's network namespace, so a pod needs the host network to see
// the host's interfaces. Offline: a capture or directory may hold the output
// of `ethtool -S <if>` as /fabcheck/ethtool/<if>.txt; the same parser reads it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::telemetry {

using EthtoolStats = std::vector<std::pair<std::string, uint64_t>>;

class EthtoolSource {
 public:
  virtual ~EthtoolSource() = default;
  virtual Result<EthtoolStats> Read(const std::string& ifname) = 0;
};

// SIOCETHTOOL on the running node. Keeps the string table per interface and
// re-reads it only when the number of statistics changes (mlx5 adds per-prio
// counters when PFC is turned on).
class LiveEthtoolSource : public EthtoolSource {
 public:
  Result<EthtoolStats> Read(const std::string& ifname) override;

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<std::string>> names_;
};

// /fabcheck/ethtool/<if>.txt of a sysroot; NotFound when absent.
class SysrootEthtoolSource : public EthtoolSource {
 public:
  explicit SysrootEthtoolSource(sys::SysRoot root) : root_(std::move(root)) {}
  Result<EthtoolStats> Read(const std::string& ifname) override;

 private:
  sys::SysRoot root_;
};

// Parses `ethtool -S` output ("NIC statistics:" then "     name: value" lines).
Result<EthtoolStats> ParseEthtoolText(std::string_view text, std::string_view what);

// The PFC/discard view of a statistics list.
struct PfcStats {
  struct PerPriority {
    std::map<std::string, uint64_t> values;  // "rx_pause", "tx_pause_duration", "rx_bytes", ...
  };
  std::map<int, PerPriority> priorities;     // 0..7
  std::map<std::string, uint64_t> global;    // "rx_discards_phy", "tx_pause_ctrl_phy", ...
};
// Picks rx_prio<p>_*, tx_prio<p>_* and the global names of rdma-facts §3.4.
PfcStats ExtractPfcStats(const EthtoolStats& stats);

}  // namespace fabcheck::telemetry
