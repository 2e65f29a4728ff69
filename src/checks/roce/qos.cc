#include "checks/roce/qos.h"

#include <map>

#include "checks/facts.h"

namespace fabcheck::checks {

std::string RoceNetdev::Object() const {
  return (netdev.empty() ? std::string("(no netdev)") : netdev) + " (" + Join(ports, ", ") + ")";
}

std::vector<RoceNetdev> ReadRoceNetdevs(const Context& ctx) {
  std::vector<RoceNetdev> out;
  std::map<std::string, size_t> at;
  for (const auto& ref : ctx.RocePorts()) {
    std::string netdev = PhysicalNetdev(ctx, ref);
    auto it = at.find(netdev);
    if (it != at.end() && !netdev.empty()) {
      out[it->second].ports.push_back(ref.Label());
      continue;
    }
    RoceNetdev r;
    r.netdev = netdev;
    r.ports.push_back(ref.Label());
    r.dcb = netdev.empty() ? Result<DcbInfo>(NotFoundError("no netdev in this network namespace for " + ref.Label()))
                           : ReadDcb(*ctx.root, netdev);
    at[netdev] = out.size();
    out.push_back(std::move(r));
  }
  return out;
}

model::Severity QosSeverity(const Context& ctx) {
  return ctx.profile && ctx.profile->pfc_priority ? model::Severity::kFail : model::Severity::kWarn;
}

}  // namespace fabcheck::checks
