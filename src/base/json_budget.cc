#include "base/json_budget.h"

#include <string>

namespace fabcheck {
namespace {

struct OverBudget {
  bool depth;  // else values
};

}  // namespace

Result<nlohmann::json> ParseJsonWithin(std::string_view text, std::string_view what, const JsonBudget& budget) {
  uint64_t values = 0;
  // The callback sees every event before its value is kept; throwing from it
  // unwinds the parser, which frees what it built so far.
  auto count = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (depth > budget.max_depth) throw OverBudget{true};
    if (event != nlohmann::json::parse_event_t::object_end && event != nlohmann::json::parse_event_t::array_end &&
        ++values > budget.max_values) {
      throw OverBudget{false};
    }
    return true;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), count, /*allow_exceptions=*/false);
    if (j.is_discarded()) return InvalidArgumentError(std::string(what) + " is not valid JSON");
    return j;
  } catch (const OverBudget& over) {
    return ResourceExhaustedError(
        std::string(what) + (over.depth ? " nests deeper than " + std::to_string(budget.max_depth) + " levels"
                                        : " holds more than " + std::to_string(budget.max_values) + " values") +
        ", over fabcheck's budget for this document; not a document fabcheck wrote (refusing it rather than "
        "filling memory)");
  }
}

}  // namespace fabcheck
