// `fabcheck snapshot`: replay every reader on the live node with recording
// on, and write what they read into a capture tarball.
//
// Other modules add their reads (doctor's checks, the exporter's counters)
// by registering a function that reads through the SysRoot it is given,
// typically from their command file in src/app/commands/:
//
//   const bool kSnap = fabcheck::inventory::RegisterSnapshotReader(
//       "doctor", [](const fabcheck::sys::SysRoot& root) { (void)checks::ReadEvidence(root); });
//
// Whatever that function reads, lists or resolves lands in the capture;
// non-file data (netlink answers) goes in with root.RecordMeta(name, text)
// and is read back offline with root.ReadMeta(name).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/inventory.h"
#include "sys/sysroot.h"

namespace fabcheck::inventory {

using SnapshotReader = std::function<void(const sys::SysRoot& root)>;

// Adds a reader run by every snapshot after the inventory readers, in
// registration order. Returns true (for static registration).
bool RegisterSnapshotReader(std::string name, SnapshotReader reader);
std::vector<std::string> SnapshotReaderNames();

struct SnapshotResult {
  model::Inventory inventory;  // what the inventory readers saw while recording
  std::string info_json;       // the capture's /fabcheck/capture.json
};

// Records the inventory and every registered reader on `root` (normally
// SysRoot::Live(); a directory root works too, for tests) and writes the
// capture to `output_path`. The info names host, kernel, time (UTC) and the
// fabcheck version.
Result<SnapshotResult> TakeSnapshot(const sys::SysRoot& root, const std::string& output_path,
                                    const std::string& fabcheck_version);

}  // namespace fabcheck::inventory
