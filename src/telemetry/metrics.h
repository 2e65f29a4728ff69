// The metric model of the exporter: families of samples, built by the
// collector and rendered by prometheus_text.h.
//
// Kept apart from any wire format so tests can assert on values and so a
// second renderer (JSON, OpenMetrics) needs no collector change.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabcheck::telemetry {

// Prometheus has no "info" type: an _info metric is a gauge whose value is 1.
enum class MetricType { kGauge, kCounter };

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;  // full name, counters end in _total
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

// Families in first-use order; adding to an existing name appends samples.
class MetricSet {
 public:
  // The family `name`, created with `help` and `type` on first use.
  MetricFamily& Family(std::string_view name, std::string_view help, MetricType type);
  void Add(std::string_view name, std::string_view help, MetricType type, Labels labels, double value) {
    Family(name, help, type).samples.push_back({std::move(labels), value});
  }

  const std::vector<std::unique_ptr<MetricFamily>>& families() const { return families_; }
  // nullptr when absent.
  const MetricFamily* Find(std::string_view name) const;
  // The value of the sample of `name` whose labels include all of `match`;
  // nullptr when none.
  const Sample* FindSample(std::string_view name, const Labels& match) const;
  size_t SampleCount() const;

 private:
  std::vector<std::unique_ptr<MetricFamily>> families_;
  std::map<std::string, MetricFamily*, std::less<>> index_;
};

// Turns a driver or kernel name ("VL15_dropped", "rx_prio3_pause") into a
// metric-name fragment: lower case, every character outside [a-z0-9_] becomes
// '_', so an unexpected name from a new driver still yields a valid metric.
std::string SanitizeMetricFragment(std::string_view name);

}  // namespace fabcheck::telemetry
