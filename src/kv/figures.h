// The kv result's figures and findings from raw measurements (pure; tested).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fabcheck/model/kv.h"
#include "perf/engine.h"

namespace fabcheck::kv {

// p50/p99/max/average of times given in microseconds, in milliseconds
// (nearest-rank percentiles, base/stats.h).
model::KvTimes MakeTimes(std::vector<double> us);

// CPU seconds per GB moved, from a side's CPU use (percent of one core over
// the measured phase) and the rate it moved bytes at.
double CpuSecondsPerGb(const model::CpuUse& cpu, double gbytes_per_s);

// The kv figures from the client's raw measurement of the kv size.
model::KvFigures MakeFigures(const perf::RawSize& raw, const model::CpuUse& client_cpu,
                             const model::CpuUse& server_cpu);

// The goal of the ratio to L3 at this page size: 0.9 at 256 KiB and above, 0.7 below.
double GoalRatio(uint64_t page_bytes);

// The pre-run comparison of both ends: active MTU, link layer, GID type and
// memory registration; a mismatch is a finding (kv.mtu-mismatch,
// kv.link-layer-mismatch, kv.gid-type-mismatch: fail; kv.registration-mismatch: warn).
std::vector<model::Finding> CompareEnds(const model::PerfEndpoint& client, const model::PerfEndpoint& server);

// kv.below-l3 when the ratio misses the goal, naming the rung to look at:
// L2 when the ends disagree (the findings above), else the transfer pattern.
std::optional<model::Finding> Shortfall(const model::KvResult& r);

// The TTFT budget: whether the p99 transfer fits, and the longest prompt that
// would (time scaled by bytes at the measured p99, in whole pages).
model::KvTtft MakeTtft(double budget_ms, const model::KvSizing& sizing, double p99_ms);
// kv.ttft-budget: fail when it does not fit, pass otherwise.
model::Finding TtftFinding(const model::KvTtft& t, const model::KvSizing& sizing);

}  // namespace fabcheck::kv
