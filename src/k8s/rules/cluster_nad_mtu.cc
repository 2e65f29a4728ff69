// cluster.nad.mtu: NAD MTU above the PF's, or not the fabric's.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "cluster.nad.mtu";

void Check(const Context& ctx, Reporter& out) {
  long long fabric = ctx.ParamInt(kId, "fabricMtu", 0);
  for (const auto& nad : ctx.index.nads()) {
    if (!nad.mtu) continue;
    for (const auto& p : ctx.index.policies()) {
      if (!p.mtu || p.resource_name != ResourceShortName(nad.resource_name) || nad.resource_name.empty()) continue;
      if (*nad.mtu > *p.mtu) {
        Report r = ObjectReport(*nad.source, nad.config_line,
                                "network " + nad.ns + "/" + nad.name + " sets MTU " + std::to_string(*nad.mtu) +
                                    ", above the " + std::to_string(*p.mtu) + " of the PF (policy " +
                                    p.source->name + "): large frames are dropped, small messages work",
                                {"NAD mtu: " + std::to_string(*nad.mtu), "SriovNetworkNodePolicy mtu: " +
                                                                             std::to_string(*p.mtu)});
        r.level = Level::kError;
        out.Add(std::move(r));
      }
    }
    if (fabric > 0 && *nad.mtu != fabric) {
      out.Add(ObjectReport(*nad.source, nad.config_line,
                           "network " + nad.ns + "/" + nad.name + " sets MTU " + std::to_string(*nad.mtu) +
                               " but the fabric MTU is " + std::to_string(fabric) +
                               (*nad.mtu > fabric ? ": frames above the fabric MTU are dropped (a black hole for "
                                                    "large messages)"
                                                  : ": RDMA and TCP throughput suffer from the smaller frames"),
                           {"NAD mtu: " + std::to_string(*nad.mtu), "params.fabricMtu: " + std::to_string(fabric)}));
    }
  }
  if (fabric > 0) {
    for (const auto& p : ctx.index.policies()) {
      if (p.mtu && *p.mtu != fabric) {
        out.Add(ObjectReport(*p.source, p.source->Spec().Get("mtu").line,
                             "SriovNetworkNodePolicy sets the PF MTU to " + std::to_string(*p.mtu) +
                                 " but the fabric MTU is " + std::to_string(fabric),
                             {"spec.mtu: " + std::to_string(*p.mtu), "params.fabricMtu: " + std::to_string(fabric)}));
      }
    }
  }
}

}  // namespace

const Rule& RuleNadMtu() {
  static const Rule kRule{
      {kId, Level::kWarning, "cluster", "Network MTU above the PF's or different from the fabric's",
       "An MTU mismatch is the classic silent failure: small packets (and NCCL's bootstrap) pass, large RDMA "
       "messages and TCP segments vanish or time out. A VF cannot exceed its PF's MTU (set by the "
       "SriovNetworkNodePolicy), and every hop must carry the fabric MTU.",
       "Set the NAD (or MacvlanNetwork) mtu to the PF's MTU and the fabric's (params.fabricMtu), and the policy's "
       "spec.mtu to the fabric MTU.",
       "k8snetworkplumbingwg/sriov-network-operator#844, #57",
       {{"fabricMtu", "int", "(unset)", "the MTU every network of the fabric should use, e.g. 9000 (4200 for IB)"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
