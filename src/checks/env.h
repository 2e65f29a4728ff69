// The NCCL settings a job will run with, and where each one came from.
//
// NCCL reads its variables from the process environment, then fills in the
// ones not set from NCCL_CONF_FILE or ~/.nccl.conf and /etc/nccl.conf
// (src/misc/param.cc setEnvFile: "KEY=VALUE" lines, never overriding).
// Doctor layers them the same way, lowest first:
//   /etc/nccl.conf (read through the SysRoot, so captures carry it)
//   < the process environment (live node only; a capture carries the
//     NCCL_* variables of the process that took it)
//   < --env-file (a job's settings, checked before launch).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::checks {

struct EnvValue {
  std::string value;
  std::string source;  // "environment", "/etc/nccl.conf line 3", "job.env line 7"
};

class NcclEnv {
 public:
  // nullopt when unset.
  std::optional<EnvValue> Get(std::string_view name) const;
  void Set(std::string name, std::string value, std::string source);
  // Only variables not yet set (how NCCL treats its conf files).
  void SetDefault(std::string name, std::string value, std::string source);
  const std::map<std::string, EnvValue, std::less<>>& vars() const { return vars_; }
  // "NCCL_IB_HCA=mlx5_0 (from job.env line 3)", for evidence.
  std::string Describe(std::string_view name) const;

 private:
  std::map<std::string, EnvValue, std::less<>> vars_;
};

// One "KEY=VALUE" per line; blank lines and '#' comments are skipped, an
// "export " prefix and matching surrounding quotes are removed. Anything else
// is an error naming the file and line. `label` names the file in messages.
Result<std::vector<std::pair<std::string, EnvValue>>> ParseEnvText(std::string_view text, std::string_view label);

// Where to build the environment from.
struct EnvSources {
  bool use_process_env = true;       // the live process environment
  std::vector<std::string> env_files;  // --env-file, in order (later wins)
};

// Name under which a capture stores the NCCL_* variables of the process that
// took it (SysRoot::RecordMeta / ReadMeta).
inline constexpr std::string_view kEnvMetaName = "doctor/nccl-env";

// Builds the layered environment. On a live recording root, records the
// NCCL_* variables as capture metadata so a capture carries them.
Result<NcclEnv> LoadNcclEnv(const sys::SysRoot& root, const EnvSources& sources);

}  // namespace fabcheck::checks
