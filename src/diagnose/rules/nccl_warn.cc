// nccl.warn: WARN lines no other rule explains and NCCL's message catalogue
// does not know (a newer NCCL, a plugin's own messages).
#include <fmt/format.h>

#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"
#include "logs/nccl_catalog.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclWarn = {
    "nccl.warn", "NCCL", "NCCL printed WARN lines that no other rule explains and its message catalogue does not know",
    "A WARN names the call that failed; the first one is usually the cause and the rest consequences.",
    "Read the first WARN line; rules for the common ones (completion errors, socket, verbs, plugins) say more.", &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& catalog = logs::NcclMessageCatalog::Get();
  std::vector<const model::NcclEvent*> warns;
  for (const auto* e : EventsOf(*ev.nccl, "warn")) {
    if (catalog.Classify(Field(*e, "text"), Field(*e, "source")).family == nullptr) warns.push_back(e);
  }
  if (warns.empty()) return;
  int total = 0;
  for (const auto* e : warns) total += e->count;
  auto d = Make(kNcclWarn, model::Severity::kWarn, model::Confidence::kLow, "NCCL",
                fmt::format("NCCL printed {} other WARN line(s)", total));
  for (const auto* e : warns) {
    if (d.evidence.size() >= 5) break;
    d.evidence.push_back(Cite(*e));
  }
  d.causes = {"the first WARN line names the failing call; later ones are usually its consequences"};
  d.fix = "read the WARN lines: they name the failing call";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
