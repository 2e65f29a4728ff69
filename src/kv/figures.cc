#include "kv/figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/stats.h"
#include "base/units.h"

namespace fabcheck::kv {

model::KvTimes MakeTimes(std::vector<double> us) {
  model::KvTimes t;
  if (us.empty()) return t;
  std::sort(us.begin(), us.end());
  t.samples = us.size();
  t.p50_ms = stats::PercentileSorted(us, 0.5).value_or(0) / 1000;
  t.p99_ms = stats::PercentileSorted(us, 0.99).value_or(0) / 1000;
  t.max_ms = us.back() / 1000;
  t.avg_ms = stats::Mean(us).value_or(0) / 1000;
  return t;
}

double CpuSecondsPerGb(const model::CpuUse& cpu, double gbytes_per_s) {
  return gbytes_per_s > 0 ? cpu.percent / 100 / gbytes_per_s : 0;
}

model::KvFigures MakeFigures(const perf::RawSize& raw, const model::CpuUse& client_cpu,
                             const model::CpuUse& server_cpu) {
  const perf::SideMeasurement& m = raw.mine;
  model::KvFigures f;
  f.requests = m.kv_requests;
  f.pages = m.tx_messages;
  f.notifications = m.kv_notifications;
  f.bytes = m.tx_bytes;
  f.elapsed_s = m.tx_elapsed_s;
  if (f.elapsed_s > 0) {
    f.gbytes_per_s = static_cast<double>(f.bytes) / f.elapsed_s / 1e9;
    f.gbps = f.gbytes_per_s * 8;
    f.pages_per_s = static_cast<double>(f.pages) / f.elapsed_s;
  }
  f.request = MakeTimes(m.request_us);
  f.layer = MakeTimes(m.layer_us);
  f.cpu_s_per_gb_client = CpuSecondsPerGb(client_cpu, f.gbytes_per_s);
  f.cpu_s_per_gb_server = CpuSecondsPerGb(server_cpu, f.gbytes_per_s);
  return f;
}

double GoalRatio(uint64_t page_bytes) { return page_bytes >= 256 * 1024 ? 0.9 : 0.7; }

namespace {

model::Finding Mismatch(const char* id, model::Severity severity, const std::string& what, const std::string& mine,
                        const std::string& theirs, const model::PerfEndpoint& c, const model::PerfEndpoint& s,
                        std::string remedy) {
  model::Finding f;
  f.id = id;
  f.severity = severity;
  f.group = "L2";
  f.object = fmt::format("{} ({}) -> {} ({})", c.host, c.device.empty() ? "?" : c.device, s.host,
                         s.device.empty() ? "?" : s.device);
  f.message = fmt::format("the two ends disagree on {}: {} here, {} on the decode side", what, mine, theirs);
  f.evidence = {fmt::format("prefill {} {}: {}", c.host, what, mine), fmt::format("decode {} {}: {}", s.host, what, theirs)};
  f.remedy = std::move(remedy);
  return f;
}

}  // namespace

std::vector<model::Finding> CompareEnds(const model::PerfEndpoint& c, const model::PerfEndpoint& s) {
  std::vector<model::Finding> out;
  // verbs: the path MTU is the smaller of both ports' (the same on both
  // ends), so the ports' own active MTUs are what can differ.
  const bool ports = c.port_mtu > 0 && s.port_mtu > 0;
  const int cm = ports ? c.port_mtu : c.mtu, sm = ports ? s.port_mtu : s.mtu;
  if (cm > 0 && sm > 0 && cm != sm) {
    out.push_back(Mismatch(
        "kv.mtu-mismatch", model::Severity::kFail, "the active MTU", std::to_string(cm), std::to_string(sm), c, s,
        fmt::format("set the same MTU on both ends and on the path (ip link set DEV mtu N; RoCE: the netdev's MTU "
                    "sets the active MTU); a bandwidth test tolerates this, a KV engine's large writes stall or "
                    "fragment. Check L2: fabcheck doctor --only L2 on both nodes")));
  }
  if (!c.link_layer.empty() && !s.link_layer.empty() && c.link_layer != s.link_layer) {
    out.push_back(Mismatch("kv.link-layer-mismatch", model::Severity::kFail, "the link layer", c.link_layer,
                           s.link_layer, c, s, "use devices of the same fabric on both ends (--device, --server-device)"));
  }
  if (!c.gid_type.empty() && !s.gid_type.empty() && c.gid_type != s.gid_type) {
    out.push_back(Mismatch("kv.gid-type-mismatch", model::Severity::kFail, "the GID type", c.gid_type, s.gid_type, c,
                           s,
                           "use GIDs of the same type on both ends (RoCE v2 for routed fabrics: --gid-index auto on "
                           "both, or the same index with the same type); see fabcheck doctor --only L2,RoCE"));
  }
  std::string cr = c.registration.empty() ? "host" : c.registration, sr = s.registration.empty() ? "host" : s.registration;
  if (cr != sr) {
    out.push_back(Mismatch("kv.registration-mismatch", model::Severity::kWarn, "the memory registration", cr, sr, c, s,
                           "register the KV cache the same way on both ends (dmabuf or peermem for GPU memory); a "
                           "staged side copies every page through host memory"));
  }
  return out;
}

std::optional<model::Finding> Shortfall(const model::KvResult& r) {
  if (!r.ratio_to_l3 || !r.goal_ratio || !r.kv || !r.l3 || *r.ratio_to_l3 >= *r.goal_ratio) return std::nullopt;
  model::Finding f;
  f.id = "kv.below-l3";
  f.severity = model::Severity::kWarn;
  f.group = "L5";
  f.object = fmt::format("{} -> {}", r.client.host, r.server);
  f.message = fmt::format("the KV transfer moves {:.2f} GB/s, {:.2f}x the same pair's L3 {} bandwidth of {:.2f} GB/s "
                          "at {} pages (goal {:.1f}x)",
                          r.kv->gbytes_per_s, *r.ratio_to_l3, r.l3->op, r.l3->gbytes_per_s,
                          FormatSize(r.sizing.page_bytes), *r.goal_ratio);
  f.evidence = {fmt::format("kv: {} requests, {} pages, {:.3f} s, request p99 {:.2f} ms, layer p99 {:.3f} ms",
                            r.kv->requests, r.kv->pages, r.kv->elapsed_s, r.kv->request.p99_ms, r.kv->layer.p99_ms),
                fmt::format("L3: {} {} streams of {} for {:.1f} s", r.l3->op, r.l3->streams, FormatSize(r.l3->size),
                            r.l3->duration_s)};
  bool ends_differ = std::any_of(r.findings.begin(), r.findings.end(), [](const model::Finding& x) {
    return x.id == "kv.mtu-mismatch" || x.id == "kv.gid-type-mismatch" || x.id == "kv.link-layer-mismatch";
  });
  if (ends_differ) {
    f.remedy = "look at L2 first: the two ends disagree (see the mismatch finding); fix it and run again";
  } else {
    f.remedy = fmt::format(
        "L3 itself moves more, so look at the transfer pattern (L5): small pages ({}) cost a header and a completion "
        "each, and one notification per layer waits a round trip; try larger pages (--page), more requests in flight "
        "(--inflight), and compare CPU per GB with L3 (a busy core caps it)",
        FormatSize(r.sizing.page_bytes));
  }
  return f;
}

model::KvTtft MakeTtft(double budget_ms, const model::KvSizing& sizing, double p99_ms) {
  model::KvTtft t;
  t.budget_ms = budget_ms;
  t.transfer_p99_ms = p99_ms;
  t.fits = p99_ms > 0 && p99_ms <= budget_ms;
  if (p99_ms > 0 && sizing.page_tokens > 0) {
    // Time scales with pages at the measured rate; whole pages only.
    double pages = std::floor(budget_ms / p99_ms * static_cast<double>(sizing.pages_per_layer));
    t.max_tokens = static_cast<uint64_t>(std::max(0.0, pages)) * static_cast<uint64_t>(sizing.page_tokens);
  }
  return t;
}

model::Finding TtftFinding(const model::KvTtft& t, const model::KvSizing& sizing) {
  model::Finding f;
  f.id = "kv.ttft-budget";
  f.group = "L5";
  f.object = sizing.model.name;
  f.severity = t.fits ? model::Severity::kPass : model::Severity::kFail;
  f.message = fmt::format("the KV transfer of a {}-token prompt takes {:.2f} ms at p99, {} the {:.1f} ms budget; "
                          "prompts up to about {} tokens fit",
                          sizing.tokens, t.transfer_p99_ms, t.fits ? "within" : "over", t.budget_ms, t.max_tokens);
  f.evidence = {fmt::format("{} per request in {} page writes", FormatSize(sizing.bytes_per_request),
                            sizing.transfers_per_request)};
  if (!t.fits) {
    f.remedy = "shorten the prompts sent to disaggregated prefill, raise the budget, or make the transfer faster "
               "(more requests in flight, larger pages, a faster path: see the ratio to L3)";
  }
  return f;
}

}  // namespace fabcheck::kv
