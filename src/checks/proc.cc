#include "checks/proc.h"

#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::checks {

Result<Rlimit> ParseMemlockLimit(std::string_view limits_text) {
  // "Max locked memory         8388608              8388608              bytes"
  for (const auto& line : Split(limits_text, '\n')) {
    if (!StartsWith(line, "Max locked memory")) continue;
    auto fields = Split(Trim(std::string_view(line).substr(17)), ' ', /*skip_empty=*/true);
    if (fields.size() < 2) break;
    auto value = [](const std::string& f) -> std::optional<uint64_t> {
      if (f == "unlimited") return kRlimUnlimited;
      auto v = ParseUint(f);
      return v ? std::optional<uint64_t>(*v) : std::nullopt;
    };
    auto soft = value(fields[0]);
    auto hard = value(fields[1]);
    if (!soft || !hard) break;
    return Rlimit{*soft, *hard};
  }
  return DataLossError("no readable 'Max locked memory' row (expected: Max locked memory  <soft>  <hard>  bytes)");
}

std::string FormatLimit(uint64_t bytes) { return bytes == kRlimUnlimited ? "unlimited" : FormatSize(bytes); }

Result<uint64_t> ParseCapEff(std::string_view status_text) {
  for (const auto& line : Split(status_text, '\n')) {
    if (!StartsWith(line, "CapEff:")) continue;
    auto v = ParseUint(Trim(std::string_view(line).substr(7)), 16);
    if (v) return *v;
    break;
  }
  return DataLossError("no readable CapEff line (expected: CapEff:\\t<hex mask>)");
}

std::set<std::string> ParseModules(std::string_view modules_text) {
  std::set<std::string> names;
  for (const auto& line : Split(modules_text, '\n', /*skip_empty=*/true)) {
    auto space = line.find(' ');
    names.insert(line.substr(0, space));
  }
  return names;
}

std::optional<std::pair<int, int>> ParseKernelVersion(std::string_view release) {
  auto parts = Split(Trim(release), '.');
  if (parts.size() < 2) return std::nullopt;
  auto major = ParseInt(parts[0]);
  std::string minor_text;
  for (char c : parts[1]) {
    if (c < '0' || c > '9') break;
    minor_text += c;
  }
  auto minor = ParseInt(minor_text);
  if (!major || !minor) return std::nullopt;
  return std::make_pair(static_cast<int>(*major), static_cast<int>(*minor));
}

}  // namespace fabcheck::checks
