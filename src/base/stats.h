// Statistics used across the ladder: percentiles for latency tails, and the
// robust centre and spread (median, MAD) that sweep uses to find outliers.
#pragma once

#include <optional>
#include <vector>

namespace fabcheck::stats {

// All functions accept unsorted input unless their name says Sorted, and
// return nullopt (never NaN) for an empty input.
std::optional<double> Mean(const std::vector<double>& values);
// Sample standard deviation (n - 1); 0 for a single value.
std::optional<double> StdDev(const std::vector<double>& values);
std::optional<double> Median(std::vector<double> values);
// Median absolute deviation from the median (unscaled).
std::optional<double> Mad(const std::vector<double>& values);
// MAD scaled by 1.4826 so it estimates the standard deviation of normal data.
std::optional<double> ScaledMad(const std::vector<double>& values);

// Nearest-rank percentile of sorted values: the smallest value such that at
// least p (0..1] of the values are <= it. p = 0 gives the minimum.
std::optional<double> PercentileSorted(const std::vector<double>& sorted, double p);
std::optional<double> Percentile(std::vector<double> values, double p);

// How many scaled MADs `value` lies from `median` (signed; 0 when spread is 0
// and value equals median, +-infinity when spread is 0 and it differs).
double RobustZ(double value, double median, double scaled_mad);

struct Summary {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0, median = 0;
  double p90 = 0, p99 = 0, p999 = 0;
};
std::optional<Summary> Summarize(std::vector<double> values);

}  // namespace fabcheck::stats
