// Reading the files `fabcheck diagnose` is given into an Evidence: NCCL and
// framework logs (all parsed together), the exporter's /metrics text saved at
// several times, counter samples (fabcheck.ladder CounterSample JSON), perf /
// sweep / coll / doctor JSON, and ladder bundles (a directory with
// manifest.json). A directory without a manifest is read file by file. What
// cannot be read is recorded in Evidence::inputs with the reason; nothing
// here reads /sys or measures.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "diagnose/evidence.h"

namespace fabcheck::diagnose {

struct LoadOptions {
  double line_gbps = 0;  // --line-rate
};

// InvalidArgument when `paths` is empty; otherwise always an Evidence (its
// inputs say which files were read).
Result<Evidence> LoadEvidence(const std::vector<std::string>& paths, const LoadOptions& options);

// One saved /metrics text (Prometheus exposition format) as counter readings
// at `time` (used when the samples carry no timestamp). Unknown metrics are
// skipped. Exposed for tests.
struct MetricReading {
  std::string member, object, counter;
  uint64_t value = 0;
  double time = 0;
};
std::vector<MetricReading> ParseMetricsText(std::string_view text, double time);

// Whether a text looks like Prometheus exposition (rather than a log).
bool LooksLikeMetrics(std::string_view head);

}  // namespace fabcheck::diagnose
