#include "inventory/netdev.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/strings.h"
#include "sys/procfs.h"

namespace fabcheck::inventory {
namespace {

int PrefixLength(const struct sockaddr* mask) {
  if (mask == nullptr) return 0;
  int bits = 0;
  if (mask->sa_family == AF_INET) {
    bits = std::popcount(reinterpret_cast<const sockaddr_in*>(mask)->sin_addr.s_addr);
  } else if (mask->sa_family == AF_INET6) {
    for (uint8_t byte : reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr.s6_addr) bits += std::popcount(byte);
  }
  return bits;
}


AddressMap LoadAddresses(Reader& reader, bool* known) {
  *known = false;
  const auto& root = reader.root();
  if (root.live()) {
    auto live = QueryLiveAddresses();
    if (!live.ok()) {
      reader.Warn("getifaddrs()", live.status().message());
      return {};
    }
    root.RecordMeta(kAddressesMeta, AddressMapToJson(*live));
    *known = true;
    return *live;
  }
  auto text = root.ReadMeta(kAddressesMeta);
  if (!text.ok()) return {};  // a plain directory copy of sysfs has no addresses: unknown, not an error
  auto parsed = AddressMapFromJson(*text);
  if (!parsed.ok()) {
    reader.Warn(std::string(sys::kCaptureMetaDir) + "/" + std::string(kAddressesMeta), parsed.status().message());
    return {};
  }
  *known = true;
  return *parsed;
}

}  // namespace

std::string AddressMapToJson(const AddressMap& addresses) {
  nlohmann::json interfaces = nlohmann::json::object();
  for (const auto& [name, list] : addresses) interfaces[name] = list;
  return ToJsonText(nlohmann::json{{"interfaces", interfaces}}, 1) + "\n";
}

Result<AddressMap> AddressMapFromJson(std::string_view text) {
  try {
    auto j = nlohmann::json::parse(text);
    AddressMap out;
    for (const auto& [name, list] : j.at("interfaces").items()) {
      out[name] = list.get<std::vector<model::IpAddress>>();
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("not an address list: ") + e.what());
  }
}

Result<AddressMap> QueryLiveAddresses() {
  struct ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return ErrnoError(errno, "getifaddrs failed");
  AddressMap out;
  for (auto* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_name == nullptr) continue;
    int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char buffer[INET6_ADDRSTRLEN] = {};
    const void* raw = family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(ifa->ifa_addr)->sin_addr)
                                        : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr)->sin6_addr);
    if (::inet_ntop(family, raw, buffer, sizeof(buffer)) == nullptr) continue;
    out[ifa->ifa_name].push_back({family == AF_INET ? "inet" : "inet6", buffer, PrefixLength(ifa->ifa_netmask)});
  }
  ::freeifaddrs(list);
  return out;
}

std::vector<model::NetDevice> ReadNetDevices(Reader& reader) {
  std::vector<std::string> names = reader.List(std::string(kNetDir), Need::kOptional);
  std::sort(names.begin(), names.end(), NaturalLess);
  bool addresses_known = false;
  AddressMap addresses = LoadAddresses(reader, &addresses_known);
  // Absent without 8021q: no VLANs.
  auto vlans = names.empty() ? std::map<std::string, sys::procfs::Vlan>{} : sys::procfs::ReadVlanConfig(reader.root());
  std::vector<model::NetDevice> out;
  for (const auto& name : names) {
    std::string dir = sys::net_class::Interface(name).dir();
    // bonding_masters is a file in this directory, not an interface.
    if (!reader.root().IsDirectory(dir)) continue;
    if (auto resolved = reader.root().Resolve(dir); resolved.ok()) dir = *resolved;
    const sys::net_class::InterfaceFiles files(dir);
    model::NetDevice n;
    n.name = name;
    if (auto mtu = reader.Int(files.Mtu())) n.mtu = static_cast<int>(*mtu);
    n.operstate = reader.Attr(files.Operstate()).value_or("");
    // carrier and speed fail with EINVAL while the interface is down: optional.
    if (auto carrier = reader.Int(files.Carrier(), Need::kOptional)) n.carrier = *carrier != 0;
    if (auto speed = reader.Int(files.Attribute("speed"), Need::kOptional); speed && *speed >= 0) n.speed_mbps = *speed;
    n.mac = reader.Attr(files.Attribute("address"), Need::kOptional).value_or("");
    if (auto type = reader.Int(files.Attribute("type"), Need::kOptional)) n.type = static_cast<int>(*type);
    if (auto dev_port = reader.Int(files.Attribute("dev_port"), Need::kOptional)) n.dev_port = static_cast<int>(*dev_port);
    // virtio-net hangs below .../0000:00:03.0/virtio0: the function is the
    // last BDF component of the device path, not necessarily its basename.
    if (auto device = reader.root().Resolve(files.PciDevice()); device.ok() && !EndsWith(*device, "/device")) {
      for (const auto& part : Split(*device, '/', true)) {
        if (LooksLikeBdf(part)) n.pci_bdf = part;
      }
    }
    if (!n.pci_bdf.empty()) {
      n.rdma_devices = reader.List(files.RdmaDevices(), Need::kOptional);
      std::sort(n.rdma_devices.begin(), n.rdma_devices.end(), NaturalLess);
    }
    if (auto vlan = vlans.find(name); vlan != vlans.end()) {
      n.vlan_parent = vlan->second.parent;
      n.vlan_id = vlan->second.id;
    }
    n.addresses_known = addresses_known;
    if (auto a = addresses.find(name); a != addresses.end()) n.addresses = a->second;
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace fabcheck::inventory
