#include "perf/verbs/kv_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "perf/verbs/plan.h"

namespace fabcheck::perf::verbs {

uint64_t KvMailboxBytes(int qps) { return RegionBytes(kKvMailboxSlot, qps); }

uint64_t KvRegionBytes(const TestParams& p, Role role) {
  uint64_t page = p.sizes.empty() ? 0 : p.sizes[0];
  uint64_t pages = role == Role::kServer ? p.kv.pool_pages : KvSourcePages(p);
  return KvMailboxBytes(p.streams) + pages * page;
}

KvSlotPlanner::KvSlotPlanner(const KvPattern& kv, const std::vector<uint32_t>& table, uint64_t source_pages,
                             int signal_interval)
    : kv_(kv),
      table_(&table),
      source_pages_(std::max<uint64_t>(source_pages, 1)),
      interval_(static_cast<uint64_t>(std::max(signal_interval, 1))) {}

void KvSlotPlanner::Start(uint64_t id) {
  request_ = id;
  layer_ = 0;
  page_ = 0;
  active_ = kv_.layers > 0;
}

KvWr KvSlotPlanner::Next() {
  KvWr w;
  w.seq = seq_++;
  w.layer = layer_;
  w.first_of_layer = page_ == 0;
  if (page_ < kv_.pages_per_layer) {
    const uint64_t k = KvPageNumber(request_, layer_, page_, kv_);
    w.kind = KvWr::Kind::kPage;
    w.remote_page = (*table_)[k % table_->size()];
    w.local_page = KvSourcePage(k, source_pages_);
    w.signalled = Signal(w.seq);
    ++page_;
    return w;
  }
  w.kind = KvWr::Kind::kNotify;
  w.imm = KvNotifyImm(request_, layer_);
  w.signalled = true;
  page_ = 0;
  if (++layer_ == static_cast<uint32_t>(kv_.layers)) active_ = false;
  return w;
}

KvWr KvSlotPlanner::End() {
  KvWr w;
  w.seq = seq_++;
  w.kind = KvWr::Kind::kEnd;
  w.imm = kKvEndImm;
  w.signalled = true;
  return w;
}

std::optional<std::string> CheckNotification(KvExpect& e, uint32_t imm, int layers) {
  if (imm & kKvEndImm) return fmt::format("an end-of-run marker {:#x} where a notification was expected", imm);
  const uint32_t request = KvImmRequest(imm), layer = KvImmLayer(imm);
  if (e.layer == 0) {
    // A new request: any id after the previous one of this slot (other slots take ids in between).
    if (layer != 0 || (e.started && request == e.request)) {
      return fmt::format("request {} layer {} where a new request's layer 0 was expected", request, layer);
    }
    e.request = request;
    e.started = true;
  } else if (request != e.request || layer != e.layer) {
    return fmt::format("request {} layer {} where request {} layer {} was expected", request, layer, e.request,
                       e.layer);
  }
  e.layer = layer + 1 == static_cast<uint32_t>(layers) ? 0 : layer + 1;
  return std::nullopt;
}

}  // namespace fabcheck::perf::verbs
