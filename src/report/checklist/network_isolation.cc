// 3. Default network and training data network are isolated from each other,
// with clear routing boundaries. Observable on the hosts: the control
// (management) address and the data-plane addresses must sit on different
// interfaces and different subnets. Routing between them is decided on the
// switches and routers, which the hosts cannot see: that part is recorded.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <optional>
#include <set>

#include "base/strings.h"
#include "report/checklist.h"

namespace fabcheck::report {
namespace {

std::optional<uint32_t> Ipv4(const std::string& text) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

// "10.0.0.5:18600" / "[fe80::1]:18600" / "node01:18600" -> the host part.
std::string HostOf(const std::string& endpoint) {
  if (StartsWith(endpoint, "[")) return endpoint.substr(1, endpoint.find(']') - 1);
  size_t colon = endpoint.rfind(':');
  return colon == std::string::npos ? endpoint : endpoint.substr(0, colon);
}

struct Where {
  std::string netdev;
  int prefix_len = 0;
};

std::optional<Where> Find(const model::Inventory& inv, const std::string& address) {
  for (const auto& n : inv.netdevs) {
    for (const auto& a : n.addresses) {
      if (a.address == address) return Where{n.name, a.prefix_len};
    }
  }
  return std::nullopt;
}

bool SameSubnet(const std::string& a, const std::string& b, int prefix_len) {
  auto x = Ipv4(a), y = Ipv4(b);
  if (!x || !y || prefix_len <= 0 || prefix_len > 32) return false;
  uint32_t mask = prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> prefix_len);
  return (*x & mask) == (*y & mask);
}

}  // namespace

model::ChecklistItem CheckNetworkIsolation(const BundleEvidence& e) {
  auto item = checklist::NewItem(3);
  item.rungs = {"L1L2.node", "L2.path"};
  size_t judged = 0;
  for (const auto& m : e.manifest.members) {
    if (!m.reachable) continue;
    const std::string control = HostOf(m.control);
    const model::Inventory* inv = e.InventoryOf(m.id);
    if (m.data_addresses.empty() || control.empty() || !inv || inv->netdevs.empty()) {
      checklist::Raise(item, model::ChecklistStatus::kUnknown);
      checklist::AddMember(item, m.id);
      continue;
    }
    auto control_at = Find(*inv, control);
    bool bad = false;
    for (const auto& data : m.data_addresses) {
      if (data == control) {
        item.evidence.push_back(fmt::format("{}: the data-plane address {} is the control address", m.id, data));
        bad = true;
        continue;
      }
      auto data_at = Find(*inv, data);
      if (control_at && data_at && control_at->netdev == data_at->netdev) {
        item.evidence.push_back(fmt::format("{}: data-plane {} and control {} share the interface {}", m.id, data,
                                            control, data_at->netdev));
        bad = true;
      } else if (data_at && SameSubnet(data, control, data_at->prefix_len)) {
        item.evidence.push_back(fmt::format("{}: data-plane {}/{} ({}) and control {} are in one subnet", m.id, data,
                                            data_at->prefix_len, data_at->netdev, control));
        bad = true;
      }
    }
    if (bad) {
      checklist::Raise(item, model::ChecklistStatus::kFail);
      checklist::AddMember(item, m.id);
    } else if (control_at && judged < 3) {
      std::set<std::string> data_netdevs;
      for (const auto& data : m.data_addresses) {
        if (auto at = Find(*inv, data)) data_netdevs.insert(at->netdev);
      }
      item.evidence.push_back(fmt::format("{}: management {} on {}; data plane {} ... on {} other interfaces", m.id,
                                          control, control_at->netdev, m.data_addresses.front(),
                                          data_netdevs.size()));
    }
    if (!control_at) {
      // The control endpoint may be a name or a NAT address: only the data side is judged.
      item.evidence.push_back(fmt::format("{}: control endpoint {} is not an address of the node's interfaces", m.id,
                                          m.control));
    }
    ++judged;
  }
  for (const auto& f : checklist::DoctorFindings(e, {"nccl.socket-ifname"})) {
    checklist::Raise(item, f.finding->severity == model::Severity::kFail ? model::ChecklistStatus::kFail
                                                                         : item.status);
    checklist::AddMember(item, f.member);
    item.evidence.push_back(checklist::Describe(f));
  }
  if (item.status == model::ChecklistStatus::kFail) {
    item.summary = "the training data plane shares an interface or subnet with the management network on " +
                   checklist::Count(item.members.size(), "member", "members");
    item.remedy = "put the data-plane NICs on their own subnets (one per rail) and keep the management address on "
                  "the default interface; NCCL_SOCKET_IFNAME and NCCL_IB_HCA then select the data plane explicitly";
  } else if (judged == 0) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "the bundle has no data-plane addresses with interface addresses to compare";
  } else if (item.status == model::ChecklistStatus::kUnknown) {
    item.summary = fmt::format("data plane and management are apart on {} members; {} lack the addresses to tell",
                               judged, item.members.size());
  } else {
    item.status = model::ChecklistStatus::kManual;
    item.summary = fmt::format("data plane and management use different interfaces and subnets on all {} members; "
                               "routing boundaries are a switch-side record",
                               judged);
  }
  item.record = {"that no route joins the data-plane subnets and the management network (VRF, ACL or a separate "
                 "fabric), and who owns that configuration"};
  return item;
}

}  // namespace fabcheck::report
