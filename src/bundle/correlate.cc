#include "bundle/correlate.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <array>

namespace fabcheck::bundle {
namespace {

// Physical-layer errors: each is the port's own receiver or link state
// (IBTA PortCounters; the kernel's names under ports/N/counters).
constexpr std::array<std::string_view, 7> kLinkErrors = {
    "symbol_error",        "port_rcv_errors",          "link_error_recovery",
    "link_downed",         "local_link_integrity_errors", "port_rcv_remote_physical_errors",
    "excessive_buffer_overrun_errors"};

// Symbol errors, link recoveries and downs come from the wire itself; a
// receive error alone can also be a malformed packet from the far end.
bool IsPhysical(std::string_view counter) {
  return counter == "symbol_error" || counter == "link_error_recovery" || counter == "link_downed" ||
         counter == "local_link_integrity_errors";
}

// Whether `object` ("mlx5_1/1") is a port of `device` ("mlx5_1").
bool PortOf(const std::string& object, const std::string& device) {
  return !device.empty() && object.size() > device.size() && object.compare(0, device.size(), device) == 0 &&
         object[device.size()] == '/';
}

struct EndErrors {
  std::string member, port;
  int64_t total = 0;
  bool physical = false;
  std::vector<std::string> parts;  // "symbol_error +5212"
};

EndErrors ErrorsAt(const std::vector<model::CounterDelta>& deltas, const std::string& member) {
  EndErrors e;
  e.member = member;
  for (const auto& d : deltas) {
    if (d.member != member || d.delta <= 0 || !IsLinkErrorCounter(d.counter)) continue;
    e.port = d.object;
    e.total += d.delta;
    e.physical |= IsPhysical(d.counter);
    e.parts.push_back(fmt::format("{} +{}", d.counter, d.delta));
  }
  return e;
}

}  // namespace

bool IsLinkErrorCounter(std::string_view counter) {
  for (auto name : kLinkErrors) {
    if (counter == name) return true;
  }
  return false;
}

void CorrelatePairCounters(model::RungResult& rung) {
  for (auto& pair : rung.pairs) {
    pair.counters.clear();
    pair.suspect.reset();
    if (pair.verdict != model::RungVerdict::kFail) continue;
    for (const auto& d : rung.counter_deltas) {
      if ((d.member == pair.a && PortOf(d.object, pair.device_a)) ||
          (d.member == pair.b && PortOf(d.object, pair.device_b))) {
        pair.counters.push_back(d);
      }
    }
    EndErrors a = ErrorsAt(pair.counters, pair.a);
    EndErrors b = ErrorsAt(pair.counters, pair.b);
    if (a.total == 0 && b.total == 0) continue;
    auto describe = [&](const EndErrors& e, const std::string& device) {
      return e.total > 0 ? fmt::format("{} {}: {}", e.member, e.port, fmt::join(e.parts, ", "))
                         : fmt::format("{} {}: no link error", e.member, device.empty() ? "(port unknown)" : device);
    };
    model::PairSuspect s;
    s.element = "NIC or cable";
    if (a.total > 0 && b.total > 0) {
      // Both ends count errors: the cable between them (or either optic).
      const EndErrors& worse = a.total >= b.total ? a : b;
      s.member = worse.member;
      s.port = worse.port;
      s.element = "cable (both ends count link errors)";
      s.confidence = "medium";
    } else {
      const EndErrors& bad = a.total > 0 ? a : b;
      s.member = bad.member;
      s.port = bad.port;
      s.confidence = bad.physical ? "high" : "medium";
    }
    s.why = fmt::format("{} in {} while {} -> {} rail {} failed; {}", describe(a.total > 0 ? a : b,
                                                                                 a.total > 0 ? pair.device_a : pair.device_b),
                        rung.id, pair.a, pair.b, pair.rail,
                        describe(a.total > 0 ? b : a, a.total > 0 ? pair.device_b : pair.device_a));
    pair.suspect = std::move(s);
  }
}

model::Finding SuspectFinding(const model::RungResult& rung, const model::PairTest& p) {
  model::Finding f;
  f.id = "ladder.perf.link-errors";
  f.severity = model::Severity::kFail;
  f.group = rung.id;
  if (!p.suspect) return f;
  f.object = p.suspect->member + " " + p.suspect->port;
  f.message = fmt::format("{} of {} is the suspect ({} confidence): its port counted link errors while {} -> {} rail {} "
                          "failed",
                          p.suspect->element, f.object, p.suspect->confidence, p.a, p.b, p.rail);
  f.evidence.push_back(fmt::format("{} -> {} rail {}: {}", p.a, p.b, p.rail, p.reason));
  for (const auto& d : p.counters) {
    f.evidence.push_back(fmt::format("{} {} {} +{} over {:.0f} s", d.member, d.object, d.counter, d.delta, d.interval_s));
  }
  f.remedy = fmt::format("reseat or replace the cable and transceiver of {} (then the NIC if the errors follow it); "
                         "watch its symbol_error and port_rcv_errors while rerunning this pair",
                         f.object);
  return f;
}

}  // namespace fabcheck::bundle
