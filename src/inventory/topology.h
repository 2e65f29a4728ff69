// GPU x NIC distance classes as nvidia-smi topo -m prints them, and the
// recommended GPU -> NIC pairing (rails). Pure functions over the model.
#pragma once

#include <vector>

#include "fabcheck/model/inventory.h"

namespace fabcheck::inventory {

// reference/rdma-facts.md §1.8, from the bridges of the two PCIe paths:
//   PIX  both below one switch (at most one downstream port each below the
//        deepest common bridge),
//   PXB  a common bridge, but more levels (several switches),
//   PHB  same host bridge (root complex), no common bridge,
//   NODE different host bridges, same NUMA node,
//   SYS  different NUMA nodes (the inter-socket link).
// kUnknown when either path is unknown.
model::PathType Classify(const model::PciFunction& a, const model::PciFunction& b);

// The matrix over all GPUs and NICs, and one rail per GPU: its nearest NIC,
// chosen among RDMA-capable NICs when there are any, ties broken towards the
// NIC serving the fewest GPUs so far (balanced), then by NIC order. GPUs with
// fewer nearest candidates choose first so they are not crowded out.
model::Topology BuildTopology(const std::vector<model::Gpu>& gpus, const std::vector<model::Nic>& nics);

}  // namespace fabcheck::inventory
