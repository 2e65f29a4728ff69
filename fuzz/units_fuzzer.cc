// sysfs attribute values and the units fabcheck parses from them (port rates,
// PCIe speeds, CPU lists, sizes, durations, integers, decimals).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/strings.h"
#include "base/units.h"

using namespace fabcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto rate = ParseIbRate(text); rate.ok()) {
    if (!std::isfinite(rate->gbps) || rate->gbps < 0) std::abort();
  }
  if (auto gts = ParsePcieSpeedGts(text); gts.ok()) {
    if (!std::isfinite(*gts) || *gts <= 0) std::abort();
    (void)PcieLinkGbps(*gts, PcieGeneration(*gts));
  }
  if (auto cpus = ParseCpuList(text); cpus.ok()) {
    // What is printed parses back to the same list.
    auto again = ParseCpuList(FormatCpuList(*cpus));
    if (!again.ok() || *again != *cpus) std::abort();
  }
  if (auto bytes = ParseSize(text); bytes.ok()) (void)FormatSize(*bytes);
  (void)ParseSizeList(text);
  if (auto seconds = ParseDurationSeconds(text); seconds.ok()) {
    if (!std::isfinite(*seconds) || *seconds < 0) std::abort();
    (void)FormatDuration(*seconds);
  }
  (void)ParseInt(text);
  (void)ParseInt(text, 16);
  (void)ParseUint(text, 16);
  if (auto d = ParseDouble(text); d && !std::isfinite(*d)) std::abort();
  (void)Split(text, ' ');
  (void)Trim(text);
  return 0;
}
