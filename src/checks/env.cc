#include "checks/env.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/input.h"
#include "base/json_text.h"
#include "base/strings.h"

extern char** environ;

namespace fabcheck::checks {

std::optional<EnvValue> NcclEnv::Get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

void NcclEnv::Set(std::string name, std::string value, std::string source) {
  vars_[std::move(name)] = EnvValue{std::move(value), std::move(source)};
}

void NcclEnv::SetDefault(std::string name, std::string value, std::string source) {
  if (vars_.count(name)) return;
  Set(std::move(name), std::move(value), std::move(source));
}

std::string NcclEnv::Describe(std::string_view name) const {
  auto v = Get(name);
  if (!v) return std::string(name) + " is not set";
  return std::string(name) + "=" + v->value + " (from " + v->source + ")";
}

namespace {

constexpr uint64_t kMaxEnvFileBytes = 4 << 20;  // a job environment is a few KiB

bool ValidName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

Result<std::vector<std::pair<std::string, EnvValue>>> ParseEnvText(std::string_view text, std::string_view label) {
  std::vector<std::pair<std::string, EnvValue>> out;
  auto lines = Split(text, '\n');
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = Trim(lines[n]);
    if (line.empty() || line.front() == '#') continue;
    if (StartsWith(line, "export ")) line = Trim(line.substr(7));
    auto eq = line.find('=');
    std::string where = std::string(label) + " line " + std::to_string(n + 1);
    if (eq == std::string_view::npos) {
      return InvalidArgumentError(where + ": expected KEY=VALUE, got '" + std::string(line) +
                                  "' (one variable per line, e.g. NCCL_IB_HCA=mlx5_0)");
    }
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = line.substr(eq + 1);
    if (!ValidName(key)) {
      return InvalidArgumentError(where + ": '" + std::string(key) +
                                  "' is not a variable name (letters, digits and '_', e.g. NCCL_SOCKET_IFNAME)");
    }
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    out.push_back({std::string(key), EnvValue{std::string(value), where}});
  }
  return out;
}

Result<NcclEnv> LoadNcclEnv(const sys::SysRoot& root, const EnvSources& sources) {
  NcclEnv env;
  // Highest layer first, then conf-file defaults below it.
  for (const auto& path : sources.env_files) {
    auto text = ReadFileBounded(path, kMaxEnvFileBytes);
    if (!text.ok()) {
      return Status(text.status().code(), "cannot read --env-file: " + text.status().message() +
                                              " (give a file of KEY=VALUE lines, e.g. a job's env)");
    }
    ASSIGN_OR_RETURN(auto vars, ParseEnvText(*text, path));
    for (auto& [k, v] : vars) env.Set(k, v.value, v.source);
  }
  if (sources.use_process_env) {
    if (root.live()) {
      nlohmann::json recorded = nlohmann::json::object();
      for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        auto eq = entry.find('=');
        if (eq == std::string_view::npos) continue;
        std::string key(entry.substr(0, eq));
        if (!StartsWith(key, "NCCL_")) continue;
        std::string value(entry.substr(eq + 1));
        recorded[key] = value;
        env.SetDefault(key, value, "environment");
      }
      root.RecordMeta(kEnvMetaName, ToJsonText(recorded, 2));
    } else if (auto meta = root.ReadMeta(kEnvMetaName); meta.ok()) {
      auto parsed = nlohmann::json::parse(*meta, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_object()) {
        for (auto& [k, v] : parsed.items()) {
          if (v.is_string()) env.SetDefault(k, v.get<std::string>(), "environment of the captured process");
        }
      }
    }
  }
  // NCCL's own conf file: fills only what is still unset.
  if (root.Exists("/etc/nccl.conf")) {
    auto text = root.ReadFile("/etc/nccl.conf");
    if (text.ok()) {
      // NCCL is lax here (lines without '=' are skipped), so be lax too.
      auto lines = Split(*text, '\n');
      for (size_t n = 0; n < lines.size(); ++n) {
        std::string_view line = Trim(lines[n]);
        auto eq = line.find('=');
        if (line.empty() || line.front() == '#' || eq == std::string_view::npos) continue;
        env.SetDefault(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)),
                       "/etc/nccl.conf line " + std::to_string(n + 1));
      }
    }
  }
  return env;
}

}  // namespace fabcheck::checks
