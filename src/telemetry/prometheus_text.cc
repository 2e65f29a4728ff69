#include "telemetry/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>

namespace fabcheck::telemetry {
namespace {

void AppendEscaped(std::string& out, std::string_view text, bool quote) {
  // Nearly every value needs no escape: append it whole (the per-character
  // loop was the renderer's hottest function in perf).
  constexpr std::string_view kLabelSpecial = "\\\n\"";
  constexpr std::string_view kHelpSpecial = "\\\n";
  if (text.find_first_of(quote ? kLabelSpecial : kHelpSpecial) == std::string_view::npos) {
    out.append(text);
    return;
  }
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '"':
        if (quote) {
          out += "\\\"";
        } else {
          out.push_back(c);
        }
        break;
      default: out.push_back(c);
    }
  }
}

void AppendValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    // Exact below 2^53: print digits, which reads better than 1.8527668e+07.
    fmt::format_to(std::back_inserter(out), "{}", static_cast<long long>(value));
  } else {
    // Shortest representation that round-trips.
    fmt::format_to(std::back_inserter(out), "{}", value);
  }
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  AppendEscaped(out, value, true);
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  AppendEscaped(out, help, false);
  return out;
}

std::string FormatSampleValue(double value) {
  std::string out;
  AppendValue(out, value);
  return out;
}

void RenderPrometheusText(const MetricSet& metrics, std::string& out) {
  for (const auto& family : metrics.families()) {
    if (family->samples.empty()) continue;
    out += "# HELP ";
    out += family->name;
    out.push_back(' ');
    AppendEscaped(out, family->help, false);
    out += "\n# TYPE ";
    out += family->name;
    out += family->type == MetricType::kCounter ? " counter\n" : " gauge\n";
    for (const Sample& sample : family->samples) {
      out += family->name;
      if (!sample.labels.empty()) {
        out.push_back('{');
        bool first = true;
        for (const auto& [name, value] : sample.labels) {
          if (!first) out.push_back(',');
          first = false;
          out += name;
          out += "=\"";
          AppendEscaped(out, value, true);
          out.push_back('"');
        }
        out.push_back('}');
      }
      out.push_back(' ');
      AppendValue(out, sample.value);
      out.push_back('\n');
    }
  }
}

std::string RenderPrometheusText(const MetricSet& metrics) {
  std::string out;
  out.reserve(metrics.SampleCount() * 96);
  RenderPrometheusText(metrics, out);
  return out;
}

}  // namespace fabcheck::telemetry
