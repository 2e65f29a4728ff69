// PCI functions and their path up to the root complex
// (reference/rdma-facts.md §1.7, §1.8).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/inventory.h"
#include "inventory/reader.h"
#include "sys/pci.h"

namespace fabcheck::inventory {

inline constexpr std::string_view kPciDevicesDir = sys::pci::kDevicesDir;

// What a PCI function is, from class and vendor alone.
enum class PciKind { kOther, kGpu, kNvSwitch, kNic };
PciKind ClassifyPci(std::string_view class_code, std::string_view vendor_id);

// Identity of every function under /sys/bus/pci/devices: bdf, class, vendor.
struct PciSummary {
  std::string bdf;
  std::string class_code;
  std::string vendor_id;
  PciKind kind = PciKind::kOther;
};
std::vector<PciSummary> ListPciFunctions(Reader& reader);

// Everything inventory shows about one function, including the bridges from
// its root port down to it. Never fails: unreadable parts stay unknown.
model::PciFunction ReadPciFunction(Reader& reader, const std::string& bdf);

// The link attributes of the function at `dir` (a /sys/devices/... path).
model::PciLink ReadPciLink(Reader& reader, const std::string& dir);

}  // namespace fabcheck::inventory
