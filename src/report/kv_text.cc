#include "report/kv_text.h"

#include <fmt/format.h>

#include "base/units.h"
#include "report/nccl_log_text.h"
#include "report/table.h"

namespace fabcheck::report {

namespace {

std::string Shape(const model::KvModel& m) {
  if (m.attention == "mla") {
    return fmt::format("MLA, {} layers, latent {} x {} ({} B)", m.layers, m.latent_dim, m.dtype, m.dtype_bytes);
  }
  return fmt::format("GQA, {} layers, {} KV heads x {}, {} ({} B)", m.layers, m.kv_heads, m.head_dim, m.dtype,
                     m.dtype_bytes);
}

std::string Ms(double ms) { return fmt::format("{:.3f}", ms); }

std::string End(const char* role, const model::PerfEndpoint& e) {
  std::string dev = e.device.empty() ? "?" : e.device;
  if (e.gid_index) dev += fmt::format(" GID {} ({})", *e.gid_index, e.gid_type);
  return fmt::format("  {:<8} {} {} MTU {} | mem {} ({}) | CPU {:.0f}%\n", role, e.host, dev, e.mtu,
                     e.memory.empty() ? "host" : e.memory, e.registration.empty() ? "host" : e.registration,
                     e.cpu.percent);
}

}  // namespace

std::string FormatKvModels(const std::vector<model::KvModel>& models) {
  TextTable t({{"model", 14}, {"KV cache", 50}, {"source", 0}});
  for (const auto& m : models) t.Add({m.name, Shape(m), m.source});
  return t.Render();
}

std::string FormatKvSizing(const model::KvSizing& s, double link_gbps) {
  std::string out;
  out += fmt::format("model        {} ({})\n", s.model.name, Shape(s.model));
  out += fmt::format("source       {}\n", s.model.source);
  if (s.model.attention == "mla") {
    out += fmt::format("split        tp {}: the latent is not split\n", s.tp);
  } else {
    out += fmt::format("split        tp {}: {} KV head(s) per rank\n", s.tp, s.kv_heads_per_rank);
  }
  out += fmt::format("per token    {} B per layer ({})\n", s.bytes_per_token_per_layer,
                     s.model.attention == "mla" ? "the latent" : "K and V");
  out += fmt::format("page         {} tokens = {} B ({}) per layer\n", s.page_tokens, s.page_bytes,
                     FormatSize(s.page_bytes));
  out += fmt::format("request      {} tokens = {} pages per layer x {} layers = {} page writes, {} notifications\n",
                     s.tokens, s.pages_per_layer, s.model.layers, s.transfers_per_request,
                     s.notifications_per_request);
  out += fmt::format("             {} B ({}) per request, {} per layer\n", s.bytes_per_request,
                     FormatSize(s.bytes_per_request), FormatSize(s.layer_bytes));
  if (link_gbps > 0 && s.bytes_per_request > 0) {
    double seconds = static_cast<double>(s.bytes_per_request) * 8 / (link_gbps * 1e9);
    out += fmt::format("at {:g} Gb/s  {:.2f} ms per request at line rate: {:.1f} requests/s, {:.0f} prompt tokens/s, "
                       "{:.0f} pages/s\n",
                       link_gbps, seconds * 1000, 1 / seconds, static_cast<double>(s.tokens) / seconds,
                       static_cast<double>(s.transfers_per_request) / seconds);
  }
  for (const auto& n : s.notes) out += fmt::format("note         {}\n", n);
  return out;
}

std::string FormatKvResult(const model::KvResult& r) {
  const model::KvSizing& s = r.sizing;
  std::string out = fmt::format("fabcheck kv: {} over {} to {}, {} request(s) in flight\n", s.model.name, r.transport,
                                r.server, r.inflight);
  out += End("prefill", r.client);
  out += End("decode", r.server_side);
  out += fmt::format("  request  {} tokens, {}-token pages of {}: {} page writes + {} notifications, {}\n", s.tokens,
                     s.page_tokens, FormatSize(s.page_bytes), s.transfers_per_request, s.notifications_per_request,
                     FormatSize(s.bytes_per_request));
  out += fmt::format("  decode   page table of {} destination pages ({})\n", r.pool_pages,
                     FormatSize(r.pool_pages * s.page_bytes));
  if (r.kv) {
    const model::KvFigures& k = *r.kv;
    TextTable t({{"#requests", 10, Align::kRight},
                 {"req p50[ms]", 12, Align::kRight},
                 {"req p99[ms]", 12, Align::kRight},
                 {"req max[ms]", 12, Align::kRight},
                 {"layer p50[ms]", 14, Align::kRight},
                 {"layer p99[ms]", 14, Align::kRight},
                 {"GB/s", 8, Align::kRight},
                 {"Gb/s", 8, Align::kRight},
                 {"pages/s", 10, Align::kRight},
                 {"CPU s/GB c/s", 13, Align::kRight}},
                {.indent = " "});
    t.Add({std::to_string(k.requests), Ms(k.request.p50_ms), Ms(k.request.p99_ms), Ms(k.request.max_ms),
           Ms(k.layer.p50_ms), Ms(k.layer.p99_ms), fmt::format("{:.3f}", k.gbytes_per_s), fmt::format("{:.2f}", k.gbps),
           fmt::format("{:.0f}", k.pages_per_s), fmt::format("{:.2f}/{:.2f}", k.cpu_s_per_gb_client, k.cpu_s_per_gb_server)});
    out += t.Render();
  }
  if (r.l3) {
    if (!r.l3->error.empty()) {
      out += fmt::format("  L3       {} at {} x{}: FAILED: {}\n", r.l3->op, FormatSize(r.l3->size), r.l3->streams,
                         r.l3->error);
    } else {
      out += fmt::format("  L3       {} at {} x{} streams: {:.3f} GB/s ({:.2f} Gb/s), CPU s/GB {:.2f}/{:.2f}\n",
                         r.l3->op, FormatSize(r.l3->size), r.l3->streams, r.l3->gbytes_per_s, r.l3->gbps,
                         r.l3->cpu_s_per_gb_client, r.l3->cpu_s_per_gb_server);
    }
  } else {
    out += "  L3       not measured (--no-l3)\n";
  }
  if (r.ratio_to_l3) {
    out += fmt::format("  kv / L3  {:.2f} (goal {:.1f} at {} pages)\n", *r.ratio_to_l3, r.goal_ratio.value_or(0),
                       FormatSize(s.page_bytes));
  }
  if (r.ttft) {
    out += fmt::format("  TTFT     budget {:.1f} ms: {} (p99 {:.2f} ms); prompts up to ~{} tokens fit\n",
                       r.ttft->budget_ms, r.ttft->fits ? "fits" : "DOES NOT FIT", r.ttft->transfer_p99_ms,
                       r.ttft->max_tokens);
  }
  if (!r.error.empty()) out += fmt::format("  FAILED: {}\n", r.error);
  if (!r.findings.empty()) {
    out += "findings:\n";
    for (const auto& f : r.findings) out += FormatFindingLines(f);
  }
  return out;
}

std::string FormatKvFan(const model::KvFanResult& r) {
  std::string out = fmt::format("fabcheck kv: {} through {}, {} transfer(s) at once\n", r.mode, r.hub, r.members.size());
  TextTable t({{"prefill", 16, Align::kLeft},
               {"decode", 16, Align::kLeft},
               {"GB/s", 8, Align::kRight},
               {"L3 GB/s", 8, Align::kRight},
               {"kv/L3", 6, Align::kRight},
               {"req p99[ms]", 12, Align::kRight},
               {"result", 8, Align::kLeft}},
              {.indent = " "});
  for (const auto& m : r.members) {
    const model::KvResult* k = m.result ? &*m.result : nullptr;
    auto num = [](std::optional<double> v, const char* f) { return v ? fmt::format(fmt::runtime(f), *v) : std::string("-"); };
    t.Add({m.prefill, m.decode, num(k && k->kv ? std::optional(k->kv->gbytes_per_s) : std::nullopt, "{:.3f}"),
           num(k && k->l3 ? std::optional(k->l3->gbytes_per_s) : std::nullopt, "{:.3f}"),
           num(k ? k->ratio_to_l3 : std::nullopt, "{:.2f}"),
           num(k && k->kv ? std::optional(k->kv->request.p99_ms) : std::nullopt, "{:.1f}"),
           !m.error.empty() ? "FAILED" : (k && k->ok() ? "ok" : "FAILED")});
  }
  out += t.Render();
  out += fmt::format("  total    {:.3f} GB/s {} {}; L3 {:.3f} GB/s (the L3 runs overlapped as well)\n", r.gbytes_per_s,
                     r.mode == "fan-in" ? "into" : "out of", r.hub, r.l3_gbytes_per_s);
  if (r.ratio_to_l3) {
    out += fmt::format("  kv / L3  {:.2f} (goal {:.1f})\n", *r.ratio_to_l3, r.goal_ratio.value_or(0));
  }
  for (const auto& m : r.members) {
    if (!m.error.empty()) out += fmt::format("  FAILED {} -> {}: {}\n", m.prefill, m.decode, m.error);
  }
  if (!r.findings.empty()) {
    out += "findings:\n";
    // Each under its transfer's pair (the object starts with it), so several
    // alike findings stay apart.
    for (const auto& f : r.findings) {
      out += fmt::format("  {}\n", f.object.substr(0, f.object.find(": ")));
      out += FormatFindingLines(f);
    }
  }
  return out;
}

}  // namespace fabcheck::report
