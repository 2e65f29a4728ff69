#include "checks/check.h"

#include "sys/infiniband.h"

#include "base/strings.h"

namespace fabcheck::checks {

std::string_view RungName(Rung rung) {
  switch (rung) {
    case Rung::kL1: return "L1";
    case Rung::kL2: return "L2";
    case Rung::kRoce: return "RoCE";
    case Rung::kGdr: return "GDR";
    case Rung::kHost: return "host";
    case Rung::kContainer: return "container";
    case Rung::kNccl: return "NCCL";
  }
  return "?";
}

std::string_view RungTitle(Rung rung) {
  switch (rung) {
    case Rung::kL1: return "physical and driver: ports, rates, PCIe, GPU-NIC topology";
    case Rung::kL2: return "IP and MTU: netdevs, addresses, GID table";
    case Rung::kRoce: return "RoCE QoS: PFC, ECN, trust";
    case Rung::kGdr: return "GPUDirect RDMA prerequisites";
    case Rung::kHost: return "host tuning: IRQ affinity, CPU frequency, memory, PCIe device control, CPU pinning";
    case Rung::kContainer: return "container and system limits";
    case Rung::kNccl: return "NCCL settings";
  }
  return "?";
}

std::optional<Rung> ParseRung(std::string_view name) {
  for (Rung r : kAllRungs) {
    if (ToLower(RungName(r)) == ToLower(name)) return r;
  }
  if (ToLower(name) == "system") return Rung::kContainer;
  return std::nullopt;
}

bool EvidenceComplete(const sys::SysRoot& root) { return root.live() || root.ReadMeta(kEvidenceMeta).ok(); }
bool HostEvidenceComplete(const sys::SysRoot& root) {
  return root.live() || root.ReadMeta(kHostEvidenceMeta).ok();
}

bool Context::HasRdma() const { return inventory && !inventory->rdma_devices.empty(); }
bool Context::HasGpus() const { return inventory && !inventory->gpus.empty(); }

bool Context::RdmaExpected() const {
  if (tcp_intended) return false;
  if (profile && (profile->nic_count.value_or(0) > 0 || !profile->nic_devices.empty() || profile->link_layer)) return true;
  return HasGpus();
}

std::vector<Context::PortRef> Context::ActivePorts() const {
  std::vector<PortRef> out;
  for (const auto& ref : Ports()) {
    if (ref.port->state == "ACTIVE") out.push_back(ref);
  }
  return out;
}

std::string Context::PortRef::Label() const { return device->name + " port " + std::to_string(port->port); }
sys::infiniband::PortFiles Context::PortRef::Files() const {
  return sys::infiniband::Port(device->name, port->port);
}

std::vector<Context::PortRef> Context::Ports() const {
  std::vector<PortRef> out;
  if (!inventory) return out;
  for (const auto& dev : inventory->rdma_devices) {
    if (profile && !profile->IsComputeNic(dev.name)) continue;
    for (const auto& port : dev.ports) out.push_back({&dev, &port});
  }
  return out;
}

std::vector<Context::PortRef> Context::RocePorts() const {
  std::vector<PortRef> out;
  for (const auto& ref : Ports()) {
    if (ref.port->link_layer == "Ethernet") out.push_back(ref);
  }
  return out;
}

model::Finding& Reporter::Add(model::Severity severity, std::string object, std::string message,
                              std::vector<std::string> evidence, std::string remedy) {
  model::Finding f;
  f.id = check_.id;
  f.group = std::string(RungName(check_.rung));
  f.severity = severity;
  f.object = std::move(object);
  f.message = std::move(message);
  f.evidence = std::move(evidence);
  f.remedy = std::move(remedy);
  out_->push_back(std::move(f));
  ++count_;
  return out_->back();
}

bool Reporter::NeedInventory(const Context& ctx) {
  if (ctx.inventory) return true;
  Unknown("node", "the node inventory could not be read: " + ctx.inventory_error, {},
          "fix the sysroot or run on the node itself (see `fabcheck inventory`)");
  return false;
}

bool Reporter::NeedRdma(const Context& ctx) {
  if (!NeedInventory(ctx)) return false;
  if (!ctx.inventory->rdma_devices.empty() && !ctx.Ports().empty()) return true;
  std::vector<std::string> evidence;
  if (!ctx.inventory->rdma_sysfs_present) {
    evidence.push_back(std::string(sys::infiniband::kClassDir) + " does not exist");
  } else if (ctx.inventory->rdma_devices.empty()) {
    evidence.push_back(std::string(sys::infiniband::kClassDir) + " is empty");
  } else {
    evidence.push_back("no RDMA device matches the profile's nics.devices");
  }
  if (ctx.inventory->verbs.probed && !ctx.inventory->verbs.message.empty()) {
    evidence.push_back(ctx.inventory->verbs.message);
  }
  Info("node", "no RDMA device on this node, nothing to check", std::move(evidence));
  return false;
}

std::string Evidence(std::string_view path, std::string_view value) {
  return std::string(path) + " = " + std::string(value);
}

}  // namespace fabcheck::checks
