#include "telemetry/port_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"
#include "sys/dir_files.h"
#include "sys/infiniband.h"
#include "telemetry/counter_catalog.h"

namespace fabcheck::telemetry {
namespace {

constexpr std::string_view kNoPma = "N/A (no PMA)";

void AddError(PortReading& reading, std::string source, const std::string& path, const Status& status) {
  reading.errors.push_back({std::move(source), ReasonFor(status), path, status.message()});
}

void AddGarbage(PortReading& reading, std::string source, const std::string& path, std::string_view content) {
  std::string shown(content.substr(0, 40));
  reading.errors.push_back({std::move(source), "garbage", path,
                            fmt::format("unexpected content in {}: \"{}\" (expected {})", path, shown,
                                        source == "port" ? "the kernel's format" : "an unsigned decimal")});
}

// Reads every file of a counter directory; appends to `out`. Returns false
// when the directory does not exist (rxe has no counters/).
// `absent` (with kept handles) remembers a directory that does not exist, so
// that it is looked for again only on a re-list: counters_ext/ exists on no
// current kernel, counters/ on no rxe port, and looking for them walked the
// whole path (~14 lstat and a readlink) per port and scrape.
bool ReadCounterDir(const sys::SysRoot& root, PortReading& reading, const std::string& dir,
                    const std::string& source, std::vector<CounterValue>& out,
                    std::unique_ptr<sys::AttributeDirectory>* handle, bool relist, bool* absent) {
  if (absent != nullptr && *absent && !relist) return false;
  auto files = ReadAttributeDir(root, dir, {}, handle, relist);
  if (absent != nullptr) *absent = !files.ok() && files.status().code() == StatusCode::kNotFound;
  if (!files.ok()) {
    if (files.status().code() == StatusCode::kNotFound) return false;
    AddError(reading, source, dir, files.status());
    return true;
  }
  out.reserve(files->size());
  for (auto& file : *files) {
    // The path is only built for an error: ~1,000 files per scrape.
    auto path = [&] { return dir + "/" + file.name; };
    if (!file.status.ok()) {
      AddError(reading, source, path(), file.status);
      continue;
    }
    std::string_view text = Trim(file.content);
    if (text.find(kNoPma) != std::string_view::npos) {
      ++reading.skipped_no_pma;
      continue;
    }
    auto value = ParseUint(text);
    if (!value) {
      AddGarbage(reading, source, path(), text);
      continue;
    }
    if (source == "hw_counters" && file.name == "lifespan") {
      reading.lifespan_ms = *value;
      continue;
    }
    out.push_back({std::move(file.name), *value, false});
  }
  return true;
}

// Applies the PMA semantics: data counters count octets/4; in the legacy
// table the fixed-width counters saturate at 2^bits-1 instead of wrapping.
void ApplyPmaSemantics(PortReading& reading) {
  // The extended table (mlx5 and most current HCAs) is the one with the
  // unicast/multicast files; the NOIETF variant has 64-bit data counters too
  // but no such files, and then a 32-bit-looking maximum is ambiguous, so
  // saturation is only claimed for the exact 2^32-1 value.
  reading.extended_width = std::any_of(reading.counters.begin(), reading.counters.end(),
                                       [](const CounterValue& c) { return c.file == "unicast_xmit_packets"; });
  for (CounterValue& counter : reading.counters) {
    const CounterSpec* spec = FindPmaCounter(counter.file);
    if (spec == nullptr) continue;
    bool data_or_packets = spec->bits == 32 && spec->file != "port_xmit_wait";
    int bits = (data_or_packets && reading.extended_width) ? 0 : spec->bits;
    if (bits > 0 && bits < 64) counter.saturated = counter.value == ((uint64_t{1} << bits) - 1);
    if (spec->octets_div4) counter.value *= 4;
  }
}

}  // namespace

std::string ReasonFor(const Status& status) {
  if (status.code() == StatusCode::kNotFound) return "vanished";
  if (status.message().find("ENODEV") != std::string::npos) return "vanished";
  return "unreadable";
}


Result<std::vector<int>> ListPorts(const sys::SysRoot& root, const std::string& device) {
  return sys::infiniband::ListPorts(root, device);
}

Result<std::vector<int>> ListPorts(const sys::SysRoot& root, const std::string& device, std::string* resolved) {
  const std::string dir = sys::infiniband::PortsDir(device);
  if (resolved == nullptr || root.recording()) return ListPorts(root, device);
  if (!resolved->empty()) {
    // A resolved path has no links left: listing it cannot leave the root.
    if (auto names = sys::ListResolvedDirectory(root, *resolved); names.ok()) return sys::infiniband::PortNumbers(*names);
    resolved->clear();  // moved or gone: walk the path again
  }
  ASSIGN_OR_RETURN(std::string path, root.Resolve(dir));
  ASSIGN_OR_RETURN(auto names, root.ListDir(path));
  *resolved = path;
  return sys::infiniband::PortNumbers(names);
}

Result<std::vector<sys::DirFile>> ReadAttributeDir(const sys::SysRoot& root, const std::string& dir,
                                                   const std::vector<std::string>& only,
                                                   std::unique_ptr<sys::AttributeDirectory>* handle, bool relist) {
  if (handle == nullptr) return sys::ReadDirectoryFiles(root, dir, only);
  if (!*handle) {
    auto opened = sys::AttributeDirectory::Open(root, dir, only);
    if (!opened.ok()) return opened.status();
    *handle = std::move(*opened);
    relist = false;
  }
  auto files = (*handle)->ReadAll(relist);
  if (!files.ok()) {
    handle->reset();
    return files;
  }
  for (const auto& file : *files) {
    if (!file.status.ok() && ReasonFor(file.status) == "vanished") {
      handle->reset();  // the device went away or was re-created: resolve again next time
      break;
    }
  }
  return files;
}

PortReading ReadPort(const sys::SysRoot& root, const std::string& device, int port, PortHandles* handles,
                     bool relist) {
  PortReading reading;
  reading.device = device;
  reading.port = port;
  const sys::infiniband::PortFiles port_files = sys::infiniband::Port(device, port);
  const std::string& dir = port_files.dir();

  // One resolution of the port directory per scrape, then openat() per file.
  static const std::vector<std::string> kPortFiles = {"link_layer", "phys_state", "rate", "state"};
  auto files = ReadAttributeDir(root, dir, kPortFiles, handles ? &handles->port : nullptr, relist);
  if (!files.ok()) {
    AddError(reading, "port", dir, files.status());
    // The whole port (or device) went away, or cannot be listed: nothing more to read.
    reading.present = false;
    return reading;
  }
  for (const auto& file : *files) {
    std::string path = dir + "/" + file.name;
    if (!file.status.ok()) {
      AddError(reading, "port", path, file.status);
      continue;
    }
    std::string text(Trim(file.content));
    if (file.name == "state" || file.name == "phys_state") {
      auto state = sys::infiniband::ParsePortState(text);
      if (!state) {
        AddGarbage(reading, "port", path, text);
      } else if (file.name == "state") {
        reading.state_id = state->code;
        reading.state = state->name;
      } else {
        reading.phys_state_id = state->code;
        reading.phys_state = state->name;
      }
    } else if (file.name == "rate") {
      auto parsed = ParseIbRate(text);
      if (parsed.ok()) {
        // Gb/s x 125000000 = bytes/s, as node_exporter computes it.
        reading.rate_bytes_per_second = parsed->gbps * 125000000.0;
        reading.width = parsed->width;
        reading.speed_name = parsed->speed_name;
      } else {
        AddGarbage(reading, "port", path, text);
      }
    } else if (file.name == "link_layer") {
      reading.link_layer = text;
    }
  }

  // rxe has no PMA and so no counters/ directory: not an error.
  reading.has_counters_dir = ReadCounterDir(root, reading, port_files.Counters(), "counters", reading.counters,
                                            handles ? &handles->counters : nullptr, relist,
                                            handles ? &handles->counters_absent : nullptr);
  if (reading.has_counters_dir) ApplyPmaSemantics(reading);
  // Kernels before v4.5 put the 64-bit PortCountersExtended values here; absent on current kernels.
  ReadCounterDir(root, reading, port_files.CountersExt(), "counters_ext", reading.counters_ext,
                 handles ? &handles->counters_ext : nullptr, relist,
                 handles ? &handles->counters_ext_absent : nullptr);
  for (CounterValue& counter : reading.counters_ext) {
    const CounterSpec* spec = FindExtCounter(counter.file);
    if (spec != nullptr && spec->octets_div4) counter.value *= 4;
  }
  ReadCounterDir(root, reading, port_files.HwCounters(), "hw_counters", reading.hw_counters,
                 handles ? &handles->hw_counters : nullptr, relist,
                 handles ? &handles->hw_counters_absent : nullptr);
  return reading;
}

}  // namespace fabcheck::telemetry
