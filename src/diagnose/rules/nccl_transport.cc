// nccl.transport: which transports carried the channels (pass when all fast).
#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclTransport = {
    "nccl.transport", "NCCL", "Which transports NCCL used (pass when every channel used P2P, NVLS or NET with GPUDirect)",
    "The one-line answer to \"is RDMA really used, end to end?\".", "Nothing to fix when it passes.", &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl || ev.nccl->connections.empty()) return;
  std::string used;
  for (const auto& [transport, count] : ev.nccl->transport_channels) {
    used += fmt::format("{}{}: {} channel lines", used.empty() ? "" : "; ", transport, count);
  }
  bool only_fast = std::none_of(ev.nccl->connections.begin(), ev.nccl->connections.end(), [](const auto& c) {
    return c.transport == "NET/Socket" || c.transport == "SHM" || (StartsWith(c.transport, "NET/") && !c.gdr);
  });
  auto d = Make(kNcclTransport, only_fast ? model::Severity::kPass : model::Severity::kInfo, model::Confidence::kHigh,
                Join(ev.nccl->files, ", "), "NCCL used " + used);
  for (const auto& [host, network] : ev.nccl->network) {
    if (d.evidence.size() < 8) d.evidence.push_back(fmt::format("{}: Using network {}", host, network));
  }
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
