// What `fabcheck diagnose` reads as counters over time: saved /metrics texts
// (Prometheus exposition from anywhere) and ladder counter samples (JSON).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "diagnose/inputs.h"
#include "fabcheck/model/ladder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)fabcheck::diagnose::LooksLikeMetrics(text.substr(0, 4096));
  (void)fabcheck::diagnose::ParseMetricsText(text, 1.7e9);
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    // The loader catches the JSON library's type errors the same way.
    try {
      (void)j.get<fabcheck::model::CounterSample>();
    } catch (const nlohmann::json::exception&) {
    }
  }
  return 0;
}
