#include "telemetry/ethtool_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/fd.h"
#include "base/strings.h"

namespace fabcheck::telemetry {
namespace {

Status Ioctl(int fd, const std::string& ifname, void* data, const char* what) {
  struct ifreq ifr {};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(data);
  if (::ioctl(fd, SIOCETHTOOL, &ifr) != 0) {
    int err = errno;
    if (err == ENODEV) {
      // Not "NotFound": a missing interface here is a deployment problem to report, not an absent file.
      return FailedPreconditionError("ethtool " + std::string(what) + " on " + ifname +
                                     ": ENODEV (the interface is not in this network namespace: run the exporter "
                                     "with the host network to read PFC counters, or pass --ethtool off)");
    }
    return ErrnoError(err, std::string("ethtool ") + what + " on " + ifname);
  }
  return Status::Ok();
}

Result<uint32_t> StatCount(int fd, const std::string& ifname) {
  // ethtool_sset_info ends in a flexible array: room for the one u32 asked for.
  alignas(uint64_t) uint8_t buffer[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)] = {};
  auto* info = reinterpret_cast<struct ethtool_sset_info*>(buffer);
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ULL << ETH_SS_STATS;
  RETURN_IF_ERROR(Ioctl(fd, ifname, info, "GSSET_INFO"));
  if ((info->sset_mask & (1ULL << ETH_SS_STATS)) == 0) {
    return UnimplementedError("ethtool: " + ifname + " has no driver statistics (ETH_SS_STATS unsupported)");
  }
  return info->data[0];
}

// The keys of the per-priority view: rx_prio3_pause_duration -> (3, "rx_pause_duration").
bool SplitPriorityName(std::string_view name, int& priority, std::string& key) {
  for (std::string_view dir : {"rx_prio", "tx_prio"}) {
    if (!StartsWith(name, dir)) continue;
    std::string_view rest = name.substr(dir.size());
    if (rest.size() < 3 || rest[0] < '0' || rest[0] > '7' || rest[1] != '_') return false;
    priority = rest[0] - '0';
    key = std::string(dir.substr(0, 2)) + "_" + std::string(rest.substr(2));
    return true;
  }
  return false;
}

constexpr std::array<std::string_view, 22> kGlobalNames = {
    "rx_pause_ctrl_phy",        "tx_pause_ctrl_phy",          "rx_global_pause",
    "rx_global_pause_duration", "rx_global_pause_transition", "tx_global_pause",
    "tx_global_pause_duration", "tx_pause_storm_warning_events", "tx_pause_storm_error_events",
    "rx_discards_phy",          "tx_discards_phy",            "rx_crc_errors_phy",
    "rx_symbol_err_phy",        "rx_pcs_symbol_err_phy",      "rx_corrected_bits_phy",
    "link_down_events_phy",     "rx_out_of_buffer",           "rx_buffer_passed_thres_phy",
    "rx_pci_signal_integrity",  "tx_pci_signal_integrity",    "outbound_pci_buffer_overflow",
    "rx_bits_phy"};

}  // namespace

Result<EthtoolStats> LiveEthtoolSource::Read(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) return InvalidArgumentError("ethtool: bad interface name '" + ifname + "'");
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, "ethtool: cannot open a socket");
  ASSIGN_OR_RETURN(uint32_t count, StatCount(fd.get(), ifname));
  if (count == 0) return EthtoolStats{};
  if (count > 100000) return DataLossError("ethtool: " + ifname + " reports an absurd statistics count");

  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    auto it = names_.find(ifname);
    if (it != names_.end() && it->second.size() == count) names = it->second;
  }
  if (names.empty()) {
    std::vector<uint8_t> buffer(sizeof(struct ethtool_gstrings) + size_t{count} * ETH_GSTRING_LEN);
    auto* strings = reinterpret_cast<struct ethtool_gstrings*>(buffer.data());
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_STATS;
    strings->len = count;
    RETURN_IF_ERROR(Ioctl(fd.get(), ifname, strings, "GSTRINGS"));
    names.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const char* slot = reinterpret_cast<const char*>(strings->data) + size_t{i} * ETH_GSTRING_LEN;
      names.emplace_back(slot, strnlen(slot, ETH_GSTRING_LEN));
    }
    std::lock_guard lock(mutex_);
    names_[ifname] = names;
  }

  std::vector<uint8_t> buffer(sizeof(struct ethtool_stats) + size_t{count} * sizeof(uint64_t));
  auto* stats = reinterpret_cast<struct ethtool_stats*>(buffer.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = count;
  RETURN_IF_ERROR(Ioctl(fd.get(), ifname, stats, "GSTATS"));
  if (stats->n_stats != count) {
    // The set changed between the calls: forget the names, the next scrape re-reads them.
    std::lock_guard lock(mutex_);
    names_.erase(ifname);
    return AbortedError("ethtool: statistics of " + ifname + " changed during the read; retried next scrape");
  }
  EthtoolStats out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.emplace_back(names[i], stats->data[i]);
  return out;
}

Result<EthtoolStats> SysrootEthtoolSource::Read(const std::string& ifname) {
  std::string name = "ethtool/" + ifname + ".txt";
  ASSIGN_OR_RETURN(std::string text, root_.ReadMeta(name));
  return ParseEthtoolText(text, root_.DisplayPath(std::string(sys::kCaptureMetaDir) + "/" + name));
}

Result<EthtoolStats> ParseEthtoolText(std::string_view text, std::string_view what) {
  EthtoolStats out;
  int line_number = 0;
  for (const std::string& raw : Split(text, '\n')) {
    ++line_number;
    std::string_view line = Trim(raw);
    if (line.empty() || line == "NIC statistics:") continue;
    size_t colon = line.rfind(':');
    if (colon == std::string_view::npos) {
      return InvalidArgumentError(std::string(what) + ":" + std::to_string(line_number) +
                                  ": expected 'name: value' as `ethtool -S` prints it");
    }
    auto value = ParseUint(Trim(line.substr(colon + 1)));
    if (!value) {
      return InvalidArgumentError(std::string(what) + ":" + std::to_string(line_number) + ": '" +
                                  std::string(line) + "' has no unsigned value");
    }
    out.emplace_back(std::string(Trim(line.substr(0, colon))), *value);
  }
  return out;
}

PfcStats ExtractPfcStats(const EthtoolStats& stats) {
  PfcStats out;
  for (const auto& [name, value] : stats) {
    int priority = 0;
    std::string key;
    if (SplitPriorityName(name, priority, key)) {
      out.priorities[priority].values[key] = value;
      continue;
    }
    for (std::string_view global : kGlobalNames) {
      if (name == global) out.global[name] = value;
    }
  }
  return out;
}

}  // namespace fabcheck::telemetry
