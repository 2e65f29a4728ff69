// RDMA devices and ports from /sys/class/infiniband (reference/rdma-facts.md §1.1, §1.2, §1.5).
#pragma once

#include "sys/infiniband.h"

#include <vector>

#include "fabcheck/model/inventory.h"
#include "inventory/reader.h"

namespace fabcheck::inventory {

inline constexpr std::string_view kInfinibandDir = sys::infiniband::kClassDir;

// All RDMA devices, in natural name order (mlx5_2 before mlx5_10). An
// absent /sys/class/infiniband is no RDMA support, not an error: empty list.
std::vector<model::RdmaDevice> ReadRdmaDevices(Reader& reader);

}  // namespace fabcheck::inventory
