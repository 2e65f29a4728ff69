#include "telemetry/port_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"
#include "telemetry/counter_catalog.h"

namespace fabcheck::telemetry {
namespace {

constexpr std::string_view kNoPma = "N/A (no PMA)";

// "4: ACTIVE" -> {4, "ACTIVE"}.
bool ParseNumberedName(std::string_view text, int& id, std::string& name) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  auto number = ParseInt(Trim(text.substr(0, colon)));
  if (!number || *number < 0 || *number > 255) return false;
  id = static_cast<int>(*number);
  name = std::string(Trim(text.substr(colon + 1)));
  return true;
}

void AddError(PortReading& reading, std::string source, const std::string& path, const Status& status) {
  reading.errors.push_back({std::move(source), ReasonFor(status), path, status.message()});
}

void AddGarbage(PortReading& reading, std::string source, const std::string& path, std::string_view content) {
  std::string shown(content.substr(0, 40));
  reading.errors.push_back({std::move(source), "garbage", path,
                            fmt::format("unexpected content in {}: \"{}\" (expected {})", path, shown,
                                        source == "port" ? "the kernel's format" : "an unsigned decimal")});
}

// Reads every file of a counter directory; appends to `out`.
void ReadCounterDir(const sys::SysRoot& root, PortReading& reading, const std::string& dir,
                    const std::string& source, std::vector<CounterValue>& out) {
  auto names = root.ListDir(dir);
  if (!names.ok()) {
    AddError(reading, source, dir, names.status());
    return;
  }
  out.reserve(names->size());
  for (const std::string& name : *names) {
    std::string path = dir + "/" + name;
    auto content = root.ReadFile(path);
    if (!content.ok()) {
      // A directory entry (hw_counters may hold subdirectories on new kernels) is not a counter.
      if (root.IsDirectory(path)) continue;
      AddError(reading, source, path, content.status());
      continue;
    }
    std::string_view text = Trim(*content);
    if (text.find(kNoPma) != std::string_view::npos) {
      ++reading.skipped_no_pma;
      continue;
    }
    auto value = ParseUint(text);
    if (!value) {
      AddGarbage(reading, source, path, text);
      continue;
    }
    if (source == "hw_counters" && name == "lifespan") {
      reading.lifespan_ms = *value;
      continue;
    }
    out.push_back({name, *value, false});
  }
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
  ASSIGN_OR_RETURN(auto names, root.ListDir("/sys/class/infiniband/" + device + "/ports"));
  std::vector<int> ports;
  for (const auto& name : names) {
    auto n = ParseInt(name);
    if (n && *n > 0 && *n < 256) ports.push_back(static_cast<int>(*n));
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

PortReading ReadPort(const sys::SysRoot& root, const std::string& device, int port) {
  PortReading reading;
  reading.device = device;
  reading.port = port;
  const std::string dir = fmt::format("/sys/class/infiniband/{}/ports/{}", device, port);

  auto read_attr = [&](const char* name) -> std::optional<std::string> {
    std::string path = dir + "/" + name;
    auto value = root.ReadAttribute(path);
    if (!value.ok()) {
      AddError(reading, "port", path, value.status());
      return std::nullopt;
    }
    return *value;
  };

  if (auto state = read_attr("state")) {
    int id = 0;
    if (ParseNumberedName(*state, id, reading.state)) {
      reading.state_id = id;
    } else {
      AddGarbage(reading, "port", dir + "/state", *state);
    }
  }
  if (!reading.errors.empty() && reading.errors.back().reason == "vanished" && !root.IsDirectory(dir)) {
    reading.present = false;  // the whole port (or device) went away: nothing more to read
    return reading;
  }
  if (auto phys = read_attr("phys_state")) {
    int id = 0;
    if (ParseNumberedName(*phys, id, reading.phys_state)) {
      reading.phys_state_id = id;
    } else {
      AddGarbage(reading, "port", dir + "/phys_state", *phys);
    }
  }
  if (auto rate = read_attr("rate")) {
    auto parsed = ParseIbRate(*rate);
    if (parsed.ok()) {
      // Gb/s x 125000000 = bytes/s, as node_exporter computes it.
      reading.rate_bytes_per_second = parsed->gbps * 125000000.0;
      reading.width = parsed->width;
      reading.speed_name = parsed->speed_name;
    } else {
      AddGarbage(reading, "port", dir + "/rate", *rate);
    }
  }
  if (auto layer = read_attr("link_layer")) reading.link_layer = *layer;

  // rxe has no PMA and so no counters/ directory: not an error.
  if (root.IsDirectory(dir + "/counters")) {
    reading.has_counters_dir = true;
    ReadCounterDir(root, reading, dir + "/counters", "counters", reading.counters);
    ApplyPmaSemantics(reading);
  }
  if (root.IsDirectory(dir + "/hw_counters")) {
    ReadCounterDir(root, reading, dir + "/hw_counters", "hw_counters", reading.hw_counters);
  }
  return reading;
}

}  // namespace fabcheck::telemetry
