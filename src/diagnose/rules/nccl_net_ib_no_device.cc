// nccl.net.ib-no-device: NCCL's IB transport found no device, or could not load libibverbs.
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclNetIbNoDevice = {
    "nccl.net.ib-no-device", "NCCL", "NET/IB found no device, or libibverbs could not be loaded",
    "Without an IB device NCCL uses sockets between nodes. On one node no NIC is needed: then it is information only.",
    "Check ibv_devices on the node and inside the container, NCCL_IB_HCA, that the RDMA devices are passed to the "
    "job (/dev/infiniband, the RDMA device plugin) and that rdma-core (libibverbs.so.1) is in the image.",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  auto none = EventsOf(*ev.nccl, "ib-no-device");
  auto lib = EventsOf(*ev.nccl, "ib-unavailable");
  if (none.empty() && lib.empty()) return;
  NetworkNeed need = NetworkNeedOf(*ev.nccl);
  bool needed = need != NetworkNeed::kNotNeeded;
  auto d = Make(kNcclNetIbNoDevice, needed ? model::Severity::kWarn : model::Severity::kInfo,
                model::Confidence::kHigh, "NET/IB",
                lib.empty() ? "NCCL's IB transport found no device (NET/IB : No device found.)"
                            : "NCCL could not load libibverbs, so its IB transport is unavailable");
  for (const auto* e : lib) d.evidence.push_back(Cite(*e));
  for (const auto* e : none) d.evidence.push_back(Cite(*e));
  if (!lib.empty()) d.causes.push_back("rdma-core / libibverbs.so.1 not installed in the container image or host");
  d.causes.push_back("no /dev/infiniband/uverbs* in the container (RDMA device plugin or SR-IOV resource not requested)");
  d.causes.push_back("NCCL_IB_HCA names devices that do not exist here (prefix match: mlx5_1 also matches mlx5_10)");
  d.causes.push_back("every port DOWN or the mlx5_ib driver not loaded");
  if (need == NetworkNeed::kUnknown) {
    d.confidence = model::Confidence::kMedium;
    d.causes.push_back("the log does not say how many nodes the job spans: across nodes NCCL falls back to sockets");
  }
  if (auto n = ev.nccl->env.find("NCCL_NET"); n != ev.nccl->env.end() && n->second == "IB") {
    d.severity = model::Severity::kFail;
    d.evidence.push_back("NCCL_NET set by environment to IB");
    d.causes.insert(d.causes.begin(), "NCCL_NET=IB forces the IB transport on a host where it found no RDMA device: "
                                      "init fails instead of falling back to sockets");
  }
  if (!needed) d.causes.insert(d.causes.begin(), "one node: no NIC was needed, so this may be expected");
  d.fix = kNcclNetIbNoDevice.fix;
  d.next = "rung L1 on this host: fabcheck doctor --only L1,container; fabcheck inventory";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
