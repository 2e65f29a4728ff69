#include "report/evidence.h"

namespace fabcheck::report {

const model::RungResult* BundleEvidence::Rung(std::string_view id) const {
  for (const auto& r : manifest.rungs) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

const model::LadderMember* BundleEvidence::Member(std::string_view id) const {
  for (const auto& m : manifest.members) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

const model::Inventory* BundleEvidence::InventoryOf(std::string_view id) const {
  auto it = inventories.find(std::string(id));
  return it == inventories.end() ? nullptr : &it->second;
}

const model::DoctorReport* BundleEvidence::DoctorOf(std::string_view id) const {
  auto it = doctors.find(std::string(id));
  return it == doctors.end() ? nullptr : &it->second;
}

std::string BundleEvidence::RackOf(std::string_view id) const {
  const model::LadderMember* m = Member(id);
  return m ? m->rack : "";
}

}  // namespace fabcheck::report
