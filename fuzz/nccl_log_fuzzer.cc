// NCCL and launcher logs as users paste them: any bytes, any line lengths.
// The parsed summary must also serialise (non-UTF-8 included).
#include <cstdint>
#include <string_view>

#include "base/json_text.h"
#include "logs/nccl_log.h"
#include "report/nccl_log_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fabcheck::logs::NcclLogParser parser;
  // Two "files": the same host and rank may appear in several.
  size_t half = size / 2;
  parser.AddText(text.substr(0, half), "rank0.log");
  parser.AddText(text.substr(half), "rank1.log");
  fabcheck::model::NcclLogSummary summary = parser.Finish();
  (void)fabcheck::report::FormatNcclLogSummary(summary);
  (void)fabcheck::ToJsonText(nlohmann::json(summary), 2);
  return 0;
}
