// What the go-live report is made from: a ladder bundle's manifest and the
// members' inventory and doctor reports, already read (model values only; the
// loader in load.h is the one place that opens a bundle). Tests and the
// benchmark build it directly.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/doctor.h"
#include "fabcheck/model/inventory.h"
#include "fabcheck/model/kv.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::report {

// One KV transfer's result given beside the bundle (`report --kv FILE`): L5.
struct KvEvidence {
  std::string file;
  model::KvResult result;
};

struct BundleEvidence {
  std::string source;  // "bundle run1.tar.gz"
  model::LadderManifest manifest;
  std::map<std::string, model::Inventory> inventories;  // member ID -> inventory
  std::map<std::string, model::DoctorReport> doctors;   // member ID -> doctor report
  std::vector<std::string> notes;  // evidence the manifest names that could not be read
  std::vector<KvEvidence> kv;      // L5 results (fabcheck kv run), in the order given

  const model::RungResult* Rung(std::string_view id) const;  // nullptr when absent
  const model::LadderMember* Member(std::string_view id) const;
  const model::Inventory* InventoryOf(std::string_view id) const;
  const model::DoctorReport* DoctorOf(std::string_view id) const;
  // The rack of a member ("" when unknown).
  std::string RackOf(std::string_view id) const;
};

// The rung IDs in ladder order.
inline constexpr std::string_view kRungOrder[] = {"L1L2.node", "L1L2.cluster", "L2.path", "L3", "L4", "L5"};

// Rung L5 from the KV results given beside the bundle (kv_rung.cc): a pass,
// a warning when a transfer falls short of its L3 goal, a failure when one
// failed or its ends disagree; the reason names the rung to look at.
model::RungResult KvRung(const BundleEvidence& e);

}  // namespace fabcheck::report
