// The inventory of one node: every reader of this module, in one call.
//
//   auto root = sys::SysRoot::Open("capture.tar.gz");   // or SysRoot::Live()
//   model::Inventory inv = inventory::ReadInventory(*root);
//
// Never fails: what cannot be read is unknown, with a warning in
// inv.warnings naming the file. Reading a 16-NIC node takes milliseconds;
// only plain attribute files are read (never config, resource*, rom, vpd).
#pragma once

#include "fabcheck/model/inventory.h"
#include "sys/sysroot.h"

namespace fabcheck::inventory {

class Reader;

struct ReadOptions {
  // On a live node, also ask libibverbs and NVML (and record their answers
  // when the root is recording). Off in tests that must not touch the host.
  bool query_libraries = true;
};

model::Inventory ReadInventory(const sys::SysRoot& root, const ReadOptions& options = {});

// NUMA nodes from /sys/devices/system/node (empty when the kernel has none).
std::vector<model::NumaNode> ReadNumaNodes(Reader& reader);

}  // namespace fabcheck::inventory
