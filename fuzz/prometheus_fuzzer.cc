// The Prometheus text the exporter writes, round-tripped through a parser of
// the exposition format 0.0.4: label values and HELP text come from outside
// (device, netdev and pod names, driver counter names), values are any double.
// Whatever they hold, every line must parse back to what was rendered.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/metrics.h"
#include "telemetry/prometheus_text.h"

using namespace fabcheck::telemetry;

namespace {

// Pulls length-prefixed pieces out of the input.
struct Input {
  std::string_view rest;
  std::string Take() {
    if (rest.empty()) return {};
    size_t n = static_cast<unsigned char>(rest[0]) % 24;
    rest.remove_prefix(1);
    n = std::min(n, rest.size());
    std::string out(rest.substr(0, n));
    rest.remove_prefix(n);
    return out;
  }
  double Value() {
    double v = 0;
    if (rest.size() >= sizeof v) {
      std::memcpy(&v, rest.data(), sizeof v);
      rest.remove_prefix(sizeof v);
    }
    return v;
  }
};

[[noreturn]] void Fail() { std::abort(); }

// Parses `name{a="x",b="y"} value` and checks it against the sample.
void CheckSample(std::string_view line, const std::string& name, const Sample& sample) {
  if (line.substr(0, name.size()) != name) Fail();
  size_t i = name.size();
  std::vector<std::pair<std::string, std::string>> labels;
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      size_t eq = line.find('=', i);
      if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') Fail();
      std::string key(line.substr(i, eq - i));
      std::string value;
      size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\n') Fail();
        if (line[j] == '\\') {
          if (++j >= line.size()) Fail();
          if (line[j] == 'n') value.push_back('\n');
          else if (line[j] == '\\' || line[j] == '"') value.push_back(line[j]);
          else Fail();
        } else {
          value.push_back(line[j]);
        }
      }
      if (j >= line.size()) Fail();
      labels.emplace_back(std::move(key), std::move(value));
      i = j + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) Fail();
    ++i;
  }
  if (labels != sample.labels) Fail();
  if (i >= line.size() || line[i] != ' ') Fail();
  std::string text(line.substr(i + 1));
  double value = text == "+Inf" ? INFINITY : text == "-Inf" ? -INFINITY : text == "NaN" ? NAN : std::strtod(text.c_str(), nullptr);
  if (std::isnan(sample.value) != std::isnan(value)) Fail();
  if (!std::isnan(value) && value != sample.value) Fail();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in{std::string_view(reinterpret_cast<const char*>(data), size)};
  MetricSet set;
  const char* kNames[] = {"fabcheck_port_rcv_data_bytes_total", "fabcheck_port_state", "fabcheck_info"};
  int families = 0;
  while (!in.rest.empty() && families < 16) {
    const char* name = kNames[families++ % 3];
    std::string help = in.Take();
    Labels labels;
    labels.emplace_back("device", in.Take());
    labels.emplace_back("pod", in.Take());
    labels.emplace_back(SanitizeMetricFragment(in.Take()) + "_x", in.Take());
    set.Add(name, help, name[std::strlen(name) - 1] == 'l' ? MetricType::kCounter : MetricType::kGauge,
            std::move(labels), in.Value());
  }
  std::string text = RenderPrometheusText(set);
  // Walk the text family by family, sample by sample.
  size_t pos = 0;
  auto next_line = [&]() -> std::string_view {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) Fail();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    return line;
  };
  for (const auto& family : set.families()) {
    if (family->samples.empty()) continue;
    std::string_view help = next_line();
    if (help.substr(0, 7 + family->name.size()) != "# HELP " + family->name) Fail();
    std::string_view type = next_line();
    if (type.substr(0, 7 + family->name.size()) != "# TYPE " + family->name) Fail();
    for (const Sample& sample : family->samples) CheckSample(next_line(), family->name, sample);
  }
  if (pos != text.size()) Fail();
  return 0;
}
