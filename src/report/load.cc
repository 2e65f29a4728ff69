#include "report/load.h"

#include "bundle/bundle.h"

namespace fabcheck::report {

Result<BundleEvidence> LoadBundle(const std::string& path) {
  auto bundle = bundle::Bundle::Open(path);
  if (!bundle.ok()) return bundle.status();
  BundleEvidence e;
  e.source = bundle->Describe();
  e.manifest = bundle->manifest();
  for (const auto& m : e.manifest.members) {
    if (!m.inventory_file.empty()) {
      auto inv = bundle->ReadInventory(m);
      if (inv.ok()) {
        e.inventories.emplace(m.id, std::move(*inv));
      } else {
        e.notes.push_back(m.id + ": inventory unreadable: " + inv.status().message());
      }
    }
    if (!m.doctor_file.empty()) {
      auto doctor = bundle->ReadDoctor(m);
      if (doctor.ok()) {
        e.doctors.emplace(m.id, std::move(*doctor));
      } else {
        e.notes.push_back(m.id + ": doctor report unreadable: " + doctor.status().message());
      }
    }
  }
  return e;
}

}  // namespace fabcheck::report
