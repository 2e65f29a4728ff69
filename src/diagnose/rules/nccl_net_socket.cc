// nccl.net.socket: inter-node traffic went over sockets, not RDMA.
#include <fmt/format.h>

#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);

}  // namespace

extern const Rule kNcclNetSocket = {
    "nccl.net.socket", "NCCL", "Inter-node traffic used NET/Socket (TCP), not InfiniBand/RoCE",
    "The silent fallback: the job runs, 5-20x slower, and nothing else reports it.",
    "Make NCCL use IB/RoCE: unset NCCL_IB_DISABLE and NCCL_NET=Socket, check NCCL_IB_HCA names a device of "
    "ibv_devices, that /dev/infiniband is visible (containers: the RDMA device plugin), that libibverbs is "
    "installed in the image, and that the NET/IB line lists the NICs.",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  std::set<std::string> hosts;
  int channels = 0;
  for (const auto& c : s.connections) {
    if (c.transport == "NET/Socket") {
      hosts.insert(c.host);
      channels += static_cast<int>(c.channels.size());
    }
  }
  bool socket_network = false;
  for (const auto& [host, network] : s.network) socket_network |= network == "Socket";
  if (hosts.empty() && !(socket_network && s.nodes > 1)) return;
  std::vector<std::string> names(hosts.begin(), hosts.end());
  auto d = Make(kNcclNetSocket, model::Severity::kFail, model::Confidence::kHigh,
                names.empty() ? "NCCL" : HostList(names),
                channels > 0 ? fmt::format("inter-node traffic used sockets (NET/Socket on {} channel connections), "
                                           "not RDMA",
                                           channels)
                             : "NCCL chose the Socket network on a multi-node job: inter-node traffic will use "
                               "sockets");
  for (const auto& [host, network] : s.network) d.evidence.push_back(fmt::format("{}: Using network {}", host, network));
  for (const auto* e : EventsOf(s, "channel-socket")) d.evidence.push_back(Field(*e, "line"));
  auto env = [&](const char* name) {
    auto it = s.env.find(name);
    return it == s.env.end() ? std::string() : it->second;
  };
  if (Trim(env("NCCL_IB_DISABLE")) == "1") d.causes.push_back("NCCL_IB_DISABLE=1 is set (see nccl.env.ib-disable)");
  if (env("NCCL_NET") == "Socket") d.causes.push_back("NCCL_NET=Socket is set");
  if (!EventsOf(s, "ib-unavailable").empty()) {
    d.causes.push_back("libibverbs could not be loaded (\"Failed to open libibverbs.so\"): rdma-core missing in the "
                       "image");
  }
  if (!EventsOf(s, "ib-no-device").empty()) {
    d.causes.push_back("NET/IB found no device: no /dev/infiniband in the container, NCCL_IB_HCA matching nothing, or "
                       "ports down");
  }
  d.causes.push_back("NCCL_IB_HCA / NCCL_IB_GID_INDEX matching no usable port, so NET/IB was skipped");
  d.fix = kNcclNetSocket.fix;
  d.next = "rung L1 on every host: fabcheck doctor --only L1,RoCE,container (ports ACTIVE, /dev/infiniband, "
           "libibverbs), then rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
