#include "checks/nccl_match.h"

#include <cstdlib>

namespace fabcheck::checks {

NcclList ParseNcclList(std::string_view value, int max_entries) {
  NcclList list;
  if (!value.empty() && value.front() == '^') {
    list.exclude = true;
    value.remove_prefix(1);
  }
  if (!value.empty() && value.front() == '=') {
    list.exact = true;
    value.remove_prefix(1);
  }
  // parseStringList: characters accumulate into a name until ':' (then the
  // port is atoi() of what follows and the rest up to ',' is skipped) or ','.
  std::string current;
  size_t i = 0;
  auto push = [&](int port) {
    if (current.empty()) return;
    if (static_cast<int>(list.entries.size()) < max_entries) {
      list.entries.push_back({current, port});
    } else {
      ++list.dropped;
    }
    current.clear();
  };
  while (i < value.size()) {
    char c = value[i];
    if (c == ':') {
      bool had_name = !current.empty();
      size_t end = value.find(',', i);
      if (end == std::string_view::npos) end = value.size();
      // atoi: leading digits (with optional sign and whitespace); garbage -> 0.
      std::string port_text(value.substr(i + 1, end - i - 1));
      if (had_name) push(std::atoi(port_text.c_str()));
      i = end + 1;  // past the ',' (or the end)
      continue;
    }
    if (c == ',') {
      push(-1);
    } else {
      current.push_back(c);
    }
    ++i;
  }
  push(-1);
  return list;
}

bool NcclEntryMatches(const NcclListEntry& entry, bool exact, std::string_view name, int port) {
  // matchIf: exact compares the whole string including its end; otherwise the
  // entry only has to be a prefix of the name.
  bool name_ok = exact ? name == entry.name : name.substr(0, entry.name.size()) == entry.name;
  bool port_ok = port == -1 || entry.port == -1 || port == entry.port;
  return name_ok && port_ok;
}

bool NcclSelects(const NcclList& list, std::string_view name, int port) {
  bool matched = list.entries.empty();
  for (const auto& entry : list.entries) {
    if (NcclEntryMatches(entry, list.exact, name, port)) {
      matched = true;
      break;
    }
  }
  return matched != list.exclude;
}

std::string FormatNcclList(const NcclList& list) {
  std::string out;
  if (list.exclude) out += '^';
  if (list.exact) out += '=';
  for (size_t i = 0; i < list.entries.size(); ++i) {
    if (i) out += ',';
    out += list.entries[i].name;
    if (list.entries[i].port >= 0) out += ":" + std::to_string(list.entries[i].port);
  }
  return out;
}

}  // namespace fabcheck::checks
