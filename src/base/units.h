// Parsing and formatting of the units fabcheck meets: message sizes, durations,
// CPU lists, IB port rates and PCIe link speeds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabcheck {

// "65536", "64K", "64k", "8M", "1G", "2KiB", "4096B" -> bytes (binary multiples, as perftest).
Result<uint64_t> ParseSize(std::string_view text);
// "2:8M" -> every power of two from 2 to 8 MiB; "4K" -> {4096}; "1K,4K,1M" -> that list.
// Both ends of a range must be powers of two.
Result<std::vector<uint64_t>> ParseSizeList(std::string_view text);
// "10", "10s", "500ms", "2m", "1.5s", "250us" -> seconds.
Result<double> ParseDurationSeconds(std::string_view text);
// "0-47,96-143" -> {0..47, 96..143}. Empty text -> empty list.
Result<std::vector<int>> ParseCpuList(std::string_view text);
// {0,1,2,5} -> "0-2,5".
std::string FormatCpuList(const std::vector<int>& cpus);

// "64 KiB", "8 MiB", "512 B": exact binary units when the size divides evenly.
std::string FormatSize(uint64_t bytes);
// "1.50 s", "250 ms", "12.3 us".
std::string FormatDuration(double seconds);

// An InfiniBand port rate as sysfs prints it: "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)",
// or without a speed name on old kernels: "10 Gb/sec (4X)".
struct IbRate {
  double gbps = 0;         // 400
  int width = 0;           // 4 (0 when not printed)
  std::string speed_name;  // "NDR" (empty when not printed)
};
Result<IbRate> ParseIbRate(std::string_view text);

// A PCIe link speed as sysfs prints it: "32.0 GT/s PCIe", "8 GT/s", "Unknown speed".
Result<double> ParsePcieSpeedGts(std::string_view text);
// 2.5 -> 1, 5 -> 2, 8 -> 3, 16 -> 4, 32 -> 5, 64 -> 6; 0 when unknown.
int PcieGeneration(double gts);
// Usable unidirectional bandwidth of a link in Gb/s after line encoding
// (8b/10b up to Gen2, 128b/130b from Gen3; Gen6 FLIT treated as 242/256).
double PcieLinkGbps(double gts, int width);

}  // namespace fabcheck
