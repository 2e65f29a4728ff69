// Rung L5 of the go-live report from `fabcheck kv run` results given beside
// the bundle: the ladder runs L1 to L4; the KV-cache transfer is judged
// against the same pair's L3 figure inside each kv result, and the rung's
// reason says which rung to look at when it falls short (the kv result's
// kv.below-l3 finding: L2 when the ends disagree, else the transfer pattern).
#include <fmt/format.h>

#include <algorithm>

#include "report/evidence.h"

namespace fabcheck::report {

namespace {

std::string HostOf(const std::string& host_port) {
  auto colon = host_port.rfind(':');
  return colon == std::string::npos ? host_port : host_port.substr(0, colon);
}

// The member a host belongs to (by its name, control host or data addresses), or "".
std::string MemberOf(const BundleEvidence& e, const std::string& host) {
  for (const auto& m : e.manifest.members) {
    if (m.id == host || m.name == host || HostOf(m.control) == host ||
        std::find(m.data_addresses.begin(), m.data_addresses.end(), host) != m.data_addresses.end()) {
      return m.id;
    }
  }
  return "";
}

void AddOnce(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace

model::RungResult KvRung(const BundleEvidence& e) {
  model::RungResult rung;
  rung.id = "L5";
  rung.title = "L5 KV-cache transfer";
  if (e.kv.empty()) {
    rung.reason = "no kv result given (fabcheck kv run --json, then fabcheck report --kv FILE)";
    return rung;
  }
  rung.verdict = model::RungVerdict::kPass;
  std::string fail_reason, warn_reason;
  std::vector<std::string> failed_members;
  for (const auto& k : e.kv) {
    const model::KvResult& r = k.result;
    const std::string pair = fmt::format("{} -> {}", r.client.host.empty() ? "?" : r.client.host, r.server);
    AddOnce(rung.evidence_files, k.file);
    const std::string prefill = MemberOf(e, r.client.host), decode = MemberOf(e, HostOf(r.server));
    AddOnce(rung.members, prefill);
    AddOnce(rung.members, decode);
    for (model::Finding f : r.findings) {
      if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) continue;
      f.object = fmt::format("{} ({})", prefill.empty() ? pair : prefill + " -> " + decode, f.object);
      if (f.severity == model::Severity::kWarn && warn_reason.empty() && f.id == "kv.below-l3") {
        warn_reason = fmt::format("{}: {}; {}", pair, f.message, f.remedy);
      }
      if (f.severity == model::Severity::kFail && fail_reason.empty()) {
        fail_reason = fmt::format("{}: {} ({}); {}", pair, f.message, f.id, f.remedy);
      }
      rung.findings.push_back(std::move(f));
    }
    if (!r.error.empty() && fail_reason.empty()) {
      fail_reason = fmt::format("{}: the transfer failed: {}; run L3 on this pair first (fabcheck perf run)", pair,
                                r.error);
    }
    const bool failed = !r.ok();
    if (failed) {
      AddOnce(failed_members, prefill);
      AddOnce(failed_members, decode);
      rung.verdict = model::RungVerdict::kFail;
    } else if (rung.verdict == model::RungVerdict::kPass &&
               std::any_of(r.findings.begin(), r.findings.end(),
                           [](const model::Finding& f) { return f.severity == model::Severity::kWarn; })) {
      rung.verdict = model::RungVerdict::kWarn;
    }
  }
  for (const auto& m : rung.members) {
    if (std::find(failed_members.begin(), failed_members.end(), m) == failed_members.end()) {
      rung.members_passed.push_back(m);
    }
  }
  if (rung.verdict == model::RungVerdict::kFail) {
    rung.reason = fail_reason;
  } else if (!warn_reason.empty()) {
    rung.reason = warn_reason;
  } else {
    size_t judged = std::count_if(e.kv.begin(), e.kv.end(), [](const KvEvidence& k) {
      return k.result.ratio_to_l3 && k.result.goal_ratio && *k.result.ratio_to_l3 >= *k.result.goal_ratio;
    });
    rung.reason = judged == e.kv.size()
                      ? fmt::format("{} transfer(s) at or above their L3 goal", judged)
                      : fmt::format("{} transfer(s) at or above their L3 goal, {} without an L3 figure (--no-l3)",
                                    judged, e.kv.size() - judged);
  }
  return rung;
}

}  // namespace fabcheck::report
