#include "diagnose/counter_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace fabcheck::diagnose {

std::string MemberOrThisNode(const CounterSeries& s) { return s.member.empty() ? "the node" : s.member; }

std::string DeviceOf(const CounterSeries& s) { return s.object.substr(0, s.object.find('/')); }

void RunCounterRule(const CounterRuleSpec& spec, const Evidence& ev, std::vector<model::Diagnosis>* out) {
  // member|object -> series that rose
  std::map<std::string, std::vector<std::pair<const CounterSeries*, SeriesStats>>> rose;
  std::vector<std::string> order;
  for (const auto& s : ev.counters) {
    if (s.points.size() < 2 || !spec.matches(s.counter)) continue;
    SeriesStats st = Analyze(s);
    if (st.increase == 0) continue;
    std::string key = s.member + "|" + s.object;
    if (!rose.count(key)) order.push_back(key);
    rose[key].emplace_back(&s, st);
  }
  for (const auto& key : order) {
    auto& list = rose[key];
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.second.rate > b.second.rate; });
    bool persistent = std::any_of(list.begin(), list.end(), [](const auto& x) { return x.second.persistent; });
    bool fatal = std::any_of(list.begin(), list.end(), [&](const auto& x) {
      return x.second.persistent &&
             std::find(spec.fatal.begin(), spec.fatal.end(), x.first->counter) != spec.fatal.end();
    });
    int most = 0;
    for (const auto& x : list) most = std::max(most, x.second.longest_streak);
    std::vector<std::string> names;
    for (const auto& x : list) names.push_back(x.first->counter);
    const CounterSeries& first = *list.front().first;
    model::Severity severity = !persistent ? model::Severity::kInfo : fatal ? model::Severity::kFail : spec.severity;
    model::Confidence confidence = !persistent ? model::Confidence::kLow
                                   : most >= 3 ? model::Confidence::kHigh
                                               : model::Confidence::kMedium;
    std::string list_text;
    for (size_t i = 0; i < names.size() && i < 6; ++i) list_text += (i ? ", " : "") + names[i];
    if (names.size() > 6) list_text += fmt::format(" and {} more", names.size() - 6);
    auto d = Make(*spec.rule, severity, confidence, Where(first),
                  persistent ? fmt::format("{} rising on {} ({:.3g}/s for {})", list_text, Where(first),
                                           list.front().second.rate, list.front().first->counter)
                             : fmt::format("{} rose in one interval on {}; not yet persistent (the rule needs two "
                                           "consecutive rising intervals)",
                                           list_text, Where(first)));
    for (const auto& x : list) d.evidence.push_back(Describe(*x.first, x.second));
    spec.explain(names, first, &d);
    out->push_back(std::move(d));
  }
}

}  // namespace fabcheck::diagnose
