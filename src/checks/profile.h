// A machine-type profile: what the hardware of a node should look like.
//
// Profiles are data (YAML files under profiles/), never code. Every field is
// optional; a check without an expectation from the profile takes it from the
// node itself (the port's capability, the link's maximum, the majority MTU).
// An unknown key or a bad value is an error naming the key, never a silent
// default: a typo in a go-live profile must not turn a check off.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabcheck::checks {

struct Profile {
  std::string name;
  std::string description;
  std::string source;  // the file it was read from

  // transport: what the node's inter-node traffic is meant to use. "rdma"
  // (the default where the node has GPUs or the profile describes NICs) or
  // "tcp": an explicit TCP intent turns "no usable RDMA device" into info.
  std::optional<std::string> transport;
  // gpus:
  std::optional<int> gpu_count;
  std::optional<int> gpu_pcie_gen;
  std::optional<int> gpu_pcie_width;
  // nics: (the compute NICs)
  std::optional<int> nic_count;
  std::vector<std::string> nic_devices;      // exact RDMA device names; empty = every device
  std::optional<std::string> link_layer;     // "InfiniBand" or "Ethernet"
  std::optional<double> rate_gbps;
  std::optional<int> nic_pcie_gen;
  std::optional<int> nic_pcie_width;
  // PCIe Device Control of the compute NICs (bytes; powers of two 128..4096).
  std::optional<int> nic_max_payload;
  std::optional<int> nic_max_read_request;
  std::optional<bool> nic_relaxed_ordering;
  // network:
  std::optional<int> mtu;
  // roce:
  std::optional<int> pfc_priority;           // 0..7
  std::optional<std::string> trust;          // "dscp" or "pcp"
  // system:
  std::optional<uint64_t> min_memlock_bytes;  // UINT64_MAX = unlimited
  // memory: what the node must have (without these the memory check only reports facts)
  std::map<uint64_t, uint64_t> min_hugepages;  // page size in kB -> minimum nr_hugepages (node-wide)
  std::optional<std::string> thp;              // transparent hugepages: "always", "madvise" or "never"
  std::optional<bool> numa_balancing;          // automatic NUMA balancing on (true) or off (false)
  // perf: (the ladder's L3)
  std::optional<double> perf_pass_fraction;   // pass line as a fraction of the expected bandwidth (default 0.9)

  // Whether `device` is one of the compute NICs the profile describes.
  bool IsComputeNic(std::string_view device) const;
};

inline constexpr uint64_t kUnlimited = UINT64_MAX;

// Parses profile YAML text; `label` names the file in errors.
Result<Profile> ParseProfile(std::string_view yaml_text, std::string_view label);
// Reads and parses a profile file.
Result<Profile> LoadProfile(const std::string& path);

}  // namespace fabcheck::checks
