// The shape most counter rules share: a list of error counters; per member
// and port, the ones that rose; a warning only when one rose in two
// consecutive intervals (the persistence rule), information when it rose once.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "diagnose/counters.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {

struct CounterRuleSpec {
  const Rule* rule;
  std::function<bool(const std::string& counter)> matches;
  model::Severity severity;  // when persistent
  // Causes, fix and next for the counters that rose (names given), on `where` (member object).
  std::function<void(const std::vector<std::string>& rising, const CounterSeries& first, model::Diagnosis* d)> explain;
  // Counters whose persistent rise raises the severity to fail.
  std::vector<std::string> fatal;
};

void RunCounterRule(const CounterRuleSpec& spec, const Evidence& ev, std::vector<model::Diagnosis>* out);

// "on node-a: fabcheck doctor --only L1,RoCE; ..." helpers.
std::string MemberOrThisNode(const CounterSeries& s);
std::string DeviceOf(const CounterSeries& s);  // "mlx5_0" from "mlx5_0/1"

}  // namespace fabcheck::diagnose
