// Interrupts: /proc/interrupts, /proc/irq/<n>/smp_affinity_list and the state
// of irqbalance, read through a SysRoot.
//
// /proc/interrupts (fs/proc/interrupts.c, kernel/irq/proc.c): a header of
// "CPU<n>" columns (online CPUs only), then one row per interrupt:
//   " 151:    0    12034 ...  PCI-MSIX-0000:18:00.0  3-edge  mlx5_comp3@pci:0000:18:00.0"
//   "  45:    0    0     ...  PCI-MSI 9437184-edge   mlx5_async0@pci:0000:12:00.0"   (older kernels)
//   "  90:    0    0     ...  IR-PCI-MSI 1048576-edge  ens1f0np0-TxRx-0"               (netdev-named drivers)
// then architecture rows with a name instead of a number (NMI, LOC, ...),
// which carry no vector and are skipped. What follows the counts is kept as
// text: the chip, hardware IRQ and action names, whose layout varies by
// kernel; vectors are matched to a device by the PCI address or netdev name
// appearing in it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys {

inline constexpr std::string_view kProcInterrupts = "/proc/interrupts";

struct IrqVector {
  int irq = 0;
  std::vector<uint64_t> counts;  // per CPU column of the header
  std::string description;       // everything after the counts, spaces collapsed
  std::string name;              // the last word: the action ("mlx5_comp3@pci:0000:18:00.0")
  uint64_t Total() const;
};

struct InterruptTable {
  std::vector<int> cpus;  // the header's CPU numbers, in column order
  std::vector<IrqVector> vectors;
};

// Parses /proc/interrupts text; DataLoss when there is no CPU header.
Result<InterruptTable> ParseInterrupts(std::string_view text);
Result<InterruptTable> ReadInterrupts(const SysRoot& root);

// Whether a vector belongs to the PCI function `bdf` or one of its netdevs:
// the address appears in the description ("@pci:0000:18:00.0",
// "PCI-MSIX-0000:18:00.0"), or a word is a netdev name or starts with
// "<netdev>-" ("ens1f0np0-TxRx-0").
bool VectorMatches(const IrqVector& vector, std::string_view bdf, const std::vector<std::string>& netdevs);

// "/proc/irq/151/smp_affinity_list"
std::string IrqAffinityPath(int irq);
// The CPUs an interrupt may be delivered to.
Result<std::vector<int>> ReadIrqAffinity(const SysRoot& root, int irq);

// What can be seen of irqbalance from the sysroot. Each field is what one
// source says; nullopt when that source could not be read.
struct IrqbalanceState {
  std::vector<int> pids;                // processes named irqbalance in /proc (this PID namespace)
  bool proc_scanned = false;            // /proc could be listed
  std::optional<bool> unit_active;      // systemd's cgroup of irqbalance.service exists
  std::string unit_cgroup;              // where it was seen
  std::optional<bool> unit_enabled;     // a *.wants/irqbalance.service link exists
  std::string unit_enabled_path;
  std::string banned_cpus;              // IRQBALANCE_BANNED_CPULIST/CPUS from its config, if set
  std::string config_path;
  std::vector<std::string> evidence;    // one line per source read
  bool Running() const { return !pids.empty() || unit_active.value_or(false); }
};
IrqbalanceState ReadIrqbalance(const SysRoot& root);

}  // namespace fabcheck::sys
