#include "net/slurm.h"

namespace fabcheck::net {

Result<std::string> FirstSlurmHost(std::string_view nodelist) {
  std::string host;
  int depth = 0;
  bool in_first_range = false;  // inside [...], before the first ',' or '-'
  for (char c : nodelist) {
    if (c == '[') {
      if (depth++ != 0) break;
      in_first_range = true;
    } else if (c == ']') {
      if (--depth < 0) break;
      in_first_range = false;
    } else if (depth == 0) {
      if (c == ',' || c == ' ') break;  // the first host of the list is complete
      host += c;
    } else if (in_first_range) {
      if (c == ',' || c == '-') in_first_range = false;  // "003-010": 003 is the first
      else host += c;
    }
  }
  const bool plausible = !host.empty() && depth == 0 && host.size() <= 253 &&
                         host.find_first_of("[]:/ \t") == std::string::npos;
  if (!plausible) {
    return InvalidArgumentError("cannot read the Slurm node list '" + std::string(nodelist.substr(0, 200)) +
                                "': give --coordinator HOST:PORT");
  }
  return host;
}

Result<std::optional<std::string>> SlurmFirstHost(const EnvLookup& env) {
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"}) {
    if (auto list = env(name)) {
      auto first = FirstSlurmHost(*list);
      if (!first.ok()) return Status(first.status().code(), std::string(name) + ": " + first.status().message());
      return std::optional<std::string>(*first);
    }
  }
  return std::optional<std::string>();
}

}  // namespace fabcheck::net
