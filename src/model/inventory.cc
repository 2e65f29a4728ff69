#include "fabcheck/model/inventory.h"

#include "base/json_budget.h"

#include "fabcheck/model/json_fields.h"

namespace fabcheck::model {
namespace {

using nlohmann::json;
using json_fields::Read;
using json_fields::ReadOptional;

}  // namespace

bool PciLink::Degraded() const {
  if (!current_speed_gts || !max_speed_gts || !current_width || !max_width) return false;
  return *current_speed_gts + 1e-9 < *max_speed_gts || *current_width < *max_width;
}

std::string_view PathTypeName(PathType type) {
  switch (type) {
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
    case PathType::kUnknown: break;
  }
  return "?";
}

std::optional<PathType> ParsePathType(std::string_view name) {
  for (PathType t : {PathType::kUnknown, PathType::kPix, PathType::kPxb, PathType::kPhb, PathType::kNode,
                     PathType::kSys}) {
    if (PathTypeName(t) == name) return t;
  }
  return std::nullopt;
}

const RdmaDevice* Inventory::FindRdmaDevice(std::string_view name) const {
  for (const auto& d : rdma_devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const NetDevice* Inventory::FindNetDevice(std::string_view name) const {
  for (const auto& d : netdevs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const Nic* Inventory::FindNic(std::string_view label_or_bdf) const {
  for (const auto& n : nics) {
    if (n.label == label_or_bdf || n.pci.bdf == label_or_bdf) return &n;
  }
  return nullptr;
}

void to_json(json& j, const InventoryWarning& v) { j = {{"path", v.path}, {"message", v.message}}; }
void from_json(const json& j, InventoryWarning& v) {
  Read(j, "path", v.path);
  Read(j, "message", v.message);
}

void to_json(json& j, const PciLink& v) {
  j = {{"current_speed_gts", json_fields::Nullable(v.current_speed_gts)},
       {"max_speed_gts", json_fields::Nullable(v.max_speed_gts)},
       {"current_width", json_fields::Nullable(v.current_width)},
       {"max_width", json_fields::Nullable(v.max_width)},
       {"degraded", v.Degraded()}};
}
void from_json(const json& j, PciLink& v) {
  ReadOptional(j, "current_speed_gts", v.current_speed_gts);
  ReadOptional(j, "max_speed_gts", v.max_speed_gts);
  ReadOptional(j, "current_width", v.current_width);
  ReadOptional(j, "max_width", v.max_width);
}

void to_json(json& j, const PciBridge& v) {
  j = {{"bdf", v.bdf},   {"vendor_id", v.vendor_id}, {"device_id", v.device_id}, {"class", v.class_code},
       {"role", v.role}, {"link", v.link}};
}
void from_json(const json& j, PciBridge& v) {
  Read(j, "bdf", v.bdf);
  Read(j, "vendor_id", v.vendor_id);
  Read(j, "device_id", v.device_id);
  Read(j, "class", v.class_code);
  Read(j, "role", v.role);
  Read(j, "link", v.link);
}

void to_json(json& j, const PciFunction& v) {
  j = {{"bdf", v.bdf},
       {"vendor_id", v.vendor_id},
       {"device_id", v.device_id},
       {"class", v.class_code},
       {"subsystem_vendor_id", v.subsystem_vendor_id},
       {"subsystem_device_id", v.subsystem_device_id},
       {"driver", v.driver},
       {"numa_node", json_fields::Nullable(v.numa_node)},
       {"local_cpulist", v.local_cpulist},
       {"root_complex", v.root_complex},
       {"path", v.path},
       {"link", v.link},
       {"sysfs_path", v.sysfs_path}};
}
void from_json(const json& j, PciFunction& v) {
  Read(j, "bdf", v.bdf);
  Read(j, "vendor_id", v.vendor_id);
  Read(j, "device_id", v.device_id);
  Read(j, "class", v.class_code);
  Read(j, "subsystem_vendor_id", v.subsystem_vendor_id);
  Read(j, "subsystem_device_id", v.subsystem_device_id);
  Read(j, "driver", v.driver);
  ReadOptional(j, "numa_node", v.numa_node);
  Read(j, "local_cpulist", v.local_cpulist);
  Read(j, "root_complex", v.root_complex);
  Read(j, "path", v.path);
  Read(j, "link", v.link);
  Read(j, "sysfs_path", v.sysfs_path);
}

void to_json(json& j, const IpAddress& v) {
  j = {{"family", v.family}, {"address", v.address}, {"prefix_len", v.prefix_len}};
}
void from_json(const json& j, IpAddress& v) {
  Read(j, "family", v.family);
  Read(j, "address", v.address);
  Read(j, "prefix_len", v.prefix_len);
}

void to_json(json& j, const NetDevice& v) {
  j = {{"name", v.name},
       {"mtu", json_fields::Nullable(v.mtu)},
       {"operstate", v.operstate},
       {"carrier", json_fields::Nullable(v.carrier)},
       {"speed_mbps", json_fields::Nullable(v.speed_mbps)},
       {"mac", v.mac},
       {"type", json_fields::Nullable(v.type)},
       {"dev_port", json_fields::Nullable(v.dev_port)},
       {"pci_bdf", v.pci_bdf},
       {"vlan_parent", v.vlan_parent},
       {"vlan_id", json_fields::Nullable(v.vlan_id)},
       {"rdma_devices", v.rdma_devices},
       {"addresses", v.addresses_known ? json(v.addresses) : json(nullptr)}};
}
void from_json(const json& j, NetDevice& v) {
  Read(j, "name", v.name);
  ReadOptional(j, "mtu", v.mtu);
  Read(j, "operstate", v.operstate);
  ReadOptional(j, "carrier", v.carrier);
  ReadOptional(j, "speed_mbps", v.speed_mbps);
  Read(j, "mac", v.mac);
  ReadOptional(j, "type", v.type);
  ReadOptional(j, "dev_port", v.dev_port);
  Read(j, "pci_bdf", v.pci_bdf);
  Read(j, "vlan_parent", v.vlan_parent);
  ReadOptional(j, "vlan_id", v.vlan_id);
  Read(j, "rdma_devices", v.rdma_devices);
  auto it = j.find("addresses");
  v.addresses_known = it != j.end() && it->is_array();
  if (v.addresses_known) v.addresses = it->get<std::vector<IpAddress>>();
}

void to_json(json& j, const GidEntry& v) {
  j = {{"index", v.index}, {"gid", v.gid},   {"type", v.type},
       {"netdev", v.netdev}, {"ip", v.ip}, {"ipv4", v.ipv4}, {"link_local", v.link_local}};
}
void from_json(const json& j, GidEntry& v) {
  Read(j, "index", v.index);
  Read(j, "gid", v.gid);
  Read(j, "type", v.type);
  Read(j, "netdev", v.netdev);
  Read(j, "ip", v.ip);
  Read(j, "ipv4", v.ipv4);
  Read(j, "link_local", v.link_local);
}

void to_json(json& j, const RdmaPort& v) {
  j = {{"port", v.port},
       {"state_code", json_fields::Nullable(v.state_code)},
       {"state", v.state},
       {"phys_state_code", json_fields::Nullable(v.phys_state_code)},
       {"phys_state", v.phys_state},
       {"rate_text", v.rate_text},
       {"rate_gbps", json_fields::Nullable(v.rate_gbps)},
       {"width", json_fields::Nullable(v.width)},
       {"speed_name", v.speed_name},
       {"link_layer", v.link_layer},
       {"lid", json_fields::Nullable(v.lid)},
       {"sm_lid", json_fields::Nullable(v.sm_lid)},
       {"netdev", v.netdev},
       {"nccl_gid_index", json_fields::Nullable(v.nccl_gid_index)},
       {"gids", v.gids}};
}
void from_json(const json& j, RdmaPort& v) {
  Read(j, "port", v.port);
  ReadOptional(j, "state_code", v.state_code);
  Read(j, "state", v.state);
  ReadOptional(j, "phys_state_code", v.phys_state_code);
  Read(j, "phys_state", v.phys_state);
  Read(j, "rate_text", v.rate_text);
  ReadOptional(j, "rate_gbps", v.rate_gbps);
  ReadOptional(j, "width", v.width);
  Read(j, "speed_name", v.speed_name);
  Read(j, "link_layer", v.link_layer);
  ReadOptional(j, "lid", v.lid);
  ReadOptional(j, "sm_lid", v.sm_lid);
  Read(j, "netdev", v.netdev);
  ReadOptional(j, "nccl_gid_index", v.nccl_gid_index);
  Read(j, "gids", v.gids);
}

void to_json(json& j, const RdmaDevice& v) {
  j = {{"name", v.name},
       {"node_type", v.node_type},
       {"node_guid", v.node_guid},
       {"sys_image_guid", v.sys_image_guid},
       {"fw_ver", v.fw_ver},
       {"hca_type", v.hca_type},
       {"board_id", v.board_id},
       {"pci_bdf", v.pci_bdf},
       {"numa_node", json_fields::Nullable(v.numa_node)},
       {"local_cpulist", v.local_cpulist},
       {"ports", v.ports}};
}
void from_json(const json& j, RdmaDevice& v) {
  Read(j, "name", v.name);
  Read(j, "node_type", v.node_type);
  Read(j, "node_guid", v.node_guid);
  Read(j, "sys_image_guid", v.sys_image_guid);
  Read(j, "fw_ver", v.fw_ver);
  Read(j, "hca_type", v.hca_type);
  Read(j, "board_id", v.board_id);
  Read(j, "pci_bdf", v.pci_bdf);
  ReadOptional(j, "numa_node", v.numa_node);
  Read(j, "local_cpulist", v.local_cpulist);
  Read(j, "ports", v.ports);
}

void to_json(json& j, const VerbsProbe& v) {
  j = {{"probed", v.probed},
       {"ok", v.ok},
       {"device_count", v.device_count},
       {"errno", v.error_number},
       {"message", v.message}};
}
void from_json(const json& j, VerbsProbe& v) {
  Read(j, "probed", v.probed);
  Read(j, "ok", v.ok);
  Read(j, "device_count", v.device_count);
  Read(j, "errno", v.error_number);
  Read(j, "message", v.message);
}

void to_json(json& j, const Gpu& v) {
  j = {{"index", v.index}, {"name", v.name}, {"uuid", v.uuid}, {"pci", v.pci}};
}
void from_json(const json& j, Gpu& v) {
  Read(j, "index", v.index);
  Read(j, "name", v.name);
  Read(j, "uuid", v.uuid);
  Read(j, "pci", v.pci);
}

void to_json(json& j, const NvSwitch& v) { j = {{"index", v.index}, {"pci", v.pci}}; }
void from_json(const json& j, NvSwitch& v) {
  Read(j, "index", v.index);
  Read(j, "pci", v.pci);
}

void to_json(json& j, const Nic& v) {
  j = {{"label", v.label}, {"rdma_devices", v.rdma_devices}, {"netdevs", v.netdevs}, {"pci", v.pci}};
}
void from_json(const json& j, Nic& v) {
  Read(j, "label", v.label);
  Read(j, "rdma_devices", v.rdma_devices);
  Read(j, "netdevs", v.netdevs);
  Read(j, "pci", v.pci);
}

void to_json(json& j, const NumaNode& v) {
  j = {{"id", v.id}, {"cpulist", v.cpulist}, {"cpu_count", v.cpu_count}};
}
void from_json(const json& j, NumaNode& v) {
  Read(j, "id", v.id);
  Read(j, "cpulist", v.cpulist);
  Read(j, "cpu_count", v.cpu_count);
}

void to_json(json& j, const PathType& v) { j = std::string(PathTypeName(v)); }
void from_json(const json& j, PathType& v) {
  auto parsed = ParsePathType(j.get<std::string>());
  if (!parsed) throw json::other_error::create(501, "unknown path type " + j.dump(), &j);
  v = *parsed;
}

void to_json(json& j, const RailPair& v) {
  j = {{"gpu", v.gpu}, {"nic", v.nic}, {"distance", v.distance}, {"shared", v.shared}};
}
void from_json(const json& j, RailPair& v) {
  Read(j, "gpu", v.gpu);
  Read(j, "nic", v.nic);
  Read(j, "distance", v.distance);
  Read(j, "shared", v.shared);
}

void to_json(json& j, const Topology& v) {
  j = {{"gpus", v.gpus}, {"nics", v.nics}, {"distance", v.distance}, {"rails", v.rails}};
}
void from_json(const json& j, Topology& v) {
  Read(j, "gpus", v.gpus);
  Read(j, "nics", v.nics);
  Read(j, "distance", v.distance);
  Read(j, "rails", v.rails);
}

void to_json(json& j, const HostInfo& v) {
  j = {{"hostname", v.hostname}, {"kernel", v.kernel}, {"nvidia_driver", v.nvidia_driver}};
}
void from_json(const json& j, HostInfo& v) {
  Read(j, "hostname", v.hostname);
  Read(j, "kernel", v.kernel);
  Read(j, "nvidia_driver", v.nvidia_driver);
}

void to_json(json& j, const Inventory& v) {
  j = {{"schema", v.schema},
       {"source", v.source},
       {"host", v.host},
       {"verbs", v.verbs},
       {"rdma_sysfs_present", v.rdma_sysfs_present},
       {"rdma_devices", v.rdma_devices},
       {"netdevs", v.netdevs},
       {"gpus", v.gpus},
       {"nvswitches", v.nvswitches},
       {"nics", v.nics},
       {"numa_nodes", v.numa_nodes},
       {"topology", v.topology},
       {"warnings", v.warnings}};
}
void from_json(const json& j, Inventory& v) {
  std::string schema = j.at("schema").get<std::string>();
  if (schema != kInventorySchema) {
    throw json::other_error::create(501, "schema is '" + schema + "', expected '" + std::string(kInventorySchema) + "'",
                                    &j);
  }
  v.schema = schema;
  Read(j, "source", v.source);
  Read(j, "host", v.host);
  Read(j, "verbs", v.verbs);
  Read(j, "rdma_sysfs_present", v.rdma_sysfs_present);
  Read(j, "rdma_devices", v.rdma_devices);
  Read(j, "netdevs", v.netdevs);
  Read(j, "gpus", v.gpus);
  Read(j, "nvswitches", v.nvswitches);
  Read(j, "nics", v.nics);
  Read(j, "numa_nodes", v.numa_nodes);
  Read(j, "topology", v.topology);
  Read(j, "warnings", v.warnings);
}

std::optional<Inventory> ParseInventoryJson(std::string_view text, std::string* error) {
  auto parsed = ParseJsonWithin(text, "the inventory", kNodeDocumentBudget);
  if (!parsed.ok()) {
    if (error) *error = parsed.status().message();
    return std::nullopt;
  }
  try {
    return parsed->get<Inventory>();
  } catch (const json::exception& e) {
    if (error) *error = std::string("not a fabcheck inventory JSON: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace fabcheck::model
