// Rung L1L2.cluster: the settings that must agree across nodes, each member
// compared with the majority and the outliers named. No single-node tool can
// make this check: a node with MTU 1500 among 9000 passes its own doctor.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "control/api.h"
#include "fabcheck/model/inventory.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::ladder {

// One member's values, setting -> value ("" = unknown on that member).
struct MemberSettings {
  std::string member;
  std::map<std::string, std::string> values;
};

// The settings compared, in report order, and how much a disagreement weighs.
struct SettingSpec {
  std::string name;
  bool fail = true;  // false: an outlier is a warning (versions, kernel)
  std::string what;  // for messages: "the data-plane MTU"
  std::string fix;   // what to do about an outlier
};
const std::vector<SettingSpec>& Settings();

// What a member reports: its inventory, the /v1/node "facts", and the agent's
// rails (the data-plane interfaces and their MTU). Multi-valued settings
// (one per port) are written as a sorted multiset, "4 x 400", so two nodes
// agree exactly when their ports agree.
MemberSettings ExtractSettings(const std::string& member, const model::Inventory& inv, const nlohmann::json& facts,
                               const std::vector<control::RailInfo>& rails);

// Majority per setting (the most common known value; a tie has no majority
// and every member with a known value is an outlier, since nobody can say
// which side is right), outliers, and the check's verdict: not_run when no
// member knows the value, fail/warn by the spec when there are outliers.
std::vector<model::ConsistencyCheck> CompareSettings(const std::vector<MemberSettings>& members);

// Findings for the outliers (one per setting and member), naming the value,
// the majority and the fix.
std::vector<model::Finding> ConsistencyFindings(const std::vector<model::ConsistencyCheck>& checks);

}  // namespace fabcheck::ladder
