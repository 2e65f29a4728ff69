#include "telemetry/metrics.h"

#include <algorithm>

namespace fabcheck::telemetry {

MetricFamily& MetricSet::Family(std::string_view name, std::string_view help, MetricType type) {
  auto it = index_.find(name);
  if (it != index_.end()) return *it->second;
  auto family = std::make_unique<MetricFamily>();
  family->name = std::string(name);
  family->help = std::string(help);
  family->type = type;
  MetricFamily* raw = family.get();
  families_.push_back(std::move(family));
  index_.emplace(raw->name, raw);
  return *raw;
}

const MetricFamily* MetricSet::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

const Sample* MetricSet::FindSample(std::string_view name, const Labels& match) const {
  const MetricFamily* family = Find(name);
  if (family == nullptr) return nullptr;
  for (const Sample& sample : family->samples) {
    bool all = std::all_of(match.begin(), match.end(), [&](const auto& want) {
      return std::find(sample.labels.begin(), sample.labels.end(), want) != sample.labels.end();
    });
    if (all) return &sample;
  }
  return nullptr;
}

size_t MetricSet::SampleCount() const {
  size_t n = 0;
  for (const auto& family : families_) n += family->samples.size();
  return n;
}

std::string SanitizeMetricFragment(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty()) out = "unnamed";
  return out;
}

}  // namespace fabcheck::telemetry
