// Renders a MetricSet in the Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/).
#pragma once

#include <string>
#include <string_view>

#include "telemetry/metrics.h"

namespace fabcheck::telemetry {

inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// Appends the whole set to `out` (families without samples are left out, as
// a HELP/TYPE header with no sample is noise to promtool and to readers).
void RenderPrometheusText(const MetricSet& metrics, std::string& out);
std::string RenderPrometheusText(const MetricSet& metrics);

// Escaping rules of the format: label values escape backslash, double quote
// and newline; HELP text escapes backslash and newline.
std::string EscapeLabelValue(std::string_view value);
std::string EscapeHelp(std::string_view help);
// A float as the format expects: integers without exponent while exact,
// "+Inf", "-Inf", "NaN".
std::string FormatSampleValue(double value);

}  // namespace fabcheck::telemetry
