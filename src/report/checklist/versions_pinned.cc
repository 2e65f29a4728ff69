// 4. Multus, SR-IOV/RDMA Plugin, and Operator versions are pinned and
// compatible. The Kubernetes side is not in a ladder bundle (`fabcheck k8s
// lint` checks manifests); the node side is: firmware, driver, kernel, NCCL and
// CUDA versions must agree across members (rung L1L2.cluster). Drift there
// fails the item; agreement leaves the cluster-software record to a person.
#include <fmt/format.h>

#include "report/checklist.h"

namespace fabcheck::report {

model::ChecklistItem CheckVersionsPinned(const BundleEvidence& e) {
  auto item = checklist::NewItem(4);
  item.rungs = {"L1L2.cluster"};
  item.status = model::ChecklistStatus::kManual;
  const model::RungResult* cluster = e.Rung("L1L2.cluster");
  int compared = 0;
  if (cluster) {
    for (const auto& c : cluster->consistency) {
      if (c.setting != "firmware" && c.setting != "driver" && c.setting != "kernel" && c.setting != "nccl_version" &&
          c.setting != "cuda_version") {
        continue;
      }
      if (c.majority.empty()) continue;
      ++compared;
      if (c.outliers.empty()) {
        item.evidence.push_back(fmt::format("{}: {} on every member", c.setting, c.majority));
        continue;
      }
      checklist::Raise(item, model::ChecklistStatus::kFail);
      for (const auto& id : c.outliers) {
        checklist::AddMember(item, id);
        auto it = c.values.find(id);
        item.evidence.push_back(fmt::format("{}: {} {} where the majority runs {}", id, c.setting,
                                            it == c.values.end() ? "?" : it->second, c.majority));
      }
    }
  }
  if (item.status == model::ChecklistStatus::kFail) {
    item.summary = "node software versions drift: " + checklist::Count(item.members.size(), "member runs", "members run") +
                   " another firmware, driver, kernel, NCCL or CUDA than the rest";
    item.remedy = "pin one version of each in the node image (or the Network/GPU Operator's driver version) and "
                  "roll the outliers to it before go-live";
  } else if (compared == 0) {
    item.summary = cluster ? "the cluster rung compared no version (" + cluster->reason + ")"
                           : "the bundle has no L1L2.cluster rung: node versions were not compared";
  } else {
    item.summary = "node firmware, driver and library versions agree; the Kubernetes stack's versions are a record";
  }
  item.record = {"image digests (not tags) of Multus, the SR-IOV / RDMA shared device plugin, the NVIDIA Network "
                 "Operator and GPU Operator, and the tested combination",
                 "`fabcheck k8s lint` on the rendered manifests flags images without a pinned digest (rule k8s.image.unpinned)"};
  return item;
}

}  // namespace fabcheck::report
