// GID entries and the RoCE v2 GID index NCCL picks (reference/rdma-facts.md §4).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "fabcheck/model/inventory.h"

namespace fabcheck::inventory {

// Fills gid, ip, ipv4 and link_local from the text sysfs prints
// ("0000:0000:0000:0000:0000:ffff:0a00:0a05"). False when it is not a GID.
bool ParseGid(std::string_view text, model::GidEntry* entry);
// An unused slot: all zeros (the kernel prints those for empty slots), or a
// bare fe80:: prefix with a zero interface id (show_gids skips both).
bool IsEmptyGid(std::string_view text);

// NCCL's default choice (NCCL_IB_GID_INDEX unset, NCCL_IB_ROCE_VERSION_NUM=2,
// NCCL_IB_ADDR_FAMILY=AF_INET, no NCCL_IB_ADDR_RANGE): index 0 on InfiniBand;
// on Ethernet the first entry that is RoCE v2, IPv4-mapped and not
// link-local; nullopt when none is (or the link layer is unknown).
std::optional<int> PickNcclGidIndex(std::string_view link_layer, const std::vector<model::GidEntry>& gids);

}  // namespace fabcheck::inventory
