#include "report/load.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "base/parallel.h"
#include "bundle/bundle.h"

namespace fabcheck::report {

Result<BundleEvidence> LoadBundle(const std::string& path) {
  auto bundle = bundle::Bundle::Open(path);
  if (!bundle.ok()) return bundle.status();
  BundleEvidence e;
  e.source = bundle->Describe();
  e.manifest = bundle->manifest();
  // Parsing each member's inventory and doctor JSON is most of a large
  // bundle's load time: one member per task, on every core (the reads are
  // independent; results are merged in member order, so the output does not
  // depend on the threads).
  const auto& members = e.manifest.members;
  std::vector<std::optional<Result<model::Inventory>>> inventories(members.size());
  std::vector<std::optional<Result<model::DoctorReport>>> doctors(members.size());
  const size_t width = std::max(1u, std::thread::hardware_concurrency());
  base::ParallelFor(members.size(), width, [&](size_t i) {
    if (!members[i].inventory_file.empty()) inventories[i] = bundle->ReadInventory(members[i]);
    if (!members[i].doctor_file.empty()) doctors[i] = bundle->ReadDoctor(members[i]);
  });
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    if (inventories[i]) {
      if (inventories[i]->ok()) {
        e.inventories.emplace(m.id, std::move(**inventories[i]));
      } else {
        e.notes.push_back(m.id + ": inventory unreadable: " + inventories[i]->status().message());
      }
    }
    if (doctors[i]) {
      if (doctors[i]->ok()) {
        e.doctors.emplace(m.id, std::move(**doctors[i]));
      } else {
        e.notes.push_back(m.id + ": doctor report unreadable: " + doctors[i]->status().message());
      }
    }
  }
  return e;
}

}  // namespace fabcheck::report
