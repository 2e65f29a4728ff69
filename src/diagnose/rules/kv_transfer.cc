// The L5 KV-cache transfer (fabcheck kv JSON): kv.below-l3 when the transfer
// falls short of the same pair's L3 figure, naming the rung to look at;
// kv.ends-mismatch when the two ends disagreed before it ran.
#include <fmt/format.h>

#include <algorithm>

#include "base/units.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void RunBelow(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunMismatch(const Evidence& ev, std::vector<model::Diagnosis>* out);

bool IsMismatch(const model::Finding& f) {
  return f.id == "kv.mtu-mismatch" || f.id == "kv.gid-type-mismatch" || f.id == "kv.link-layer-mismatch" ||
         f.id == "kv.registration-mismatch";
}
}  // namespace

extern const Rule kKvBelowL3 = {
    "kv.below-l3", "kv",
    "The KV-cache transfer moves less than 0.9x (pages of 256 KiB and more) or 0.7x (smaller pages) of the same "
    "pair's L3 write bandwidth measured in the same run, or the L3 figure itself failed",
    "L5 is trusted only on top of L3: when the rung below moves the bytes and the KV pattern does not, the gap is in "
    "the pattern (many mid-sized scattered writes, a notification per layer) or in what the two ends disagree on; "
    "when L3 fails too, the problem is below L5.",
    "Fix what the two ends disagree on first (MTU, GID type); then larger pages or more requests in flight; compare "
    "CPU per GB with L3's.",
    &RunBelow};

extern const Rule kKvEndsMismatch = {
    "kv.ends-mismatch", "kv",
    "The prefill and decode ends of a KV transfer disagree on the active MTU, link layer, GID type or memory "
    "registration",
    "ib_write_bw tolerates an active-MTU mismatch; a KV engine's large writes stall or fragment on it, and a staged "
    "end copies every page through host memory.",
    "Make both ends the same: MTU on the netdevs and the path (fabcheck doctor --only L2), RoCE v2 GIDs on both, "
    "the same registration (dmabuf or peermem) for GPU memory.",
    &RunMismatch};

namespace {

void RunBelow(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& k : ev.kvs) {
    const model::KvResult& r = k.result;
    if (!r.kv) continue;
    const std::string object = fmt::format("{} -> {}", ev.Name(r.client.host), ev.Name(r.server_side.host));
    if (r.l3 && !r.l3->error.empty()) {
      auto d = Make(kKvBelowL3, model::Severity::kFail, model::Confidence::kHigh, object,
                    fmt::format("the L3 run beside the KV transfer failed: {}", r.l3->error));
      d.evidence.push_back(fmt::format("{}: l3.error", k.source));
      d.causes = {"the path fails at L3 already: the KV transfer cannot be judged above it"};
      d.fix = "bring up rung L3 between the pair first";
      d.next = fmt::format("rung L3: fabcheck perf run {} --transport {}", r.server_side.host, r.transport);
      out->push_back(std::move(d));
      continue;
    }
    if (!r.ratio_to_l3 || !r.goal_ratio || *r.ratio_to_l3 >= *r.goal_ratio) continue;
    bool ends_differ = std::any_of(r.findings.begin(), r.findings.end(), IsMismatch);
    auto d = Make(kKvBelowL3, model::Severity::kWarn, model::Confidence::kMedium, object,
                  fmt::format("the KV transfer of {} moves {:.2f} GB/s, {:.2f}x the L3 bandwidth of the same pair "
                              "({:.2f} GB/s at {} pages; goal {:.1f}x)",
                              r.sizing.model.name, r.kv->gbytes_per_s, *r.ratio_to_l3,
                              r.l3 ? r.l3->gbytes_per_s : 0, FormatSize(r.sizing.page_bytes), *r.goal_ratio));
    d.evidence.push_back(fmt::format("{}: kv {} requests, request p99 {:.2f} ms, layer p99 {:.3f} ms, CPU s/GB "
                                     "{:.2f}/{:.2f} (L3 {:.2f}/{:.2f})",
                                     k.source, r.kv->requests, r.kv->request.p99_ms, r.kv->layer.p99_ms,
                                     r.kv->cpu_s_per_gb_client, r.kv->cpu_s_per_gb_server,
                                     r.l3 ? r.l3->cpu_s_per_gb_client : 0, r.l3 ? r.l3->cpu_s_per_gb_server : 0));
    if (ends_differ) {
      d.causes.push_back("the two ends disagree (see kv.ends-mismatch): rung L2");
    }
    d.causes.push_back(fmt::format("small pages ({}): a header and a completion per page, a round trip per layer",
                                   FormatSize(r.sizing.page_bytes)));
    d.causes.push_back("too few requests in flight to fill the path (--inflight)");
    d.causes.push_back("a CPU-bound end: compare CPU per GB with L3's");
    d.fix = kKvBelowL3.fix;
    d.next = ends_differ ? fmt::format("rung L2 on both ends: fabcheck doctor --only L2 (on {} and {})",
                                       r.client.host, r.server_side.host)
                         : fmt::format("fabcheck kv run {} --model {} --tokens {} --page {} --inflight {}",
                                       r.server_side.host, r.sizing.model.name, r.sizing.tokens,
                                       r.sizing.page_tokens * 4, r.inflight * 2);
    out->push_back(std::move(d));
  }
}

void RunMismatch(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& k : ev.kvs) {
    for (const auto& f : k.result.findings) {
      if (!IsMismatch(f)) continue;
      auto d = Make(kKvEndsMismatch, f.severity, model::Confidence::kHigh, f.object, f.message);
      for (const auto& e : f.evidence) d.evidence.push_back(fmt::format("{}: {}", k.source, e));
      d.causes = {f.id};
      d.fix = f.remedy;
      d.next = fmt::format("rung L2 on both ends: fabcheck doctor --only L2,RoCE (on {} and {})",
                           k.result.client.host, k.result.server_side.host);
      out->push_back(std::move(d));
    }
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
