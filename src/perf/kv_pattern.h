// What every transport of the KV-cache pattern (test kKv) shares: the source
// pages the prefill side gathers from, where page k of the run comes from and
// lands, and the decode side's page table (pure logic; unit-tested).
//
// Page k is numbered across the run: request r, layer l, page i of the layer
// is k = (r * layers + l) * pages_per_layer + i. It lands on destination page
// table[k % pool_pages] and is read from source page KvSourcePage(k, n), a
// shuffled spread as well (a paged cache's blocks are scattered on both ends).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "perf/transport.h"

namespace fabcheck::perf {

// The prefill side keeps at most this much of source pages (at least one page).
inline constexpr uint64_t kKvSourceBytes = 64ull << 20;
uint64_t KvSourcePages(const TestParams& p);
inline uint64_t KvSourcePage(uint64_t k, uint64_t source_pages) { return k * 2654435761u % source_pages; }
inline uint64_t KvPageNumber(uint64_t request, uint64_t layer, uint64_t page, const KvPattern& kv) {
  return (request * static_cast<uint64_t>(kv.layers) + layer) * kv.pages_per_layer + page;
}

// The decode side's page table: the pool's pages in a random order, as a
// paged KV cache's block table after some churn.
std::vector<uint32_t> ShuffledPageTable(uint64_t pool_pages);
// The table out of the "kv.page_table" reply ({"pages": [...]}): DataLoss
// naming the peer when it is malformed, has another size than asked for, or
// points outside the pool.
Result<std::vector<uint32_t>> ParsePageTable(const nlohmann::json& reply, uint64_t pool_pages, std::string_view peer);

}  // namespace fabcheck::perf
