// nccl.features: NVLS, CollNet (SHARP) and PXN seen in the log.
#include <fmt/format.h>

#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclFeatures = {
    "nccl.features", "NCCL", "NVLS (NVLink SHARP), CollNet (in-network reduction) or PXN (NIC through a peer GPU) were used",
    "They change which path carries the bytes: PXN sends through another GPU's NIC over NVLink, CollNet reduces in "
    "the switches, NVLS in the NVSwitches. Knowing they are on explains bandwidth figures.",
    "Information only.", &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  std::set<std::string> names;
  std::vector<std::string> evidence;
  for (const auto* e : EventsOf(*ev.nccl, "feature")) {
    names.insert(Field(*e, "name"));
    if (evidence.size() < 4 && !e->text.empty()) evidence.push_back(Cite(*e));
  }
  int pxn = 0;
  for (const auto& c : ev.nccl->connections) {
    if (c.proxy_rank >= 0) {
      ++pxn;
      if (evidence.size() < 6) {
        evidence.push_back(fmt::format("{}: {}[{}] -> {}[{}] via {}/{}({}){}", c.host, c.from_rank, c.from_device,
                                       c.to_rank, c.to_device, c.transport, c.net_device, c.proxy_rank, c.detail));
      }
    }
  }
  if (pxn > 0) names.insert("PXN");
  if (names.empty()) return;
  auto d = Make(kNcclFeatures, model::Severity::kInfo, model::Confidence::kHigh, "NCCL",
                "NCCL used " + Join(std::vector<std::string>(names.begin(), names.end()), ", ") +
                    (pxn > 0 ? fmt::format(" ({} PXN connections: NET through a peer GPU's NIC)", pxn) : ""));
  d.evidence = evidence;
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
