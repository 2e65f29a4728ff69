// counters.pause, counters.ecn-no-cnp and counters.reset.
#include <fmt/format.h>

#include <map>
#include <set>

#include "base/strings.h"
#include "diagnose/counter_rule.h"

namespace fabcheck::diagnose {
namespace {
void RunPause(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunEcn(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunReset(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kCountersPause = {
    "counters.pause", "counters",
    "PFC pause frames (ethtool rx_prio<p>_pause / tx_prio<p>_pause, their durations, pause storms) rise in two "
    "consecutive intervals",
    "Pause is how lossless RoCE avoids drops, but sustained pause is congestion: rx pause means the network pushes "
    "back on this NIC, tx pause means this host cannot drain what it receives. A pause storm stalls the whole "
    "priority.",
    "rx pause: find the congested downstream port (incast, a slow receiver, ECN/DCQCN off so senders never slow "
    "down); tx pause: this host's receive path (PCIe, NUMA, out_of_buffer).",
    &RunPause};

extern const Rule kCountersEcnNoCnp = {
    "counters.ecn-no-cnp", "counters",
    "ECN-marked packets arrive but no CNP is sent, CNPs are ignored, or no CNP was ever sent or handled while "
    "traffic flowed under congestion",
    "DCQCN needs the receiver (notification point) to answer ECN marks with CNPs and the sender (reaction point) "
    "to slow down on them. Without it congestion turns into PFC pause storms or drops.",
    "Enable RoCE congestion control for the traffic's priority on both NICs (/sys/class/net/<if>/ecn/roce_np and "
    "roce_rp enable/<prio>, or the vendor tool), and ECN marking on the switches for that queue.",
    &RunEcn};

extern const Rule kCountersReset = {
    "counters.reset", "counters", "A counter went down between two samples (reset)",
    "A reboot, a driver reload or a counter clear resets counters. Deltas across a reset would be negative; "
    "diagnose counts from zero after it instead, so the figures are a lower bound for that interval.",
    "Nothing to fix; if it was not expected, look for the reboot or driver reload (uptime, dmesg).", &RunReset};

namespace {

// "rx_prio3_pause" -> {"rx", 3, "pause"}
bool SplitPriority(const std::string& n, std::string* dir, int* prio, std::string* what) {
  if (!(StartsWith(n, "rx_prio") || StartsWith(n, "tx_prio")) || n.size() < 9) return false;
  *dir = n.substr(0, 2);
  size_t us = n.find('_', 7);
  if (us == std::string::npos) return false;
  auto p = ParseInt(n.substr(7, us - 7));
  if (!p) return false;
  *prio = static_cast<int>(*p);
  *what = n.substr(us + 1);
  return true;
}

void RunPause(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  CounterRuleSpec spec;
  spec.rule = &kCountersPause;
  // Some pause is PFC doing its job: information, unless the port spends more
  // than 1% of the time paused, pauses over 1000 times a second, or storms.
  spec.severity = model::Severity::kInfo;
  spec.matches = [](const std::string& n) {
    std::string dir, what;
    int prio = 0;
    if (SplitPriority(n, &dir, &prio, &what)) return what == "pause" || what == "pause_duration";
    return StartsWith(n, "tx_pause_storm") || n == "rx_global_pause" || n == "tx_global_pause";
  };
  spec.explain = [&ev](const std::vector<std::string>& rising, const CounterSeries& s, model::Diagnosis* d) {
    std::set<int> rx, tx;
    bool storm = false;
    for (const auto& n : rising) {
      std::string dir, what;
      int prio = 0;
      if (SplitPriority(n, &dir, &prio, &what)) (dir == "rx" ? rx : tx).insert(prio);
      storm |= StartsWith(n, "tx_pause_storm");
    }
    // Share of time paused, from the duration counters (microseconds).
    for (const auto& n : rising) {
      if (!EndsWith(n, "_pause_duration")) continue;
      if (const auto* sib = Sibling(ev, s, n)) {
        SeriesStats st = Analyze(*sib);
        if (st.seconds > 0) {
          d->evidence.push_back(fmt::format("{}: paused {:.2f}% of the time", n, st.increase / 1e6 / st.seconds * 100));
          if (st.increase / 1e6 / st.seconds > 0.01 && st.persistent) d->severity = model::Severity::kWarn;
        }
      }
    }
    for (const auto& n : rising) {
      if (!EndsWith(n, "_pause")) continue;
      if (const auto* sib = Sibling(ev, s, n)) {
        SeriesStats st = Analyze(*sib);
        if (st.persistent && st.rate > 1000) d->severity = model::Severity::kWarn;
      }
    }
    if (storm) {
      d->severity = model::Severity::kFail;
      d->causes.push_back("a pause storm: the NIC kept pausing the link (a stuck receive path on this host)");
    }
    for (int p : rx) {
      d->causes.push_back(fmt::format("priority {}: the switch pauses this NIC (rx): congestion downstream "
                                      "(incast, a slow receiver), or ECN/DCQCN not slowing the senders",
                                      p));
    }
    for (int p : tx) {
      d->causes.push_back(fmt::format("priority {}: this NIC pauses the switch (tx): the host cannot drain its "
                                      "receive queues (PCIe bound, NUMA-remote buffers, out_of_buffer)",
                                      p));
    }
    d->fix = kCountersPause.fix;
    d->next = fmt::format("on {}: fabcheck doctor --only RoCE (ECN per priority, PFC, trust); watch "
                          "np_ecn_marked_roce_packets / np_cnp_sent / rp_cnp_handled with the same samples",
                          MemberOrThisNode(s));
  };
  RunCounterRule(spec, ev, out);
}

struct Port {
  const CounterSeries* any = nullptr;
  uint64_t marked = 0, cnp_sent = 0, cnp_handled = 0, cnp_ignored = 0, traffic = 0, congestion = 0;
  bool has_marked = false, has_sent = false, has_handled = false, has_ignored = false;
  int ignored_streak = 0, marked_streak = 0;
  std::vector<std::string> evidence;
};

void RunEcn(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  std::map<std::string, Port> ports;
  std::vector<std::string> order;
  for (const auto& s : ev.counters) {
    if (s.points.size() < 2) continue;
    std::string key = s.member + "|" + s.object;
    const std::string& n = s.counter;
    bool relevant = n == "np_ecn_marked_roce_packets" || n == "cc_rx_ce_pkts" || n == "np_cnp_sent" ||
                    n == "rp_cnp_handled" || n == "rp_cnp_ignored" || n == "port_xmit_data" || n == "port_rcv_data" ||
                    (StartsWith(n, "rx_prio") && EndsWith(n, "_marked")) ||
                    (StartsWith(n, "rx_prio") && EndsWith(n, "_pause")) || n == "port_xmit_wait";
    if (!relevant) continue;
    if (!ports.count(key)) order.push_back(key);
    Port& p = ports[key];
    if (!p.any) p.any = &s;
    SeriesStats st = Analyze(s);
    if (n == "np_ecn_marked_roce_packets" || n == "cc_rx_ce_pkts" || EndsWith(n, "_marked")) {
      p.has_marked = true;
      p.marked += st.increase;
      p.marked_streak = std::max(p.marked_streak, st.longest_streak);
      if (st.increase) p.evidence.push_back(Describe(s, st));
    } else if (n == "np_cnp_sent") {
      p.has_sent = true;
      p.cnp_sent += st.increase + s.points.back().value;  // ever sent
      p.evidence.push_back(Describe(s, st));
    } else if (n == "rp_cnp_handled") {
      p.has_handled = true;
      p.cnp_handled += st.increase + s.points.back().value;
      p.evidence.push_back(Describe(s, st));
    } else if (n == "rp_cnp_ignored") {
      p.has_ignored = true;
      p.cnp_ignored += st.increase;
      p.ignored_streak = std::max(p.ignored_streak, st.longest_streak);
      if (st.increase) p.evidence.push_back(Describe(s, st));
    } else if (n == "port_xmit_data" || n == "port_rcv_data") {
      p.traffic += st.increase;
    } else {
      p.congestion += st.increase;
      if (st.increase) p.evidence.push_back(Describe(s, st));
    }
  }
  for (const auto& key : order) {
    Port& p = ports[key];
    if (!p.has_sent && !p.has_handled && !p.has_ignored) continue;  // no congestion-control counters at all
    const CounterSeries& s = *p.any;
    std::string where = Where(s);
    auto add = [&](model::Severity sev, model::Confidence conf, std::string message, std::vector<std::string> causes) {
      auto d = Make(kCountersEcnNoCnp, sev, conf, where, std::move(message));
      d.evidence = p.evidence;
      d.causes = std::move(causes);
      d.fix = kCountersEcnNoCnp.fix;
      d.next = fmt::format("on {}: fabcheck doctor --only RoCE (ECN enable per priority for {}, trust mode, the "
                           "traffic class NCCL_IB_TC maps to)",
                           MemberOrThisNode(s), s.object);
      out->push_back(std::move(d));
    };
    if (p.marked > 0 && p.has_sent && p.cnp_sent == 0 && p.marked_streak >= 2) {
      add(model::Severity::kWarn, model::Confidence::kHigh,
          fmt::format("{} ECN-marked packets arrived on {} but no CNP was ever sent", p.marked, where),
          {"the notification point (roce_np) is disabled for the traffic's priority on this NIC",
           "the traffic arrives on a priority other than the one ECN is enabled for (DSCP / trust mapping)"});
    } else if (p.cnp_ignored > 0 && p.ignored_streak >= 2) {
      add(model::Severity::kWarn, model::Confidence::kHigh,
          fmt::format("{} CNPs were ignored by the reaction point on {}: senders do not slow down", p.cnp_ignored, where),
          {"the reaction point (roce_rp) is disabled for that priority on this NIC",
           "CNPs arrive on a priority with congestion control off"});
    } else if (p.has_sent && p.has_handled && p.cnp_sent == 0 && p.cnp_handled == 0 && p.traffic > 0) {
      bool congested = p.congestion > 0;
      add(congested ? model::Severity::kWarn : model::Severity::kInfo,
          congested ? model::Confidence::kMedium : model::Confidence::kLow,
          fmt::format("no CNP was ever sent or handled on {} while traffic flowed{}", where,
                      congested ? " and PFC pause / xmit wait show congestion" : ""),
          {"ECN marking is off on the switches for this queue (so no packet is ever marked)",
           "DCQCN is off on the NICs (roce_np / roce_rp enable for the priority)",
           congested ? "the congestion is handled by PFC pause alone: pause storms and head-of-line blocking"
                     : "no congestion happened in these intervals (then nothing is wrong)"});
    }
  }
}

void RunReset(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  std::map<std::string, std::vector<std::string>> by_port;
  std::vector<std::string> order;
  for (const auto& s : ev.counters) {
    SeriesStats st = Analyze(s);
    if (st.resets == 0) continue;
    std::string key = Where(s);
    if (!by_port.count(key)) order.push_back(key);
    by_port[key].push_back(fmt::format("{} went down at {} ({} reset(s))", s.counter, Join(st.reset_at, ", "), st.resets));
  }
  for (const auto& key : order) {
    auto d = Make(kCountersReset, model::Severity::kInfo, model::Confidence::kHigh, key,
                  fmt::format("{} counter(s) on {} were reset between samples; deltas count from zero after the reset",
                              by_port[key].size(), key));
    for (size_t i = 0; i < by_port[key].size() && i < 8; ++i) d.evidence.push_back(by_port[key][i]);
    d.causes = {"a reboot or driver reload (mlx5_core / mlx5_ib)", "counters cleared by hand or by a tool",
                "the samples come from different hosts under one name"};
    d.fix = kCountersReset.fix;
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
