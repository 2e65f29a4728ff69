#include "perf/verbs/objects.h"

#include <cerrno>
#include <cstdlib>

#include "base/log.h"
#include "base/status.h"

namespace fabcheck::perf::verbs {

namespace {

// verbs destroy calls return 0 or an errno value (some providers return -1 and set errno).
void Check(int rc, const char* what) {
  if (rc == 0) return;
  int err = rc > 0 ? rc : errno;
  LOG_WARN("verbs", "{} failed: {} (an object still uses it; teardown order bug or a leaked resource)", what,
           ErrnoName(err));
}

}  // namespace

void DeviceListDeleter::operator()(ibv_device** list) const { ibv_free_device_list(list); }
void ContextDeleter::operator()(ibv_context* ctx) const { Check(ibv_close_device(ctx), "ibv_close_device"); }
void PdDeleter::operator()(ibv_pd* pd) const { Check(ibv_dealloc_pd(pd), "ibv_dealloc_pd"); }
void MrDeleter::operator()(ibv_mr* mr) const { Check(ibv_dereg_mr(mr), "ibv_dereg_mr"); }
void CompChannelDeleter::operator()(ibv_comp_channel* ch) const {
  Check(ibv_destroy_comp_channel(ch), "ibv_destroy_comp_channel");
}
void CqDeleter::operator()(ibv_cq* cq) const { Check(ibv_destroy_cq(cq), "ibv_destroy_cq"); }
void QpDeleter::operator()(ibv_qp* qp) const { Check(ibv_destroy_qp(qp), "ibv_destroy_qp"); }
void AhDeleter::operator()(ibv_ah* ah) const { Check(ibv_destroy_ah(ah), "ibv_destroy_ah"); }
void EventChannelDeleter::operator()(rdma_event_channel* ch) const { rdma_destroy_event_channel(ch); }
void CmIdDeleter::operator()(rdma_cm_id* id) const {
  if (id->qp != nullptr) rdma_destroy_qp(id);
  Check(rdma_destroy_id(id), "rdma_destroy_id");
}
void FreeDeleter::operator()(void* p) const { std::free(p); }

}  // namespace fabcheck::perf::verbs
