#include "report/html.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "report/golive.h"
#include "report/plots.h"
#include "report/svg.h"

namespace fabcheck::report {
namespace {

using svg::Escape;

constexpr size_t kEvidenceShown = 14;
constexpr size_t kMembersListed = 128;

constexpr const char* kStyle = R"css(
:root{--pass:#2e7d32;--warn:#ef8f00;--fail:#c62828;--unknown:#7b8794;--manual:#3f6fb5;--ink:#1d2430;--muted:#5b6675;--line:#dde1e6}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:34px 0 10px;padding-bottom:4px;border-bottom:2px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:var(--muted);margin:0 0 14px}
.verdict{display:flex;gap:18px;align-items:center;margin:14px 0 18px;flex-wrap:wrap}
.badge{font-weight:700;font-size:22px;color:#fff;padding:8px 18px;border-radius:8px;letter-spacing:.04em}
.badge.go{background:var(--pass)}.badge.nogo{background:var(--fail)}
.counts span{display:inline-block;margin-right:14px;font-weight:600}
.c-pass{color:var(--pass)}.c-fail{color:var(--fail)}.c-unknown{color:var(--unknown)}.c-manual{color:var(--manual)}
.pill{display:inline-block;min-width:74px;text-align:center;font-size:12px;font-weight:700;color:#fff;border-radius:12px;padding:2px 10px;text-transform:uppercase}
.pill.pass{background:var(--pass)}.pill.fail{background:var(--fail)}.pill.unknown{background:var(--unknown)}.pill.manual{background:var(--manual)}
.pill.warn{background:var(--warn)}.pill.not_run{background:#c9ced6;color:#333}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.item{border:1px solid var(--line);border-left:6px solid var(--unknown);border-radius:6px;padding:10px 14px;margin:10px 0;break-inside:avoid}
.item.pass{border-left-color:var(--pass)}.item.fail{border-left-color:var(--fail)}.item.manual{border-left-color:var(--manual)}
.item h3{margin:0 0 4px;display:flex;gap:10px;align-items:baseline}.item .n{color:var(--muted);font-weight:700}
.item .summary{margin:2px 0 6px}.item ul{margin:4px 0 4px 18px;padding:0}.item li{margin:1px 0}
.item .label{font-weight:600;color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.03em}
.item .fix{background:#fff4f4;border-radius:4px;padding:4px 8px}
.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.figure{margin:10px 0 20px;overflow-x:auto}.figure p{margin:2px 0;color:var(--muted);font-size:12.5px}
.plot text{font-family:inherit}.plot .tick{font-size:11px;fill:#333}.plot .axis{font-size:12px;fill:#555}
.plot .note{font-size:11.5px;fill:#555}.plot .note.fail{fill:var(--fail)}.plot .strip-id{font-size:14px;font-weight:700}
.plot .strip-sub{font-size:11.5px}.plot .cell{font-size:11px;font-weight:600}
.empty{color:var(--muted);font-style:italic}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:8px}
footer{margin-top:40px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
@media print{
 body{background:#fff;font-size:11pt}main{max-width:none;padding:0}
 h2{break-after:avoid}.figure,.item,table{break-inside:avoid}
 .pill,.badge,.item,rect,svg{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 a{color:inherit;text-decoration:none}
 @page{size:A4;margin:14mm 12mm}
}
)css";

std::string Pill(std::string_view status, std::string_view text = "") {
  return fmt::format("<span class=\"pill {}\">{}</span>", Escape(status), Escape(text.empty() ? status : text));
}

std::string List(const std::vector<std::string>& lines, size_t limit) {
  std::string out = "<ul>";
  for (size_t i = 0; i < lines.size() && i < limit; ++i) out += "<li>" + Escape(lines[i]) + "</li>";
  if (lines.size() > limit) out += fmt::format("<li>… {} more (see the JSON report)</li>", lines.size() - limit);
  return out + "</ul>";
}

void Figure(std::string& out, const std::string& svg, std::string_view caption, std::string_view empty) {
  out += "<div class=\"figure\">";
  if (svg.empty()) {
    out += "<p class=\"empty\">" + Escape(empty) + "</p>";
  } else {
    out += svg;
    if (!caption.empty()) out += "<p>" + Escape(caption) + "</p>";
  }
  out += "</div>\n";
}

void Checklist(std::string& out, const model::GoLiveReport& r) {
  out += "<h2 id=\"checklist\">Go-live checklist</h2>\n<table><thead><tr><th>#</th><th>Item</th><th>Status</th>"
         "<th>Why</th></tr></thead><tbody>\n";
  for (const auto& item : r.checklist) {
    std::string status(model::ChecklistStatusName(item.status));
    out += fmt::format("<tr><td class=\"num\">{}</td><td><a href=\"#item-{}\">{}</a></td><td>{}</td><td>{}</td></tr>\n",
                       item.number, item.number, Escape(item.title), Pill(status), Escape(item.summary));
  }
  out += "</tbody></table>\n";
  for (const auto& item : r.checklist) {
    std::string status(model::ChecklistStatusName(item.status));
    out += fmt::format("<section class=\"item {}\" id=\"item-{}\" data-item=\"{}\" data-status=\"{}\">", status,
                       item.number, item.number, status);
    out += fmt::format("<h3><span class=\"n\">{}.</span> {} {}</h3>", item.number, Escape(item.title), Pill(status));
    out += fmt::format("<p class=\"summary\">{} <span class=\"id\">{}</span></p>", Escape(item.summary), Escape(item.id));
    if (!item.members.empty()) {
      out += fmt::format("<p><span class=\"label\">Members</span> {}</p>", Escape(Join(item.members, ", ")));
    }
    if (!item.evidence.empty()) out += "<div class=\"label\">Evidence</div>" + List(item.evidence, kEvidenceShown);
    if (!item.remedy.empty()) out += "<p class=\"fix\"><b>Fix:</b> " + Escape(item.remedy) + "</p>";
    if (!item.record.empty()) {
      out += std::string("<div class=\"label\">") +
             (item.status == model::ChecklistStatus::kManual ? "To record" : "To decide or complete it") + "</div>" +
             List(item.record, kEvidenceShown);
    }
    out += "</section>\n";
  }
}

void Rungs(std::string& out, const model::GoLiveReport& r) {
  out += "<h2 id=\"rungs\">Ladder rungs</h2>\n<table><thead><tr><th>Rung</th><th>Verdict</th><th>Ran on</th>"
         "<th>Passed</th><th>Duration</th><th>Failures</th><th>Reason</th></tr></thead><tbody>\n";
  for (const auto& g : r.rungs) {
    out += fmt::format("<tr><td><b>{}</b> {}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{:.1f} s</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                       Escape(g.id), Escape(g.title), Pill(g.verdict, g.verdict == "not_run" ? "not run" : g.verdict),
                       g.members, g.passed, g.duration_s, g.failures, Escape(g.reason));
  }
  out += "</tbody></table>\n";
  std::vector<std::string> suspects;
  for (const auto& g : r.rungs) {
    for (const auto& p : g.suspect_pairs) {
      suspects.push_back(g.id + " " + DescribeSuspectPair(p) + ". Counters in " + g.id + ": " + DescribePairCounters(p));
    }
  }
  if (!suspects.empty()) {
    out += "<div class=\"label\">Failing pairs whose own counters name a suspect</div>" +
           List(suspects, suspects.size());
  }
  Figure(out, plots::MemberGrid(r), "Each member on each rung: a member that fails a rung leaves the run there.",
         "No member ran a rung.");
}

void Members(std::string& out, const model::GoLiveReport& r) {
  out += "<h2 id=\"members\">Members</h2>\n";
  size_t skipped = 0;
  std::string rows;
  for (const auto& m : r.members) {
    bool healthy = m.dropped_at.empty() && m.reachable;
    if (r.members.size() > kMembersListed && healthy) {
      ++skipped;
      continue;
    }
    rows += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", Escape(m.id),
                        Escape(m.node_type), Escape(m.rack), Escape(m.leaf),
                        Escape(!m.reachable ? "unreachable" + (m.dropped_reason.empty() ? "" : ": " + m.dropped_reason)
                                            : m.dropped_at.empty() ? "" : m.dropped_at + ": " + m.dropped_reason));
  }
  out += "<table><thead><tr><th>Member</th><th>Node type</th><th>Rack</th><th>Leaf</th><th>Left the run</th></tr>"
         "</thead><tbody>\n" + rows + "</tbody></table>\n";
  if (skipped) out += fmt::format("<p class=\"empty\">{} members that passed every rung they ran are not listed.</p>\n", skipped);
}

void Baseline(std::string& out, const model::GoLiveReport& r) {
  if (!r.baseline) return;
  const auto& b = *r.baseline;
  out += fmt::format("<h2 id=\"baseline\">Changes since the baseline</h2>\n<p class=\"meta\">Baseline {} (created {}); "
                     "a pair counts as slower below {:.0f}% of its baseline bandwidth.</p>\n",
                     Escape(b.baseline), Escape(b.baseline_created_at), (1 - b.slower_threshold) * 100);
  if (b.changes.empty()) {
    out += "<p>No change.</p>\n";
    return;
  }
  out += "<table><thead><tr><th>Severity</th><th>Change</th><th>Object</th><th>Before</th><th>After</th><th>What</th>"
         "</tr></thead><tbody>\n";
  for (const auto& c : b.changes) {
    std::string sev(model::SeverityName(c.severity));
    out += fmt::format("<tr><td>{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td></tr>\n",
                       Pill(sev == "info" ? "manual" : sev == "warn" ? "warn" : "fail", sev), Escape(c.kind),
                       Escape(c.object), Escape(c.before), Escape(c.after), Escape(c.message));
  }
  out += "</tbody></table>\n";
}

}  // namespace

std::string RenderHtml(const model::GoLiveReport& r, const BundleEvidence& e) {
  std::string out;
  out.reserve(1 << 20);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>Go-live report: {} ({})</title>\n", r.go ? "GO" : "NO-GO", Escape(r.bundle));
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
  out += fmt::format("<h1>Go-live report</h1>\n<p class=\"meta\">{} · {} members · ladder run {} on {} (fabcheck {}) · "
                     "{:.0f} s</p>\n",
                     Escape(r.bundle), r.members.size(), Escape(r.created_at.empty() ? "?" : r.created_at),
                     Escape(r.coordinator.empty() ? "?" : r.coordinator), Escape(r.bundle_fabcheck_version), r.duration_s);
  out += fmt::format("<div class=\"verdict\"><span class=\"badge {}\">{}</span><div><div>{}</div><div class=\"counts\">",
                     r.go ? "go" : "nogo", r.go ? "GO" : "NO-GO", Escape(r.verdict_summary));
  out += fmt::format("<span class=\"c-pass\">{} pass</span><span class=\"c-fail\">{} fail</span>"
                     "<span class=\"c-unknown\">{} unknown</span><span class=\"c-manual\">{} manual</span>",
                     r.counts.pass, r.counts.fail, r.counts.unknown, r.counts.manual);
  out += "</div>";
  if (!r.first_failing_rung.empty()) {
    out += "<div>First failing rung: <b>" + Escape(r.first_failing_rung) + "</b> — fix it first: the rungs above it "
           "ran only on the members that passed it.</div>";
  }
  if (r.interrupted) out += "<div><b>Interrupted:</b> what was measured until then is kept.</div>";
  out += "</div></div>\n";
  Figure(out, plots::RungStrip(r), "", "The bundle records no rung.");
  Checklist(out, r);
  Rungs(out, r);

  out += "<h2 id=\"l3\">L3 RDMA bandwidth and latency</h2>\n";
  Figure(out, plots::BandwidthVsSize(e),
         "Bandwidth of each pair against message size. Green band: between the pass line (expected from the port "
         "rate and PCIe link) and the rate it derives from; red: failing pairs.",
         "No L3 bandwidth in this bundle.");
  Figure(out, plots::LatencyPercentiles(e), "Latency p50 and p99 of every pair, sorted by p99: normal bandwidth does "
                                            "not mean normal tail latency.",
         "No L3 latency in this bundle.");
  auto heatmaps = plots::PairHeatmaps(e);
  out += "<h3>Pairs per rail</h3>\n";
  if (heatmaps.empty()) out += "<p class=\"empty\">No pair was measured.</p>\n";
  out += "<div class=\"grid2\">";
  for (const auto& h : heatmaps) Figure(out, h, "", "");
  out += "</div>\n";
  if (e.manifest.members.size() > plots::kHeatmapMembers) {
    out += fmt::format("<p class=\"meta\">{} members: the heatmaps aggregate pairs per leaf switch (each cell shows "
                       "the worst pair between two leaves; hover for the pair).</p>\n",
                       e.manifest.members.size());
  }
  out += "<h2 id=\"l4\">L4 collectives</h2>\n";
  Figure(out, plots::BusBwVsSize(e), "Bus bandwidth as nccl-tests defines it, against its expectation.",
         "No collective in this bundle.");
  out += "<h2 id=\"topology\">Node topology</h2>\n";
  auto matrices = plots::DistanceMatrices(e, r.node_types);
  if (matrices.empty()) out += "<p class=\"empty\">No inventory with GPUs and NICs in this bundle.</p>\n";
  for (size_t i = 0; i < matrices.size(); ++i) Figure(out, matrices[i], "", "");
  out += "<h2 id=\"counters\">Counters during the run</h2>\n";
  Figure(out, plots::CounterDeltas(e),
         "Port and hardware counters that moved between the samples before and after each rung (red: errors, "
         "retries, drops; amber: flow control and congestion).",
         "No counter moved (or no counter samples in this bundle).");
  Baseline(out, r);
  Members(out, r);
  if (!r.notes.empty()) {
    out += "<h2>Notes</h2>" + List(r.notes, 200);
  }
  out += fmt::format("<footer>fabcheck report {} · schema {} · rendered offline from the bundle alone; nothing in this "
                     "page loads from the network.</footer>\n</main>\n</body>\n</html>\n",
                     Escape(r.fabcheck_version), r.schema);
  return out;
}

}  // namespace fabcheck::report
