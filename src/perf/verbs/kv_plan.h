// The KV-cache pattern over verbs, planned (pure logic; unit-tested): which
// work requests one request slot (one RC QP) posts, in order, and which of
// them are signalled.
//
// Per request, for each layer: one RDMA WRITE per page, from its source page
// to its destination page in the decode side's pool (the page table's
// offset: scattered, never contiguous), then one small RDMA WRITE_WITH_IMM
// into the QP's mailbox as the layer's notification. RC delivers in order, so
// when the decode side sees the notification's completion every page of the
// layer has landed. The decode side acknowledges it with a WRITE_WITH_IMM
// carrying the same immediate. At the end of the run one more marked
// WRITE_WITH_IMM tells it that the slot is done.
//
// Signalling follows perftest: one request in `interval` (numbered per QP
// across the run) is signalled, so the send queue can never fill with
// unsignalled work; notifications and the end marker are always signalled.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "perf/kv_pattern.h"
#include "perf/transport.h"

namespace fabcheck::perf::verbs {

// The immediate of a layer notification (and its acknowledgement): the low
// 19 bits of the request and the layer (layers <= 4096); bit 31 marks the
// end of the run.
inline constexpr uint32_t kKvEndImm = 0x80000000u;
inline constexpr uint32_t KvNotifyImm(uint64_t request, uint32_t layer) {
  return (static_cast<uint32_t>(request & 0x7ffff) << 12) | (layer & 0xfff);
}
inline constexpr uint32_t KvImmLayer(uint32_t imm) { return imm & 0xfff; }
inline constexpr uint32_t KvImmRequest(uint32_t imm) { return (imm >> 12) & 0x7ffff; }

// Bytes each side's mailbox slot holds per QP: [send half | receive half],
// the notification's (and acknowledgement's) payload going from one to the other.
inline constexpr uint64_t kKvMailboxSlot = 32;
inline constexpr uint32_t kKvNotifyBytes = 8;

// The region of one side: the mailboxes (page aligned), then the pages
// (destination pool on the server, source pages on the client).
uint64_t KvMailboxBytes(int qps);
uint64_t KvRegionBytes(const TestParams& p, Role role);

struct KvWr {
  enum class Kind { kPage, kNotify, kEnd };
  Kind kind = Kind::kPage;
  uint64_t local_page = 0;   // kPage: source page (of the local pages)
  uint64_t remote_page = 0;  // kPage: destination page (of the peer's pool)
  uint32_t imm = 0;          // kNotify / kEnd
  uint32_t layer = 0;
  bool first_of_layer = false;  // the layer's first work request (its time starts here)
  bool signalled = false;
  uint64_t seq = 0;          // this QP's work request number across the run (0-based)
};

// The work requests of one slot, request after request.
class KvSlotPlanner {
 public:
  // `table` (the decode side's page table) must outlive the planner.
  KvSlotPlanner(const KvPattern& kv, const std::vector<uint32_t>& table, uint64_t source_pages, int signal_interval);

  // Starts request `id` (numbered across the run, all slots together).
  void Start(uint64_t id);
  // Work requests of the current request not yet taken.
  bool HasNext() const { return active_; }
  KvWr Next();
  // The end-of-run marker (after the slot's last request).
  KvWr End();
  uint64_t request() const { return request_; }
  uint64_t taken() const { return seq_; }  // work requests planned so far on this QP

 private:
  bool Signal(uint64_t seq) const { return (seq + 1) % interval_ == 0; }
  KvPattern kv_;
  const std::vector<uint32_t>* table_;
  uint64_t source_pages_;
  uint64_t interval_;
  uint64_t request_ = 0;
  uint32_t layer_ = 0;
  uint64_t page_ = 0;  // next page of the layer; == pages_per_layer: the notification is next
  bool active_ = false;
  uint64_t seq_ = 0;
};

// Whether a received immediate is the one a QP expects next: layers in order
// within a request, a new request starting at layer 0. Returns the layer's
// description for the error, or nullopt when it fits.
struct KvExpect {
  bool started = false;
  uint32_t request = 0;  // low bits, as in the immediate
  uint32_t layer = 0;    // next layer expected
};
std::optional<std::string> CheckNotification(KvExpect& e, uint32_t imm, int layers);

// A signalled completion covers every work request of its QP up to it: the
// QP's count of completed requests after one whose wr_id carries the low 32
// bits `low` of its number, given `done` completed before (wr_ids wrap).
inline uint64_t CompletedThrough(uint64_t done, uint32_t low) {
  uint64_t idx = (done & ~uint64_t{0xffffffffu}) | low;
  if (idx < done) idx += uint64_t{1} << 32;
  return idx + 1;
}

}  // namespace fabcheck::perf::verbs
