#include "fabric/fabric.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "base/input.h"
#include "base/strings.h"

namespace fabcheck::fabric {
namespace {

constexpr int kMaxRails = 64;

Result<std::string> Scalar(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) return InvalidArgumentError(fmt::format("{} must be a string", where));
  std::string s(Trim(node.as<std::string>()));
  if (s.empty()) return InvalidArgumentError(fmt::format("{} is empty", where));
  return s;
}

Result<std::vector<std::string>> Names(const YAML::Node& node, const std::string& where) {
  if (!node.IsSequence()) return InvalidArgumentError(fmt::format("{} must be a list of names", where));
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i) {
    ASSIGN_OR_RETURN(std::string s, Scalar(node[i], fmt::format("{}[{}]", where, i)));
    out.push_back(std::move(s));
  }
  return out;
}

// One rail's switches: names, or {name, addresses} maps. Returns whether any
// lists addresses.
Result<bool> Switches(const YAML::Node& node, const std::string& where, const char* what,
                      std::vector<std::string>* names, std::vector<std::vector<std::string>>* addresses) {
  if (!node.IsSequence()) return InvalidArgumentError(fmt::format("{} must be a list of {} names", where, what));
  bool any = false;
  for (size_t s = 0; s < node.size(); ++s) {
    const YAML::Node sw = node[s];
    const std::string at = fmt::format("{}[{}]", where, s);
    if (!sw.IsMap()) {
      ASSIGN_OR_RETURN(std::string name, Scalar(sw, at));
      names->push_back(std::move(name));
      addresses->emplace_back();
      continue;
    }
    for (auto it = sw.begin(); it != sw.end(); ++it) {
      std::string key = it->first.as<std::string>();
      if (key != "name" && key != "addresses") {
        return InvalidArgumentError(fmt::format("{}: unknown key '{}' (known: name, addresses)", at, key));
      }
    }
    if (!sw["name"]) return InvalidArgumentError(at + " has no name");
    ASSIGN_OR_RETURN(std::string name, Scalar(sw["name"], at + ".name"));
    std::vector<std::string> list;
    if (sw["addresses"]) {
      ASSIGN_OR_RETURN(list, Names(sw["addresses"], at + ".addresses"));
    }
    any = any || !list.empty();
    names->push_back(std::move(name));
    addresses->push_back(std::move(list));
  }
  return any;
}

Result<Fabric> FromYaml(const YAML::Node& root, std::string_view origin) {
  if (!root.IsMap()) {
    return InvalidArgumentError(fmt::format("{}: a fabric file is a mapping with schema: {}, rails and members",
                                            origin, kFabricSchema));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    std::string key = it->first.as<std::string>();
    if (key != "schema" && key != "rails" && key != "spines" && key != "cores" && key != "members" &&
        key != "source") {
      return InvalidArgumentError(fmt::format("{}: unknown key '{}' (known: schema, rails, spines, cores, members, "
                                              "source)", origin, key));
    }
  }
  if (!root["schema"] || !root["schema"].IsScalar() || root["schema"].as<std::string>() != kFabricSchema) {
    return InvalidArgumentError(fmt::format("{}: schema must be {} (add 'schema: {}' at the top)", origin,
                                            kFabricSchema, kFabricSchema));
  }
  Fabric f;
  f.source = root["source"] && root["source"].IsScalar() ? root["source"].as<std::string>()
                                                         : fmt::format("file {}", origin);
  if (root["rails"]) {
    auto rails = root["rails"].IsScalar() ? ParseInt(root["rails"].as<std::string>()) : std::nullopt;
    if (!rails || *rails < 1 || *rails > kMaxRails) {
      return InvalidArgumentError(fmt::format("{}: rails must be a whole number 1..{}", origin, kMaxRails));
    }
    f.rails = static_cast<int>(*rails);
  }
  const YAML::Node members = root["members"];
  if (!members || !members.IsSequence() || members.size() == 0) {
    return InvalidArgumentError(fmt::format("{}: members must be a non-empty list of "
                                            "{{name: ..., leaves: [leaf of rail 0, ...]}}", origin));
  }
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string where = fmt::format("{}: members[{}]", origin, i);
    const YAML::Node m = members[i];
    if (!m.IsMap()) return InvalidArgumentError(where + " must be a mapping with name and leaves (or leaf)");
    for (auto it = m.begin(); it != m.end(); ++it) {
      std::string key = it->first.as<std::string>();
      if (key != "name" && key != "address" && key != "leaves" && key != "leaf" && key != "rack") {
        return InvalidArgumentError(
            fmt::format("{}: unknown key '{}' (known: name, address, leaves, leaf, rack)", where, key));
      }
    }
    Member member;
    if (!m["name"]) return InvalidArgumentError(where + " has no name (give the node's hostname)");
    ASSIGN_OR_RETURN(member.name, Scalar(m["name"], where + ".name"));
    if (m["address"]) {
      ASSIGN_OR_RETURN(member.address, Scalar(m["address"], where + ".address"));
    }
    if (m["rack"]) {
      ASSIGN_OR_RETURN(member.rack, Scalar(m["rack"], where + ".rack"));
    }
    if (m["leaves"] && m["leaf"]) return InvalidArgumentError(where + " has both leaf and leaves: keep one");
    if (m["leaves"]) {
      ASSIGN_OR_RETURN(member.leaves, Names(m["leaves"], where + ".leaves"));
    } else if (m["leaf"]) {
      ASSIGN_OR_RETURN(std::string leaf, Scalar(m["leaf"], where + ".leaf"));
      member.leaves.assign(f.rails, leaf);
    } else {
      return InvalidArgumentError(where + " (" + member.name + ") has no leaves: give leaves: [one per rail] or leaf:");
    }
    f.members.push_back(std::move(member));
  }
  if (root["spines"]) {
    const YAML::Node spines = root["spines"];
    if (!spines.IsSequence()) {
      return InvalidArgumentError(fmt::format("{}: spines must be a list with one list of spine names per rail", origin));
    }
    bool any_address = false;
    for (size_t r = 0; r < spines.size(); ++r) {
      f.spines.emplace_back();
      f.spine_addresses.emplace_back();
      ASSIGN_OR_RETURN(bool any, Switches(spines[r], fmt::format("{}: spines[{}]", origin, r), "spine",
                                          &f.spines.back(), &f.spine_addresses.back()));
      any_address = any_address || any;
    }
    if (!any_address) f.spine_addresses.clear();
  }
  if (root["cores"]) {
    const YAML::Node cores = root["cores"];
    if (!cores.IsSequence()) {
      return InvalidArgumentError(fmt::format("{}: cores must be a list with one list of core names per rail", origin));
    }
    bool any_address = false;
    for (size_t r = 0; r < cores.size(); ++r) {
      f.cores.emplace_back();
      f.core_addresses.emplace_back();
      ASSIGN_OR_RETURN(bool any, Switches(cores[r], fmt::format("{}: cores[{}]", origin, r), "core",
                                          &f.cores.back(), &f.core_addresses.back()));
      any_address = any_address || any;
    }
    if (!any_address) f.core_addresses.clear();
  }
  RETURN_IF_ERROR(ValidateFabric(f));
  return f;
}

}  // namespace

Status ValidateFabric(const Fabric& f) {
  if (f.rails < 1 || f.rails > kMaxRails) return InvalidArgumentError(fmt::format("rails {} is not 1..{}", f.rails, kMaxRails));
  if (f.members.empty()) return InvalidArgumentError("the fabric has no members");
  std::set<std::pair<std::string, std::string>> seen;
  std::map<std::string, int> names;
  for (size_t i = 0; i < f.members.size(); ++i) {
    const Member& m = f.members[i];
    if (m.name.empty()) return InvalidArgumentError(fmt::format("members[{}] has no name", i));
    if (static_cast<int>(m.leaves.size()) != f.rails) {
      return InvalidArgumentError(fmt::format("members[{}] ({}) lists {} leaves for {} rails: give one leaf per rail, "
                                              "in rail order", i, m.name, m.leaves.size(), f.rails));
    }
    for (size_t r = 0; r < m.leaves.size(); ++r) {
      if (m.leaves[r].empty()) return InvalidArgumentError(fmt::format("members[{}] ({}) rail {} has no leaf", i, m.name, r));
    }
    if (!seen.insert({m.name, m.address}).second) {
      return InvalidArgumentError(fmt::format("members[{}]: {}{} is listed twice; give each member once (two members "
                                              "with one hostname need different address: fields)", i, m.name,
                                              m.address.empty() ? "" : " (" + m.address + ")"));
    }
    ++names[m.name];
  }
  for (size_t i = 0; i < f.members.size(); ++i) {
    const Member& m = f.members[i];
    if (names[m.name] > 1 && m.address.empty()) {
      return InvalidArgumentError(fmt::format("members[{}]: {} names {} members; give each of them its address: so "
                                              "findings can tell them apart", i, m.name, names[m.name]));
    }
  }
  if (!f.spines.empty() && static_cast<int>(f.spines.size()) != f.rails) {
    return InvalidArgumentError(fmt::format("spines lists {} rails for {} rails: one list of spines per rail",
                                            f.spines.size(), f.rails));
  }
  if (!f.cores.empty() && (static_cast<int>(f.cores.size()) != f.rails || f.spines.empty())) {
    return InvalidArgumentError(fmt::format("cores lists {} rails for {} rails: one list of cores per rail, with the "
                                            "spines below them", f.cores.size(), f.rails));
  }
  if (!f.spine_addresses.empty() && f.spine_addresses.size() != f.spines.size()) {
    return InvalidArgumentError("spine addresses are given for a different number of rails than spines");
  }
  if (!f.core_addresses.empty() && f.core_addresses.size() != f.cores.size()) {
    return InvalidArgumentError("core addresses are given for a different number of rails than cores");
  }
  for (size_t r = 0; r < f.spine_addresses.size(); ++r) {
    if (f.spine_addresses[r].size() != f.spines[r].size()) {
      return InvalidArgumentError(fmt::format("spines[{}]: addresses for {} spines, {} spines", r,
                                              f.spine_addresses[r].size(), f.spines[r].size()));
    }
  }
  for (size_t r = 0; r < f.core_addresses.size(); ++r) {
    if (f.core_addresses[r].size() != f.cores[r].size()) {
      return InvalidArgumentError(fmt::format("cores[{}]: addresses for {} cores, {} cores", r,
                                              f.core_addresses[r].size(), f.cores[r].size()));
    }
  }
  // An address names one router of a rail, spine or core.
  for (int r = 0; r < f.rails; ++r) {
    std::map<std::string, std::string> owner;
    auto check = [&](const std::vector<std::vector<std::vector<std::string>>>& addresses,
                     const std::vector<std::vector<std::string>>& names, const char* list) -> Status {
      if (static_cast<size_t>(r) >= addresses.size()) return Status::Ok();
      for (size_t s = 0; s < names[r].size(); ++s) {
        for (const auto& a : addresses[r][s]) {
          auto [it, added] = owner.emplace(a, names[r][s]);
          if (!added && it->second != names[r][s]) {
            return InvalidArgumentError(fmt::format("{}[{}]: address {} is given for both {} and {}: an address "
                                                    "names one router", list, r, a, it->second, names[r][s]));
          }
        }
      }
      return Status::Ok();
    };
    RETURN_IF_ERROR(check(f.spine_addresses, f.spines, "spines"));
    RETURN_IF_ERROR(check(f.core_addresses, f.cores, "cores"));
  }
  return Status::Ok();
}

Result<Fabric> ParseFabric(std::string_view text, std::string_view origin) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
    return FromYaml(root, origin);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}: not valid YAML or JSON at line {}, column {}: {}", origin,
                                            e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

Result<Fabric> LoadFabric(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileBounded(path));
  return ParseFabric(text, path);
}

nlohmann::json ToJson(const Fabric& f) {
  nlohmann::json j = {{"schema", kFabricSchema}, {"source", f.source}, {"rails", f.rails}};
  if (!f.spines.empty()) {
    j["spines"] = nlohmann::json::array();
    for (size_t r = 0; r < f.spines.size(); ++r) {
      nlohmann::json rail = nlohmann::json::array();
      for (size_t s = 0; s < f.spines[r].size(); ++s) {
        const bool addressed = r < f.spine_addresses.size() && !f.spine_addresses[r][s].empty();
        rail.push_back(addressed ? nlohmann::json{{"name", f.spines[r][s]}, {"addresses", f.spine_addresses[r][s]}}
                                 : nlohmann::json(f.spines[r][s]));
      }
      j["spines"].push_back(std::move(rail));
    }
  }
  if (!f.cores.empty()) {
    j["cores"] = nlohmann::json::array();
    for (size_t r = 0; r < f.cores.size(); ++r) {
      nlohmann::json rail = nlohmann::json::array();
      for (size_t c = 0; c < f.cores[r].size(); ++c) {
        const bool addressed = r < f.core_addresses.size() && !f.core_addresses[r][c].empty();
        rail.push_back(addressed ? nlohmann::json{{"name", f.cores[r][c]}, {"addresses", f.core_addresses[r][c]}}
                                 : nlohmann::json(f.cores[r][c]));
      }
      j["cores"].push_back(std::move(rail));
    }
  }
  j["members"] = nlohmann::json::array();
  for (const Member& m : f.members) {
    nlohmann::json e = {{"name", m.name}};
    if (!m.address.empty()) e["address"] = m.address;
    if (!m.rack.empty()) e["rack"] = m.rack;
    e["leaves"] = m.leaves;
    j["members"].push_back(std::move(e));
  }
  return j;
}

std::string ToYaml(const Fabric& f) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "schema" << YAML::Value << std::string(kFabricSchema);
  out << YAML::Key << "source" << YAML::Value << f.source;
  out << YAML::Key << "rails" << YAML::Value << f.rails;
  if (!f.spines.empty()) {
    out << YAML::Key << "spines" << YAML::Value << YAML::BeginSeq;
    for (size_t r = 0; r < f.spines.size(); ++r) {
      out << YAML::Flow << YAML::BeginSeq;
      for (size_t s = 0; s < f.spines[r].size(); ++s) {
        if (r < f.spine_addresses.size() && !f.spine_addresses[r][s].empty()) {
          out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << f.spines[r][s] << YAML::Key << "addresses"
              << YAML::Value << f.spine_addresses[r][s] << YAML::EndMap;
        } else {
          out << f.spines[r][s];
        }
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndSeq;
  }
  if (!f.cores.empty()) {
    out << YAML::Key << "cores" << YAML::Value << YAML::BeginSeq;
    for (size_t r = 0; r < f.cores.size(); ++r) {
      out << YAML::Flow << YAML::BeginSeq;
      for (size_t c = 0; c < f.cores[r].size(); ++c) {
        if (r < f.core_addresses.size() && !f.core_addresses[r][c].empty()) {
          out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << f.cores[r][c] << YAML::Key << "addresses"
              << YAML::Value << f.core_addresses[r][c] << YAML::EndMap;
        } else {
          out << f.cores[r][c];
        }
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
  for (const Member& m : f.members) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.name;
    if (!m.address.empty()) out << YAML::Key << "address" << YAML::Value << m.address;
    if (!m.rack.empty()) out << YAML::Key << "rack" << YAML::Value << m.rack;
    out << YAML::Key << "leaves" << YAML::Value << YAML::Flow << m.leaves << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

FabricIndex::FabricIndex(const Fabric& f) : rails_(f.rails) {
  leaf_names_.resize(rails_);
  leaf_members_.resize(rails_);
  spines_ = f.spines;
  spines_.resize(rails_);
  cores_ = f.cores;
  cores_.resize(rails_);
  spine_of_router_.resize(rails_);
  core_of_router_.resize(rails_);
  for (int r = 0; r < rails_ && r < static_cast<int>(f.spine_addresses.size()); ++r) {
    for (size_t s = 0; s < f.spine_addresses[r].size(); ++s) {
      for (const auto& a : f.spine_addresses[r][s]) spine_of_router_[r].emplace(a, static_cast<int>(s));
    }
  }
  for (int r = 0; r < rails_ && r < static_cast<int>(f.core_addresses.size()); ++r) {
    for (size_t c = 0; c < f.core_addresses[r].size(); ++c) {
      for (const auto& a : f.core_addresses[r][c]) core_of_router_[r].emplace(a, static_cast<int>(c));
    }
  }
  std::vector<std::map<std::string, int>> ids(rails_);
  std::map<std::string, int> name_count;
  for (const Member& m : f.members) ++name_count[m.name];
  for (size_t i = 0; i < f.members.size(); ++i) {
    const Member& m = f.members[i];
    std::vector<int> row(rails_);
    for (int r = 0; r < rails_; ++r) {
      auto [it, added] = ids[r].emplace(m.leaves[r], static_cast<int>(leaf_names_[r].size()));
      if (added) {
        leaf_names_[r].push_back(m.leaves[r]);
        leaf_members_[r].emplace_back();
      }
      row[r] = it->second;
      leaf_members_[r][it->second].push_back(static_cast<int>(i));
    }
    leaf_of_.push_back(std::move(row));
    // A name shared by two members finds neither: only the address does.
    if (name_count[m.name] == 1) by_key_[m.name] = static_cast<int>(i);
    if (!m.address.empty()) by_key_[m.address] = static_cast<int>(i);
  }
}

int FabricIndex::CoreOfRouter(int rail, std::string_view address) const {
  if (rail < 0 || rail >= rails_) return -1;
  auto it = core_of_router_[rail].find(address);
  return it == core_of_router_[rail].end() ? -1 : it->second;
}

FabricIndex::RouterPath FabricIndex::PathOfHops(int rail, const std::vector<std::string>& hops) const {
  RouterPath p;
  for (const std::string& hop : hops) {
    if (hop.empty()) continue;
    if (const int s = SpineOfRouter(rail, hop); s >= 0) {
      if (p.spine < 0) {
        p.spine = s;
      } else if (p.core >= 0 && p.spine_down < 0) {
        p.spine_down = s;
      }
    } else if (const int c = CoreOfRouter(rail, hop); c >= 0 && p.spine >= 0 && p.core < 0) {
      p.core = c;
    }
  }
  if (p.core >= 0 && p.spine_down < 0) return {};
  return p;
}

int FabricIndex::SpineOfRouter(int rail, std::string_view address) const {
  if (rail < 0 || rail >= rails_) return -1;
  auto it = spine_of_router_[rail].find(address);
  return it == spine_of_router_[rail].end() ? -1 : it->second;
}

int FabricIndex::Find(std::string_view key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? -1 : it->second;
}

}  // namespace fabcheck::fabric
