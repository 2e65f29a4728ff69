// Per-scrape readers of an RDMA port: state, rate and every counter file.
//
// Each file is read once per scrape; the collector derives all metrics from
// the returned values. A file that vanished, cannot be read or holds garbage
// becomes a ReadError next to the values that could be read, never a failed
// port: one bad counter must not hide the others (procfs drops the whole
// device in that case, rdma-facts §5.2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sys/dir_files.h"
#include "sys/sysroot.h"

namespace fabcheck::telemetry {

struct ReadError {
  std::string source;   // "port", "counters", "hw_counters", "netdev", "ethtool", "pod_resources", ...
  std::string reason;   // "vanished", "unreadable", "garbage"
  std::string path;     // as on the node
  std::string message;  // the full error, for logs
};

struct CounterValue {
  std::string file;      // name of the file under counters/ or hw_counters/
  uint64_t value = 0;    // already scaled (data counters x4 -> bytes)
  bool saturated = false;  // a legacy fixed-width PMA counter stuck at its maximum
};

struct PortReading {
  std::string device;
  int port = 0;
  bool present = true;  // false when the port directory vanished
  std::optional<int> state_id;       // "4: ACTIVE" -> 4
  std::string state;                 // "ACTIVE"
  std::optional<int> phys_state_id;  // "5: LinkUp" -> 5
  std::string phys_state;            // "LinkUp"
  std::optional<double> rate_bytes_per_second;
  int width = 0;           // lanes, 0 when not printed
  std::string speed_name;  // "NDR", "" when not printed
  std::string link_layer;  // "InfiniBand", "Ethernet"
  bool has_counters_dir = false;
  bool extended_width = false;  // PortCountersExtended (64-bit data counters)
  std::vector<CounterValue> counters;     // counters/, in file-name order
  std::vector<CounterValue> counters_ext;  // counters_ext/ (kernels before v4.5), data x4
  std::vector<CounterValue> hw_counters;  // hw_counters/ without lifespan
  std::optional<uint64_t> lifespan_ms;
  int skipped_no_pma = 0;  // files reading "N/A (no PMA)" (old kernels), skipped as procfs does
  std::vector<ReadError> errors;
};

// Open directories of one port, kept from scrape to scrape (see
// sys::AttributeDirectory): each file is then one pread() per scrape.
struct PortHandles {
  std::unique_ptr<sys::AttributeDirectory> port;
  std::unique_ptr<sys::AttributeDirectory> counters;
  std::unique_ptr<sys::AttributeDirectory> counters_ext;
  std::unique_ptr<sys::AttributeDirectory> hw_counters;
  std::unique_ptr<sys::AttributeDirectory> netdev;
  std::string netdev_name;  // what `netdev` was opened for
  // Directories found missing, looked for again on the next re-list only.
  bool counters_absent = false;
  bool counters_ext_absent = false;
  bool hw_counters_absent = false;
};

// Reads the port's directory (sys/infiniband.h). With `handles`, reads
// through (and fills) them; `relist` lists the directories again to see
// counters that appeared. Without, every file is opened for this read only.
PortReading ReadPort(const sys::SysRoot& root, const std::string& device, int port, PortHandles* handles = nullptr,
                     bool relist = false);

// Reads `dir` through a kept handle (opened on first use, dropped when a file
// vanished so the next read resolves the directory again), or directly.
Result<std::vector<sys::DirFile>> ReadAttributeDir(const sys::SysRoot& root, const std::string& dir,
                                                   const std::vector<std::string>& only,
                                                   std::unique_ptr<sys::AttributeDirectory>* handle, bool relist);

// The ports of a device ("1", "2"...), numerically sorted; non-numeric names skipped.
Result<std::vector<int>> ListPorts(const sys::SysRoot& root, const std::string& device);
// The same through the directory resolved by an earlier call (`*resolved`, a
// path inside the root, filled on success): listed without walking the class
// link again while the device stays where it was. Not on a recording root.
Result<std::vector<int>> ListPorts(const sys::SysRoot& root, const std::string& device, std::string* resolved);

// Classifies a read failure: "vanished" (ENOENT/ENODEV), "unreadable" (anything else).
std::string ReasonFor(const Status& status);

}  // namespace fabcheck::telemetry
