#include "base/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/strings.h"

namespace fabcheck {
namespace {

bool IsPowerOfTwo(uint64_t v) { return v && !(v & (v - 1)); }

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  std::string_view s = Trim(text);
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) ++digits;
  auto number = ParseDouble(s.substr(0, digits));
  if (!number || *number < 0) {
    return InvalidArgumentError("invalid size '" + std::string(text) + "' (use a byte count such as 65536, 64K, 8M or 1G)");
  }
  std::string suffix = ToLower(Trim(s.substr(digits)));
  uint64_t multiplier = 1;
  if (suffix.empty() || suffix == "b") multiplier = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") multiplier = 1ull << 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") multiplier = 1ull << 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") multiplier = 1ull << 30;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") multiplier = 1ull << 40;
  else return InvalidArgumentError("invalid size suffix in '" + std::string(text) + "' (use K, M, G or T; binary multiples)");
  double bytes = *number * static_cast<double>(multiplier);
  if (bytes > 1.8e19 || bytes != std::floor(bytes)) {
    return InvalidArgumentError("size '" + std::string(text) + "' is not a whole number of bytes that fits in 64 bits");
  }
  return static_cast<uint64_t>(bytes);
}

Result<std::vector<uint64_t>> ParseSizeList(std::string_view text) {
  std::vector<uint64_t> sizes;
  std::string_view s = Trim(text);
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    ASSIGN_OR_RETURN(uint64_t low, ParseSize(s.substr(0, colon)));
    ASSIGN_OR_RETURN(uint64_t high, ParseSize(s.substr(colon + 1)));
    if (!IsPowerOfTwo(low) || !IsPowerOfTwo(high) || low > high) {
      return InvalidArgumentError("invalid size range '" + std::string(text) +
                                  "' (use LOW:HIGH with powers of two, LOW <= HIGH, e.g. 2:8M)");
    }
    for (uint64_t v = low; v <= high && v != 0; v <<= 1) sizes.push_back(v);
    return sizes;
  }
  for (const std::string& part : Split(s, ',', /*skip_empty=*/true)) {
    ASSIGN_OR_RETURN(uint64_t v, ParseSize(part));
    sizes.push_back(v);
  }
  if (sizes.empty()) return InvalidArgumentError("empty size list (use e.g. 64K, 1K,4K or 2:8M)");
  return sizes;
}

Result<double> ParseDurationSeconds(std::string_view text) {
  std::string_view s = Trim(text);
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) ++digits;
  auto number = ParseDouble(s.substr(0, digits));
  std::string suffix = ToLower(Trim(s.substr(digits)));
  double scale = 0;
  if (suffix.empty() || suffix == "s") scale = 1;
  else if (suffix == "ms") scale = 1e-3;
  else if (suffix == "us") scale = 1e-6;
  else if (suffix == "m" || suffix == "min") scale = 60;
  else if (suffix == "h") scale = 3600;
  if (!number || scale == 0 || *number < 0) {
    return InvalidArgumentError("invalid duration '" + std::string(text) + "' (use e.g. 10, 10s, 500ms or 2m)");
  }
  return *number * scale;
}

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  // CPU numbers below 8,192, the largest NR_CPUS a Linux kernel is built
  // with (x86-64 MAXSMP; other architectures stop at or below it), so a
  // cpulist from sysfs never goes further. Each range is marked once in a
  // bitmap, and the ranges' total is capped: a list repeating "0-8191"
  // (a hostile capture) stays bounded in memory and time.
  constexpr long long kMaxCpu = 8191;
  constexpr long long kMaxTotal = 4 * (kMaxCpu + 1);
  std::vector<bool> seen;
  long long total = 0;
  for (const std::string& part : Split(Trim(text), ',', /*skip_empty=*/true)) {
    auto dash = part.find('-');
    auto first = ParseInt(part.substr(0, dash));
    auto last = dash == std::string::npos ? first : ParseInt(part.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first) {
      return InvalidArgumentError("invalid CPU list '" + std::string(text).substr(0, 200) +
                                  "' (expected ranges such as 0-47,96-143)");
    }
    if (*last > kMaxCpu) {
      return InvalidArgumentError("invalid CPU list '" + std::string(text).substr(0, 200) + "': CPU " +
                                  std::to_string(*last) + " is beyond the 8192 CPUs a Linux kernel can have");
    }
    total += *last - *first + 1;
    if (total > kMaxTotal) {
      return InvalidArgumentError("invalid CPU list '" + std::string(text).substr(0, 200) + "...': its ranges cover more than " +
                                  std::to_string(kMaxTotal) + " CPUs");
    }
    if (seen.size() <= static_cast<size_t>(*last)) seen.resize(static_cast<size_t>(*last) + 1);
    for (long long c = *first; c <= *last; ++c) seen[static_cast<size_t>(c)] = true;
  }
  std::vector<int> cpus;
  for (size_t c = 0; c < seen.size(); ++c) {
    if (seen[c]) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  uint64_t value = bytes;
  while (unit < 4 && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  if (value < 1024 || unit == 4) return fmt::format("{} {}", value, kUnits[unit]);
  double v = static_cast<double>(bytes);
  unit = 0;
  while (unit < 4 && v >= 1024) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string FormatDuration(double seconds) {
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} us", seconds * 1e6);
}

Result<IbRate> ParseIbRate(std::string_view text) {
  std::string_view s = Trim(text);
  IbRate rate;
  size_t space = s.find(' ');
  auto number = ParseDouble(s.substr(0, space));
  if (!number || *number < 0 || space == std::string_view::npos || s.substr(space + 1, 6) != "Gb/sec") {
    return InvalidArgumentError("unrecognised port rate '" + std::string(text) + "' (expected e.g. '400 Gb/sec (4X NDR)')");
  }
  rate.gbps = *number;
  auto open = s.find('(');
  auto close = s.find(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    std::string_view inner = s.substr(open + 1, close - open - 1);  // "4X NDR" or "4X"
    auto x = inner.find('X');
    if (x != std::string_view::npos) {
      if (auto width = ParseInt(inner.substr(0, x))) rate.width = static_cast<int>(*width);
      rate.speed_name = std::string(Trim(inner.substr(x + 1)));
    }
  }
  return rate;
}

Result<double> ParsePcieSpeedGts(std::string_view text) {
  std::string_view s = Trim(text);
  auto gt = s.find("GT/s");
  if (gt == std::string_view::npos) {
    return InvalidArgumentError("unrecognised PCIe link speed '" + std::string(text) + "'");
  }
  auto number = ParseDouble(s.substr(0, gt));
  if (!number || *number <= 0) {
    return InvalidArgumentError("unrecognised PCIe link speed '" + std::string(text) + "'");
  }
  return *number;
}

int PcieGeneration(double gts) {
  if (gts >= 64) return 6;
  if (gts >= 32) return 5;
  if (gts >= 16) return 4;
  if (gts >= 8) return 3;
  if (gts >= 5) return 2;
  if (gts >= 2.5) return 1;
  return 0;
}

double PcieLinkGbps(double gts, int width) {
  double efficiency = 128.0 / 130.0;
  int generation = PcieGeneration(gts);
  if (generation <= 2) efficiency = 8.0 / 10.0;
  if (generation >= 6) efficiency = 242.0 / 256.0;
  return gts * width * efficiency;
}

}  // namespace fabcheck
