// nccl.verbs.call-failed: "Call to ibv_X failed with error E", with the meaning per call and errno.
#include <fmt/format.h>

#include <map>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclVerbsCallFailed = {
    "nccl.verbs.call-failed", "NCCL", "A verbs call failed (\"Call to ibv_X failed with error E\")",
    "Each call fails for its own reasons: ibv_modify_qp with ENODEV/EINVAL usually means a GID index that does not "
    "exist or a RoCE netdev outside this network namespace; ibv_reg_mr with ENOMEM the memlock limit; ibv_create_qp "
    "resource limits.",
    "See the call's causes; most are settings (NCCL_IB_GID_INDEX, ulimit -l / IPC_LOCK, the container's devices).",
    &Run};

namespace {

struct Meaning {
  std::vector<std::string> causes;
  std::string fix;
  std::string next;
};

Meaning For(const std::string& call, const std::string& err, const std::string& host) {
  Meaning m;
  if (StartsWith(call, "ibv_modify_qp")) {
    if (err == "ENODEV" || err == "EINVAL") {
      m.causes = {"NCCL_IB_GID_INDEX names a GID slot that is empty or not RoCE v2 on this port (index 3 is not "
                  "guaranteed: the order depends on when addresses were added)",
                  "the RoCE netdev behind the HCA is not in this network namespace (container with a shared HCA but "
                  "not its netdev; rdma system netns mode), so the GID has no device",
                  "the port's IP address is missing, so no IPv4 RoCE v2 GID exists",
                  "an MTU or path attribute the port does not support"};
      m.fix = "unset NCCL_IB_GID_INDEX (NCCL 2.21+ picks the RoCE v2 IPv4 entry) or set the index show_gids lists "
              "for the pod's address; give the pod the netdev of its RDMA device (SR-IOV / macvlan on that PF)";
      m.next = "fabcheck doctor --only RoCE,container on " + host + " (GID table, netns, NCCL_IB_GID_INDEX)";
    } else if (err == "ETIMEDOUT" || err == "ENETUNREACH" || err == "EHOSTUNREACH") {
      m.causes = {"no route to the peer's GID (RoCE v2 across subnets without a route, wrong GID index)",
                  "the address resolution (ARP/ND) for the peer's GID failed"};
      m.fix = "use GIDs of addresses that route to each other; check the routes of the RoCE netdevs";
      m.next = "fabcheck doctor --only L2,RoCE on both nodes; fabcheck sweep between them";
    } else {
      m.causes = {"a QP attribute the device rejects (GID, MTU, timeout)", "the device was reset"};
      m.fix = "check the GID index, MTU and dmesg";
      m.next = "fabcheck doctor --only RoCE on " + host;
    }
  } else if (StartsWith(call, "ibv_reg_mr") || StartsWith(call, "ibv_reg_dmabuf_mr")) {
    if (err == "ENOMEM" || err == "EPERM" || err == "EACCES") {
      m.causes = {"the memlock limit (ulimit -l) is too small to pin the buffers: containers need CAP_IPC_LOCK or "
                  "memlock unlimited",
                  "GPU memory registration without nvidia-peermem / dma-buf (then EINVAL/EFAULT is more usual)"};
      m.fix = "ulimit -l unlimited (systemd LimitMEMLOCK=infinity, Kubernetes securityContext capabilities add "
              "IPC_LOCK)";
      m.next = "fabcheck doctor --only container on " + host;
    } else {
      // EFAULT/EINVAL point at the memory itself (GPU memory without peer-memory
      // support); without an errno the locked-memory limit, the most common
      // cause, stays first.
      bool memory_kind = err == "EFAULT" || err == "EINVAL";
      std::string memlock = "the memlock limit (ulimit -l) is too small to pin the buffers: containers need CAP_IPC_LOCK "
                            "or memlock unlimited";
      m.causes = {"GPU memory cannot be registered: nvidia-peermem not loaded or dma-buf unsupported",
                  "the IOMMU blocks the mapping"};
      m.causes.insert(memory_kind ? m.causes.end() : m.causes.begin(), memlock);
      m.fix = memory_kind ? "load nvidia-peermem or use the dma-buf path (open kernel modules); A/B with "
                            "NCCL_NET_GDR_LEVEL=LOC; check ulimit -l inside the job"
                          : "check ulimit -l inside the job (mpirun/srun/the container) first: unlimited, or "
                            "IPC_LOCK for containers; then nvidia-peermem / dma-buf";
      m.next = "fabcheck doctor --only container,GDR on " + host;
    }
  } else if (StartsWith(call, "ibv_create_qp") || StartsWith(call, "ibv_create_cq") ||
             StartsWith(call, "ibv_create_srq")) {
    m.causes = {"a device resource limit (max QPs/CQs; many ranks x NCCL_IB_QPS_PER_CONNECTION)",
                "the memlock limit (the queues are pinned memory too)", "an SR-IOV VF with few resources"};
    m.fix = "raise memlock, lower NCCL_IB_QPS_PER_CONNECTION, check the VF's resource profile";
    m.next = "fabcheck doctor --only container on " + host;
  } else if (StartsWith(call, "ibv_open_device") || StartsWith(call, "ibv_get_device_list") ||
             StartsWith(call, "ibv_query")) {
    m.causes = {"/dev/infiniband/uverbs* not accessible in the container (device plugin, permissions)",
                "the driver (mlx5_ib) reloaded or the device was removed"};
    m.fix = "pass the RDMA devices to the container and check their permissions";
    m.next = "fabcheck doctor --only L1,container on " + host;
  } else {
    m.causes = {"see the error text; the call's arguments come from NCCL's settings and the device"};
    m.fix = "read the call's error and dmesg";
    m.next = "fabcheck doctor on " + host;
  }
  return m;
}

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  std::map<std::string, std::vector<const model::NcclEvent*>> groups;
  std::vector<std::string> order;
  for (const auto* e : EventsOf(*ev.nccl, "verbs")) {
    std::string key = e->host + "|" + Field(*e, "call") + "|" + Field(*e, "errno") + Field(*e, "error");
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(e);
  }
  for (const auto& key : order) {
    const auto& e = *groups[key].front();
    std::string call = Field(e, "call"), err = Field(e, "errno"), text = Field(e, "error");
    std::string host = e.host.empty() ? "this host" : e.host;
    auto d = Make(kNcclVerbsCallFailed, model::Severity::kFail, model::Confidence::kHigh, host + " " + call,
                  fmt::format("{} failed on {}: {}{}", call, host, text.empty() ? "(no error text)" : text,
                              err.empty() ? "" : " (" + err + ")"));
    for (const auto* x : groups[key]) {
      if (d.evidence.size() >= 4) break;
      d.evidence.push_back(Cite(*x));
    }
    if (auto g = ev.nccl->env.find("NCCL_IB_GID_INDEX"); g != ev.nccl->env.end()) {
      d.evidence.push_back("NCCL_IB_GID_INDEX set by environment to " + g->second);
    }
    Meaning m = For(call, err, host);
    d.causes = m.causes;
    d.fix = m.fix;
    d.next = m.next;
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
