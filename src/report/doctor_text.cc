#include "report/doctor_text.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "checks/check.h"
#include "report/table.h"

namespace fabcheck::report {

std::string RenderDoctorText(const model::DoctorReport& report, bool verbose) {
  std::string out;
  out += fmt::format("fabcheck doctor on {} ({}){}\n", report.hostname.empty() ? "?" : report.hostname, report.sysroot,
                     report.profile.empty() ? "" : ", profile " + report.profile);
  if (!report.env_sources.empty()) out += "NCCL settings from: " + Join(report.env_sources, ", ") + "\n";
  if (!report.capture_note.empty()) out += "note: " + report.capture_note + "\n";
  auto mark = [](model::Severity s) -> const char* {
    switch (s) {
      case model::Severity::kPass: return "PASS";
      case model::Severity::kInfo: return "INFO";
      case model::Severity::kUnknown: return "UNKN";
      case model::Severity::kWarn: return "WARN";
      case model::Severity::kFail: return "FAIL";
    }
    return "?";
  };
  // Paths inside a capture are shown as the node's own (/proc/interrupts):
  // the header names the capture once; repeated per line it buries the reason.
  // (report.sysroot is SysRoot::Describe(): "capture PATH"; DisplayPath writes "PATH:/proc/...".)
  constexpr std::string_view kCapture = "capture ";
  const std::string capture_prefix =
      StartsWith(report.sysroot, kCapture) ? report.sysroot.substr(kCapture.size()) + ":" : "";
  auto local = [&](std::string text) {
    if (capture_prefix.empty()) return text;
    for (size_t at = text.find(capture_prefix); at != std::string::npos; at = text.find(capture_prefix, at + 1)) {
      if (at == 0 || text[at - 1] == ' ') text.erase(at, capture_prefix.size());  // the whole path only
    }
    return text;
  };
  // "  FAIL  pcie.downgraded      mlx5_3: ..."
  const TextTable lines({{"", 0}, {"", 20, Align::kLeft, 0, "  "}, {"", 0}}, {.indent = "  "});
  for (checks::Rung r : checks::kAllRungs) {
    std::string group(checks::RungName(r));
    bool header = false;
    for (const auto& f : report.findings) {
      if (f.group != group) continue;
      if (!header) {
        out += fmt::format("\n== {}: {}\n", group, checks::RungTitle(r));
        header = true;
      }
      out += lines.Row({mark(f.severity), f.id, local(f.object + ": " + f.message)});
      // An unknown because the capture predates the check is explained once,
      // in the note at the top; its own lines would repeat it.
      bool detail = verbose || f.severity == model::Severity::kWarn || f.severity == model::Severity::kFail ||
                    (f.severity == model::Severity::kUnknown && f.subject != "capture");
      if (detail) {
        for (const auto& e : f.evidence) out += "        evidence: " + local(e) + "\n";
        if (!f.remedy.empty()) out += "        fix: " + f.remedy + "\n";
      }
    }
  }
  const auto& s = report.summary;
  out += fmt::format("\n{} fail, {} warn, {} unknown, {} info, {} pass", s.fail, s.warn, s.unknown, s.info, s.pass);
  if (!s.first_failing_rung.empty()) {
    out += fmt::format(" -- fix group {} first: the groups after it may fail only because of it", s.first_failing_rung);
  }
  out += "\n";
  if (s.unknown > 0) {
    out += s.strict ? fmt::format("{} unknown: not checked, so not a pass (--strict: exit 1)\n", s.unknown)
                    : fmt::format("{} unknown: not checked, so not a pass; --strict makes an unknown exit 1\n", s.unknown);
  }
  return out;
}

}  // namespace fabcheck::report
