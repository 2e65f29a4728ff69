#include "perf/kv_pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "fabcheck/model/json_fields.h"

namespace fabcheck::perf {

uint64_t KvSourcePages(const TestParams& p) {
  uint64_t page = p.sizes.empty() ? 1 : std::max<uint64_t>(p.sizes[0], 1);
  return std::clamp<uint64_t>(kKvSourceBytes / page, 1, std::max<uint64_t>(p.kv.pool_pages, 1));
}

std::vector<uint32_t> ShuffledPageTable(uint64_t pool_pages) {
  std::vector<uint32_t> table(pool_pages);
  std::iota(table.begin(), table.end(), 0u);
  std::shuffle(table.begin(), table.end(), std::mt19937_64(std::random_device{}()));
  return table;
}

Result<std::vector<uint32_t>> ParsePageTable(const nlohmann::json& reply, uint64_t pool_pages, std::string_view peer) {
  std::vector<uint32_t> table;
  try {
    table = model::json_fields::NumbersOr<uint32_t>(reply, "pages");
  } catch (const nlohmann::json::exception& e) {
    return DataLossError(fmt::format("{} during kv.page_table: {}", peer, model::json_fields::ExceptionMessage(e)));
  }
  if (table.size() != pool_pages) {
    return DataLossError(
        fmt::format("{} during kv.page_table: {} destination pages, {} asked for", peer, table.size(), pool_pages));
  }
  for (uint32_t d : table) {
    if (d >= pool_pages) {
      return DataLossError(fmt::format("{} during kv.page_table: destination page {} outside the pool of {} pages",
                                       peer, d, pool_pages));
    }
  }
  return table;
}

}  // namespace fabcheck::perf
