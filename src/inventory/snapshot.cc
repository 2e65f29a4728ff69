#include "inventory/snapshot.h"
#include "base/utc_time.h"

#include <sys/utsname.h>

#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/log.h"
#include "inventory/inventory.h"

namespace fabcheck::inventory {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::string, SnapshotReader>> readers;
};

Registry& GetRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

bool RegisterSnapshotReader(std::string name, SnapshotReader reader) {
  auto& registry = GetRegistry();
  std::lock_guard lock(registry.mutex);
  registry.readers.emplace_back(std::move(name), std::move(reader));
  return true;
}

std::vector<std::string> SnapshotReaderNames() {
  auto& registry = GetRegistry();
  std::lock_guard lock(registry.mutex);
  std::vector<std::string> names{"inventory"};
  for (const auto& [name, _] : registry.readers) names.push_back(name);
  return names;
}

Result<SnapshotResult> TakeSnapshot(const sys::SysRoot& root, const std::string& output_path,
                                    const std::string& fabcheck_version) {
  root.StartRecording();
  SnapshotResult result;
  result.inventory = ReadInventory(root);
  std::vector<std::pair<std::string, SnapshotReader>> readers;
  {
    auto& registry = GetRegistry();
    std::lock_guard lock(registry.mutex);
    readers = registry.readers;
  }
  for (const auto& [name, reader] : readers) {
    LOG_DEBUG("snapshot", "running the {} readers", name);
    reader(root);
  }
  nlohmann::json info = {{"schema", "fabcheck.capture/v1"},
                         {"fabcheck_version", fabcheck_version},
                         {"taken_at", UtcNowIso8601()},
                         {"source", root.Describe()},
                         {"hostname", result.inventory.host.hostname},
                         {"kernel", result.inventory.host.kernel},
                         {"readers", SnapshotReaderNames()}};
  struct utsname uts {};
  if (root.live() && ::uname(&uts) == 0) {
    info["uname"] = {{"sysname", uts.sysname}, {"nodename", uts.nodename}, {"release", uts.release},
                     {"version", uts.version}, {"machine", uts.machine}};
  }
  result.info_json = ToJsonText(info, 2) + "\n";
  RETURN_IF_ERROR(root.WriteCapture(output_path, result.info_json));
  return result;
}

}  // namespace fabcheck::inventory
