// Network interfaces from /sys/class/net, with their IP addresses
// (reference/rdma-facts.md §1.6). Addresses are not files: on a live node
// they come from getifaddrs() and are recorded into captures as
// /fabcheck/addresses.json, which offline sysroots read instead.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/inventory.h"
#include "inventory/reader.h"
#include "sys/net_class.h"

namespace fabcheck::inventory {

inline constexpr std::string_view kNetDir = sys::net_class::kClassDir;
inline constexpr std::string_view kAddressesMeta = "addresses.json";

using AddressMap = std::map<std::string, std::vector<model::IpAddress>>;  // ifname -> addresses

// {"interfaces": {"eth0": [{"family": "inet", "address": "10.0.0.5", "prefix_len": 24}]}}
std::string AddressMapToJson(const AddressMap& addresses);
Result<AddressMap> AddressMapFromJson(std::string_view text);
// The live node's addresses (getifaddrs).
Result<AddressMap> QueryLiveAddresses();

// All interfaces in natural name order, addresses filled when known.
std::vector<model::NetDevice> ReadNetDevices(Reader& reader);

}  // namespace fabcheck::inventory
