#include "fabcheck/model/inventory.h"

namespace fabcheck::model {
namespace {

using nlohmann::json;

// Unknown values are null in JSON, never a made-up zero.
template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

template <typename T>
void GetOpt(const json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out.reset();
  } else {
    out = it->get<T>();
  }
}

template <typename T>
void Get(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) out = it->get<T>();
}

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
  Get(j, "path", v.path);
  Get(j, "message", v.message);
}

void to_json(json& j, const PciLink& v) {
  j = {{"current_speed_gts", Opt(v.current_speed_gts)},
       {"max_speed_gts", Opt(v.max_speed_gts)},
       {"current_width", Opt(v.current_width)},
       {"max_width", Opt(v.max_width)},
       {"degraded", v.Degraded()}};
}
void from_json(const json& j, PciLink& v) {
  GetOpt(j, "current_speed_gts", v.current_speed_gts);
  GetOpt(j, "max_speed_gts", v.max_speed_gts);
  GetOpt(j, "current_width", v.current_width);
  GetOpt(j, "max_width", v.max_width);
}

void to_json(json& j, const PciBridge& v) {
  j = {{"bdf", v.bdf},   {"vendor_id", v.vendor_id}, {"device_id", v.device_id}, {"class", v.class_code},
       {"role", v.role}, {"link", v.link}};
}
void from_json(const json& j, PciBridge& v) {
  Get(j, "bdf", v.bdf);
  Get(j, "vendor_id", v.vendor_id);
  Get(j, "device_id", v.device_id);
  Get(j, "class", v.class_code);
  Get(j, "role", v.role);
  Get(j, "link", v.link);
}

void to_json(json& j, const PciFunction& v) {
  j = {{"bdf", v.bdf},
       {"vendor_id", v.vendor_id},
       {"device_id", v.device_id},
       {"class", v.class_code},
       {"subsystem_vendor_id", v.subsystem_vendor_id},
       {"subsystem_device_id", v.subsystem_device_id},
       {"driver", v.driver},
       {"numa_node", Opt(v.numa_node)},
       {"local_cpulist", v.local_cpulist},
       {"root_complex", v.root_complex},
       {"path", v.path},
       {"link", v.link},
       {"sysfs_path", v.sysfs_path}};
}
void from_json(const json& j, PciFunction& v) {
  Get(j, "bdf", v.bdf);
  Get(j, "vendor_id", v.vendor_id);
  Get(j, "device_id", v.device_id);
  Get(j, "class", v.class_code);
  Get(j, "subsystem_vendor_id", v.subsystem_vendor_id);
  Get(j, "subsystem_device_id", v.subsystem_device_id);
  Get(j, "driver", v.driver);
  GetOpt(j, "numa_node", v.numa_node);
  Get(j, "local_cpulist", v.local_cpulist);
  Get(j, "root_complex", v.root_complex);
  Get(j, "path", v.path);
  Get(j, "link", v.link);
  Get(j, "sysfs_path", v.sysfs_path);
}

void to_json(json& j, const IpAddress& v) {
  j = {{"family", v.family}, {"address", v.address}, {"prefix_len", v.prefix_len}};
}
void from_json(const json& j, IpAddress& v) {
  Get(j, "family", v.family);
  Get(j, "address", v.address);
  Get(j, "prefix_len", v.prefix_len);
}

void to_json(json& j, const NetDevice& v) {
  j = {{"name", v.name},
       {"mtu", Opt(v.mtu)},
       {"operstate", v.operstate},
       {"carrier", Opt(v.carrier)},
       {"speed_mbps", Opt(v.speed_mbps)},
       {"mac", v.mac},
       {"type", Opt(v.type)},
       {"dev_port", Opt(v.dev_port)},
       {"pci_bdf", v.pci_bdf},
       {"vlan_parent", v.vlan_parent},
       {"vlan_id", Opt(v.vlan_id)},
       {"rdma_devices", v.rdma_devices},
       {"addresses", v.addresses_known ? json(v.addresses) : json(nullptr)}};
}
void from_json(const json& j, NetDevice& v) {
  Get(j, "name", v.name);
  GetOpt(j, "mtu", v.mtu);
  Get(j, "operstate", v.operstate);
  GetOpt(j, "carrier", v.carrier);
  GetOpt(j, "speed_mbps", v.speed_mbps);
  Get(j, "mac", v.mac);
  GetOpt(j, "type", v.type);
  GetOpt(j, "dev_port", v.dev_port);
  Get(j, "pci_bdf", v.pci_bdf);
  Get(j, "vlan_parent", v.vlan_parent);
  GetOpt(j, "vlan_id", v.vlan_id);
  Get(j, "rdma_devices", v.rdma_devices);
  auto it = j.find("addresses");
  v.addresses_known = it != j.end() && it->is_array();
  if (v.addresses_known) v.addresses = it->get<std::vector<IpAddress>>();
}

void to_json(json& j, const GidEntry& v) {
  j = {{"index", v.index}, {"gid", v.gid},   {"type", v.type},
       {"netdev", v.netdev}, {"ip", v.ip}, {"ipv4", v.ipv4}, {"link_local", v.link_local}};
}
void from_json(const json& j, GidEntry& v) {
  Get(j, "index", v.index);
  Get(j, "gid", v.gid);
  Get(j, "type", v.type);
  Get(j, "netdev", v.netdev);
  Get(j, "ip", v.ip);
  Get(j, "ipv4", v.ipv4);
  Get(j, "link_local", v.link_local);
}

void to_json(json& j, const RdmaPort& v) {
  j = {{"port", v.port},
       {"state_code", Opt(v.state_code)},
       {"state", v.state},
       {"phys_state_code", Opt(v.phys_state_code)},
       {"phys_state", v.phys_state},
       {"rate_text", v.rate_text},
       {"rate_gbps", Opt(v.rate_gbps)},
       {"width", Opt(v.width)},
       {"speed_name", v.speed_name},
       {"link_layer", v.link_layer},
       {"lid", Opt(v.lid)},
       {"sm_lid", Opt(v.sm_lid)},
       {"netdev", v.netdev},
       {"nccl_gid_index", Opt(v.nccl_gid_index)},
       {"gids", v.gids}};
}
void from_json(const json& j, RdmaPort& v) {
  Get(j, "port", v.port);
  GetOpt(j, "state_code", v.state_code);
  Get(j, "state", v.state);
  GetOpt(j, "phys_state_code", v.phys_state_code);
  Get(j, "phys_state", v.phys_state);
  Get(j, "rate_text", v.rate_text);
  GetOpt(j, "rate_gbps", v.rate_gbps);
  GetOpt(j, "width", v.width);
  Get(j, "speed_name", v.speed_name);
  Get(j, "link_layer", v.link_layer);
  GetOpt(j, "lid", v.lid);
  GetOpt(j, "sm_lid", v.sm_lid);
  Get(j, "netdev", v.netdev);
  GetOpt(j, "nccl_gid_index", v.nccl_gid_index);
  Get(j, "gids", v.gids);
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
       {"numa_node", Opt(v.numa_node)},
       {"local_cpulist", v.local_cpulist},
       {"ports", v.ports}};
}
void from_json(const json& j, RdmaDevice& v) {
  Get(j, "name", v.name);
  Get(j, "node_type", v.node_type);
  Get(j, "node_guid", v.node_guid);
  Get(j, "sys_image_guid", v.sys_image_guid);
  Get(j, "fw_ver", v.fw_ver);
  Get(j, "hca_type", v.hca_type);
  Get(j, "board_id", v.board_id);
  Get(j, "pci_bdf", v.pci_bdf);
  GetOpt(j, "numa_node", v.numa_node);
  Get(j, "local_cpulist", v.local_cpulist);
  Get(j, "ports", v.ports);
}

void to_json(json& j, const VerbsProbe& v) {
  j = {{"probed", v.probed},
       {"ok", v.ok},
       {"device_count", v.device_count},
       {"errno", v.error_number},
       {"message", v.message}};
}
void from_json(const json& j, VerbsProbe& v) {
  Get(j, "probed", v.probed);
  Get(j, "ok", v.ok);
  Get(j, "device_count", v.device_count);
  Get(j, "errno", v.error_number);
  Get(j, "message", v.message);
}

void to_json(json& j, const Gpu& v) {
  j = {{"index", v.index}, {"name", v.name}, {"uuid", v.uuid}, {"pci", v.pci}};
}
void from_json(const json& j, Gpu& v) {
  Get(j, "index", v.index);
  Get(j, "name", v.name);
  Get(j, "uuid", v.uuid);
  Get(j, "pci", v.pci);
}

void to_json(json& j, const NvSwitch& v) { j = {{"index", v.index}, {"pci", v.pci}}; }
void from_json(const json& j, NvSwitch& v) {
  Get(j, "index", v.index);
  Get(j, "pci", v.pci);
}

void to_json(json& j, const Nic& v) {
  j = {{"label", v.label}, {"rdma_devices", v.rdma_devices}, {"netdevs", v.netdevs}, {"pci", v.pci}};
}
void from_json(const json& j, Nic& v) {
  Get(j, "label", v.label);
  Get(j, "rdma_devices", v.rdma_devices);
  Get(j, "netdevs", v.netdevs);
  Get(j, "pci", v.pci);
}

void to_json(json& j, const NumaNode& v) {
  j = {{"id", v.id}, {"cpulist", v.cpulist}, {"cpu_count", v.cpu_count}};
}
void from_json(const json& j, NumaNode& v) {
  Get(j, "id", v.id);
  Get(j, "cpulist", v.cpulist);
  Get(j, "cpu_count", v.cpu_count);
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
  Get(j, "gpu", v.gpu);
  Get(j, "nic", v.nic);
  Get(j, "distance", v.distance);
  Get(j, "shared", v.shared);
}

void to_json(json& j, const Topology& v) {
  j = {{"gpus", v.gpus}, {"nics", v.nics}, {"distance", v.distance}, {"rails", v.rails}};
}
void from_json(const json& j, Topology& v) {
  Get(j, "gpus", v.gpus);
  Get(j, "nics", v.nics);
  Get(j, "distance", v.distance);
  Get(j, "rails", v.rails);
}

void to_json(json& j, const HostInfo& v) {
  j = {{"hostname", v.hostname}, {"kernel", v.kernel}, {"nvidia_driver", v.nvidia_driver}};
}
void from_json(const json& j, HostInfo& v) {
  Get(j, "hostname", v.hostname);
  Get(j, "kernel", v.kernel);
  Get(j, "nvidia_driver", v.nvidia_driver);
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
  Get(j, "source", v.source);
  Get(j, "host", v.host);
  Get(j, "verbs", v.verbs);
  Get(j, "rdma_sysfs_present", v.rdma_sysfs_present);
  Get(j, "rdma_devices", v.rdma_devices);
  Get(j, "netdevs", v.netdevs);
  Get(j, "gpus", v.gpus);
  Get(j, "nvswitches", v.nvswitches);
  Get(j, "nics", v.nics);
  Get(j, "numa_nodes", v.numa_nodes);
  Get(j, "topology", v.topology);
  Get(j, "warnings", v.warnings);
}

std::optional<Inventory> ParseInventoryJson(std::string_view text, std::string* error) {
  try {
    return json::parse(text).get<Inventory>();
  } catch (const json::exception& e) {
    if (error) *error = std::string("not a fabcheck inventory JSON: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace fabcheck::model
