// roce.ecn.off: ECN (DCQCN) is disabled on the RoCE priority.
//
// Read from the MLNX_OFED/DOCA driver's /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<prio>;
// the inbox driver has no such files, which makes the result "unknown".
#include "checks/roce/qos.h"
#include "sys/net_class.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto netdevs = ReadRoceNetdevs(ctx);
  if (netdevs.empty()) {
    out.Pass("node", "no RoCE port: nothing to check");
    return;
  }
  for (const auto& r : netdevs) {
    if (r.netdev.empty()) {
      out.Unknown(r.Object(), "no netdev in this network namespace");
      continue;
    }
    // The priority that must have ECN: the profile's, else the PFC-enabled ones.
    std::vector<int> prios;
    std::string why;
    if (ctx.profile && ctx.profile->pfc_priority) {
      prios.push_back(*ctx.profile->pfc_priority);
      why = "profile roce.pfc_priority";
    } else if (r.dcb.ok() && r.dcb->pfc_en && *r.dcb->pfc_en) {
      for (int p = 0; p < 8; ++p) {
        if (*r.dcb->pfc_en & (1u << p)) prios.push_back(p);
      }
      why = "PFC-enabled priority";
    }
    if (prios.empty()) {
      out.Unknown(r.Object(), "the RoCE priority is unknown (no PFC priority read and no profile roce.pfc_priority)");
      continue;
    }
    const auto files = sys::net_class::Interface(r.netdev);
    std::string base = files.Ecn();
    if (!ctx.root->IsDirectory(base)) {
      out.Unknown(r.Object(),
                  "ECN state is not exposed: " + base + " is absent (only the MLNX_OFED/DOCA driver creates it; the "
                  "inbox driver keeps DCQCN settings elsewhere)");
      continue;
    }
    for (int p : prios) {
      std::vector<std::string> ev;
      std::vector<std::string> off;
      bool unreadable = false;
      for (const char* role : {"roce_np", "roce_rp"}) {
        std::string path = files.EcnEnable(role, p);
        auto v = ctx.root->ReadAttribute(path);
        if (!v.ok()) {
          unreadable = true;
          ev.push_back(path + ": " + v.status().message());
          continue;
        }
        ev.push_back(Evidence(path, *v));
        if (*v != "1") off.push_back(std::string(role) == "roce_np" ? "notification point (receiver)"
                                                                       : "reaction point (sender)");
      }
      std::string object = r.Object() + " priority " + std::to_string(p);
      if (!off.empty()) {
        out.Add(QosSeverity(ctx), object,
                "ECN/DCQCN is disabled for the " + Join(off, " and ") + " on the " + why + " " + std::to_string(p) +
                    ": congestion is handled by PFC pauses alone, which spread through the fabric",
                ev,
                "echo 1 > " + base + "/roce_np/enable/" + std::to_string(p) + " and echo 1 > " + base +
                    "/roce_rp/enable/" + std::to_string(p) + " (persist through the driver's QoS configuration)");
      } else if (unreadable) {
        out.Unknown(object, "ECN enable files could not be read", ev);
      } else {
        out.Pass(object, "ECN enabled for sender and receiver on the " + why, ev);
      }
    }
  }
}

}  // namespace

extern const Check kRoceEcnOff = {
    "roce.ecn.off", Rung::kRoce, "ECN (DCQCN congestion control) is disabled on the RoCE priority",
    "With PFC but no ECN, congestion is only pushed back hop by hop: pause storms and head-of-line blocking "
    "spread a hot spot over the fabric. DCQCN needs ECN enabled at both ends of every flow.",
    "Enable roce_np and roce_rp for the RoCE priority (/sys/class/net/<if>/ecn/... with the NVIDIA driver), and "
    "ECN marking on the switches for the same queue.",
    &Run};

}  // namespace fabcheck::checks
