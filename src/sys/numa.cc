#include "sys/numa.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::sys::numa {

std::optional<int> NodeId(std::string_view entry) {
  if (!StartsWith(entry, "node")) return std::nullopt;
  auto id = ParseInt(entry.substr(4));
  if (!id) return std::nullopt;
  return static_cast<int>(*id);
}

std::string NodeDir(std::string_view entry) { return fmt::format("{}/{}", kNodeDir, entry); }
std::string NodeDir(int node) { return fmt::format("{}/node{}", kNodeDir, node); }
std::string CpuListFile(std::string_view entry) { return NodeDir(entry) + "/cpulist"; }
std::string CpuListFile(int node) { return NodeDir(node) + "/cpulist"; }

Result<std::vector<std::string>> ListEntries(const SysRoot& root) { return root.ListDir(kNodeDir); }

std::vector<int> ListNodes(const SysRoot& root) {
  std::vector<int> nodes;
  auto entries = ListEntries(root);
  if (!entries.ok()) return nodes;
  for (const auto& e : *entries) {
    if (auto n = NodeId(e)) nodes.push_back(*n);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

Result<std::vector<int>> ReadNodeCpus(const SysRoot& root, int node) {
  const std::string path = CpuListFile(node);
  ASSIGN_OR_RETURN(std::string text, root.ReadAttribute(path));
  auto cpus = ParseCpuList(text);
  if (!cpus.ok()) return cpus.status().WithContext(root.DisplayPath(path));
  return cpus;
}

}  // namespace fabcheck::sys::numa
