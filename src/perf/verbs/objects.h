// RAII owners for every verbs and rdma_cm object the transport creates.
//
// Teardown order matters (rdma-core's rc_pingpong.c pp_close_ctx): QPs and AHs
// before the CQs and PD they use, MRs before their PD, CQs before their
// completion channel, everything before the device context. Owners that hold
// several of them declare members in creation order so C++ destroys them in
// the reverse, correct order. A destroy that fails (EBUSY: something still
// uses the object) is logged, never ignored silently.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>

namespace fabcheck::perf::verbs {

struct DeviceListDeleter { void operator()(ibv_device** list) const; };
struct ContextDeleter { void operator()(ibv_context* ctx) const; };
struct PdDeleter { void operator()(ibv_pd* pd) const; };
struct MrDeleter { void operator()(ibv_mr* mr) const; };
struct CompChannelDeleter { void operator()(ibv_comp_channel* ch) const; };
struct CqDeleter { void operator()(ibv_cq* cq) const; };
struct QpDeleter { void operator()(ibv_qp* qp) const; };
struct AhDeleter { void operator()(ibv_ah* ah) const; };
struct EventChannelDeleter { void operator()(rdma_event_channel* ch) const; };
// Destroys the QP rdma_create_qp attached to the id (if any), then the id.
struct CmIdDeleter { void operator()(rdma_cm_id* id) const; };

using DeviceListPtr = std::unique_ptr<ibv_device*, DeviceListDeleter>;
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using CompChannelPtr = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using AhPtr = std::unique_ptr<ibv_ah, AhDeleter>;
using EventChannelPtr = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, CmIdDeleter>;

// A buffer of host memory: page aligned, zeroed, freed with free().
struct FreeDeleter { void operator()(void* p) const; };
using HostMemPtr = std::unique_ptr<void, FreeDeleter>;

}  // namespace fabcheck::perf::verbs
