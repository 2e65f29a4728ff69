// sys.uverbs.missing: an RDMA device has no accessible /dev/infiniband/uverbsN.

#include <map>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/infiniband.h"

namespace fabcheck::checks {
namespace {

constexpr std::string_view kMeta = "doctor/dev-infiniband.json";

// uverbsN -> RDMA device, from /sys/class/infiniband_verbs/*/ibdev.
std::map<std::string, std::string> VerbsNodes(const sys::SysRoot& root) {
  std::map<std::string, std::string> out;
  auto names = root.ListDir(sys::infiniband::kVerbsClassDir);
  if (!names.ok()) return out;
  for (const auto& n : *names) {
    if (!StartsWith(n, "uverbs")) continue;
    if (auto dev = root.ReadAttribute(sys::infiniband::VerbsIbdevFile(n)); dev.ok()) out[*dev] = n;
  }
  return out;
}

struct NodeState {
  bool known = false;
  bool exists = false;
  bool accessible = false;
  std::string how;
};

NodeState Probe(const sys::SysRoot& root, const std::string& node, nlohmann::json* record) {
  std::string path = sys::infiniband::VerbsCharDevice(node);
  NodeState s;
  if (root.live()) {
    s.known = true;
    auto access = sys::infiniband::ProbeLiveAccess(path);
    s.exists = access.exists;
    s.accessible = access.accessible;
    s.how = "access(" + path + ")";
    (*record)[node] = {{"exists", s.exists}, {"accessible", s.accessible}};
    return s;
  }
  if (auto meta = root.ReadMeta(kMeta); meta.ok()) {
    auto j = nlohmann::json::parse(*meta, nullptr, false);
    if (j.is_object()) {
      s.known = true;
      s.exists = j.contains(node) && j[node].value("exists", false);
      s.accessible = j.contains(node) && j[node].value("accessible", false);
      s.how = "recorded in " + root.DisplayPath(std::string(sys::kCaptureMetaDir) + "/" + std::string(kMeta));
      return s;
    }
  }
  if (root.IsDirectory(sys::infiniband::kVerbsDevDir)) {  // a fixture tree with a /dev
    s.known = true;
    s.exists = s.accessible = root.Exists(path);
    s.how = root.DisplayPath(path);
    (*record)[node] = {{"exists", s.exists}, {"accessible", s.accessible}};
  }
  return s;
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  const std::string verbs_dir(sys::infiniband::kVerbsClassDir);
  if (!ctx.root->IsDirectory(verbs_dir)) {
    if (!ctx.evidence_complete) {
      out.Unknown("node", verbs_dir + " is not in " + ctx.root->Describe() +
                              " (it was taken without the doctor's evidence: re-take it with `fabcheck snapshot`)");
    } else {
      out.Add(model::Severity::kFail, "node",
              verbs_dir + " does not exist: the user-verbs module is not loaded, so no process can "
              "open an RDMA device (NCCL falls back to TCP)",
              {verbs_dir + ": absent"}, "modprobe ib_uverbs (and make it load at boot)");
    }
    return;
  }
  auto nodes = VerbsNodes(*ctx.root);
  nlohmann::json record = nlohmann::json::object();
  std::vector<std::string> good;
  std::set<std::string> done;
  for (const auto& ref : ctx.Ports()) {
    const auto& dev = *ref.device;
    if (!done.insert(dev.name).second) continue;
    auto it = nodes.find(dev.name);
    if (it == nodes.end()) {
      out.Add(model::Severity::kFail, dev.name,
              "no uverbs device is registered for " + dev.name + ": user-space verbs (NCCL, perftest) cannot open it",
              {sys::infiniband::VerbsIbdevFile("*") + ": none names " + dev.name},
              "load the user-verbs module: modprobe ib_uverbs (and mlx5_ib)");
      continue;
    }
    NodeState s = Probe(*ctx.root, it->second, &record);
    std::string path = sys::infiniband::VerbsCharDevice(it->second);
    if (!s.known) {
      out.Unknown(dev.name, path + " cannot be checked in " + ctx.root->Describe() + " (no /dev in it)");
    } else if (!s.exists) {
      out.Add(model::Severity::kFail, dev.name, path + " does not exist: the process cannot open " + dev.name,
              {s.how + ": absent"},
              "in a container, the RDMA device plugin (k8s-rdma-shared-dev-plugin or SR-IOV with isRdma: true) "
              "must mount it; request the RDMA resource in the pod, or --device=" + path + " with docker");
    } else if (!s.accessible) {
      out.Add(model::Severity::kFail, dev.name, path + " exists but this process may not read and write it",
              {s.how + ": permission denied"},
              "fix the permissions (udev rule for /dev/infiniband/uverbs*, typically mode 0666) or run in the "
              "group that owns it");
    } else {
      good.push_back(dev.name + " -> " + path);
    }
  }
  // Device nodes are never captured as files; a capture carries the answers.
  if (ctx.root->recording() && !record.empty()) ctx.root->RecordMeta(kMeta, ToJsonText(record, 2));
  if (!good.empty()) out.Pass("node", "verbs devices present and accessible: " + JoinLimited(good, 8));
}

}  // namespace

extern const Check kSysUverbsMissing = {
    "sys.uverbs.missing", Rung::kContainer, "An RDMA device has no accessible /dev/infiniband/uverbsN",
    "User-space RDMA opens /dev/infiniband/uverbsN; a container that sees the device in sysfs but lacks the "
    "character device (or its permission) makes NCCL report no IB device and fall back to TCP.",
    "modprobe ib_uverbs on the host; in Kubernetes request the RDMA device-plugin resource so the device is "
    "mounted; docker: --device=/dev/infiniband/uverbsN.",
    &Run};

}  // namespace fabcheck::checks
