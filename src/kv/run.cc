#include "kv/run.h"
#include "base/utc_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "base/units.h"
#include "kv/figures.h"

namespace fabcheck::kv {

namespace {

void Say(const RunOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

// A plain perf bw run between the same pair: the L3 figure, or (iters 1) the probe.
perf::ClientOptions L3Options(const RunOptions& o, bool probe) {
  perf::ClientOptions c = o.client;
  perf::TestParams& p = c.params;
  p.transport = o.transport;
  p.test = model::PerfTest::kBw;
  p.op = o.transport == perf::TransportKind::kTcp ? model::PerfOp::kSend : model::PerfOp::kWrite;
  p.bidir = false;
  p.validate = false;
  p.kv = {};
  p.streams = probe ? 1 : o.inflight;
  p.sizes = {probe ? std::min<uint64_t>(o.sizing.page_bytes, 4096) : o.sizing.page_bytes};
  p.warmup = probe ? 0 : 16;
  p.iters = probe ? 1 : 0;
  p.duration_s = probe ? 0 : o.l3_duration_s;
  return c;
}

}  // namespace

uint64_t PoolPages(const model::KvSizing& s, uint64_t pool_bytes) {
  if (s.page_bytes == 0) return 1;
  uint64_t pages = std::max<uint64_t>(pool_bytes / s.page_bytes, s.pages_per_layer);
  // No more than one request's pages per slot in flight would ever touch.
  pages = std::min<uint64_t>(pages, s.transfers_per_request);
  return std::clamp<uint64_t>(pages, 1, perf::kMaxKvPoolPages);
}

Result<model::KvResult> Run(const RunOptions& o) {
  model::KvResult r;
  r.started_at = UtcNowIso8601();
  r.server = fmt::format("{}:{}", o.client.host, o.client.port);
  r.transport = std::string(perf::TransportName(o.transport));
  r.inflight = o.inflight;
  r.warmup = o.warmup;
  r.sizing = o.sizing;
  r.pool_pages = PoolPages(o.sizing, o.pool_bytes);

  // The kv request, checked before anything runs.
  perf::ClientOptions kv = o.client;
  perf::TestParams& p = kv.params;
  p.transport = o.transport;
  p.test = model::PerfTest::kKv;
  p.op = o.transport == perf::TransportKind::kTcp ? model::PerfOp::kSend : model::PerfOp::kWrite;
  p.sizes = {o.sizing.page_bytes};
  p.streams = o.inflight;
  p.iters = o.requests;
  p.duration_s = o.requests != 0 ? 0 : o.duration_s;
  p.warmup = o.warmup;
  p.kv = {o.sizing.model.layers, o.sizing.pages_per_layer, r.pool_pages};
  RETURN_IF_ERROR(perf::ValidateTestParams(p));

  // L3 first (or the probe): it also tells what both ends use.
  perf::ClientOptions l3 = L3Options(o, /*probe=*/!o.l3);
  Say(o, o.l3 ? fmt::format("L3: {} bandwidth at {} with {} stream(s) for {:.1f} s", r.transport,
                            FormatSize(o.sizing.page_bytes), o.inflight, o.l3_duration_s)
              : "probing both ends (--no-l3)");
  ASSIGN_OR_RETURN(model::PerfResult base, perf::RunClient(l3));
  r.client = base.client;
  r.server_side = base.server_side;
  if (o.l3) {
    model::KvL3 f;
    f.op = std::string(model::PerfOpName(l3.params.op));
    f.size = o.sizing.page_bytes;
    f.streams = o.inflight;
    f.duration_s = o.l3_duration_s;
    f.error = base.error;
    if (f.error.empty() && !base.results.empty() && !base.results[0].error.empty()) f.error = base.results[0].error;
    if (!base.results.empty() && base.results[0].bw) {
      f.gbps = base.results[0].bw->avg_gbps;
      f.gbytes_per_s = f.gbps / 8;
    }
    // Never a ratio against nothing: an L3 run that moved nothing says so.
    if (f.error.empty() && !(f.gbps > 0)) {
      f.error = fmt::format("the L3 {} run at {} measured no bandwidth (check the pair with fabcheck perf run)",
                            f.op, FormatSize(f.size));
    }
    f.cpu_s_per_gb_client = CpuSecondsPerGb(base.client.cpu, f.gbytes_per_s);
    f.cpu_s_per_gb_server = CpuSecondsPerGb(base.server_side.cpu, f.gbytes_per_s);
    r.l3 = f;
  }
  r.findings = CompareEnds(base.client, base.server_side);
  for (const auto& f : r.findings) Say(o, fmt::format("{}: {}", f.id, f.message));

  Say(o, fmt::format("transfer: {} layers x {} pages of {} per request, {} in flight, {}", o.sizing.model.layers,
                     o.sizing.pages_per_layer, FormatSize(o.sizing.page_bytes), o.inflight,
                     o.requests != 0 ? fmt::format("{} requests", o.requests)
                                     : fmt::format("{:.1f} s", o.duration_s)));
  std::vector<perf::RawSize> raw;
  auto run = perf::RunClient(kv, &raw);
  if (!run.ok()) {
    r.error = run.status().message();
    return r;
  }
  // The kv run's own description of the ends is the one its figures belong to.
  r.client = run->client;
  r.server_side = run->server_side;
  if (!run->error.empty()) r.error = run->error;
  // (Every connection's page count was checked against the decode side's at its end of run.)
  if (!raw.empty()) r.kv = MakeFigures(raw[0], run->client.cpu, run->server_side.cpu);
  if (r.kv && r.l3 && r.l3->error.empty() && r.l3->gbytes_per_s > 0) {
    r.ratio_to_l3 = r.kv->gbytes_per_s / r.l3->gbytes_per_s;
    r.goal_ratio = GoalRatio(o.sizing.page_bytes);
  }
  if (auto f = Shortfall(r)) r.findings.push_back(*f);
  if (r.kv && o.ttft_budget_ms) {
    r.ttft = MakeTtft(*o.ttft_budget_ms, o.sizing, r.kv->request.p99_ms);
    r.findings.push_back(TtftFinding(*r.ttft, o.sizing));
  }
  return r;
}

}  // namespace fabcheck::kv
