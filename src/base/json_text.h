// JSON text for output: every `--json`, SARIF, capture metadata and protocol
// message is serialised here.
//
// Strings fabcheck prints come from outside (NCCL logs, manifests, sysfs
// attributes, hostnames, environment variables) and may hold bytes that are
// not UTF-8. nlohmann::json's dump() throws on them by default, which lost a
// command's whole output; here each invalid byte becomes U+FFFD instead, so
// the document is always written and always valid JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace fabcheck {

// `indent` < 0: compact, one line (as nlohmann::json::dump()).
inline std::string ToJsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace fabcheck
