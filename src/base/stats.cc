#include "base/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace fabcheck::stats {

std::optional<double> Mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::optional<double> StdDev(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  if (values.size() == 1) return 0.0;
  double mean = *Mean(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

std::optional<double> Median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (values.size() % 2) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

std::optional<double> Mad(const std::vector<double>& values) {
  auto median = Median(values);
  if (!median) return std::nullopt;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - *median));
  return Median(std::move(deviations));
}

std::optional<double> ScaledMad(const std::vector<double>& values) {
  auto mad = Mad(values);
  if (!mad) return std::nullopt;
  return *mad * 1.4826;
}

std::optional<double> PercentileSorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::nullopt;
  if (p <= 0) return sorted.front();
  if (p >= 1) return sorted.back();
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::optional<double> Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return PercentileSorted(values, p);
}

double RobustZ(double value, double median, double scaled_mad) {
  double diff = value - median;
  if (scaled_mad > 0) return diff / scaled_mad;
  if (diff == 0) return 0;
  return diff > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

std::optional<Summary> Summarize(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  Summary s;
  s.count = values.size();
  s.min = values.front();
  s.max = values.back();
  s.mean = *Mean(values);
  s.stddev = *StdDev(values);
  s.median = *Median(values);
  s.p90 = *PercentileSorted(values, 0.90);
  s.p99 = *PercentileSorted(values, 0.99);
  s.p999 = *PercentileSorted(values, 0.999);
  return s;
}

}  // namespace fabcheck::stats
