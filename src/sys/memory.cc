#include "sys/memory.h"

#include <algorithm>

#include "base/strings.h"
#include "sys/numa.h"

namespace fabcheck::sys {
namespace {

constexpr int kMaxNodes = 1024;  // MAX_NUMNODES is at most 1 << 10

std::optional<uint64_t> ReadCount(const SysRoot& root, const std::string& path) {
  auto text = root.ReadAttribute(path);
  if (!text.ok()) return std::nullopt;
  auto v = ParseUint(*text);
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

void ReadPools(const SysRoot& root, const std::string& dir, int node, std::vector<HugePagePool>* out) {
  auto entries = root.ListDir(dir);
  if (!entries.ok()) return;
  for (const auto& name : *entries) {
    auto kb = ParseHugePageDirName(name);
    if (!kb) continue;
    HugePagePool pool;
    pool.page_kb = *kb;
    pool.node = node;
    pool.dir = dir + "/" + name;
    pool.total = ReadCount(root, pool.dir + "/nr_hugepages");
    pool.free = ReadCount(root, pool.dir + "/free_hugepages");
    out->push_back(std::move(pool));
  }
}

}  // namespace

std::optional<uint64_t> ParseHugePageDirName(std::string_view name) {
  if (!StartsWith(name, "hugepages-") || !EndsWith(name, "kB")) return std::nullopt;
  auto v = ParseUint(name.substr(10, name.size() - 12));
  if (!v || *v == 0) return std::nullopt;
  return *v;
}

Result<std::vector<HugePagePool>> ReadHugePages(const SysRoot& root) {
  std::vector<HugePagePool> pools;
  if (!root.IsDirectory(kHugePagesDir)) {
    return NotFoundError("no " + root.DisplayPath(kHugePagesDir) + ": the kernel has no HugeTLB support");
  }
  ReadPools(root, std::string(kHugePagesDir), -1, &pools);
  if (auto nodes = numa::ListEntries(root); nodes.ok()) {
    for (const auto& name : *nodes) {
      if (!StartsWith(name, "node")) continue;
      auto id = ParseInt(std::string_view(name).substr(4));
      if (!id || *id < 0 || *id >= kMaxNodes) continue;
      ReadPools(root, numa::NodeDir(name) + "/hugepages", static_cast<int>(*id), &pools);
    }
  }
  std::sort(pools.begin(), pools.end(), [](const HugePagePool& a, const HugePagePool& b) {
    return a.page_kb != b.page_kb ? a.page_kb < b.page_kb : a.node < b.node;
  });
  return pools;
}

Result<std::string> ParseBracketedChoice(std::string_view text) {
  auto open = text.find('[');
  auto close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1) {
    return DataLossError("'" + std::string(Trim(text)) + "' has no [selected] word (expected e.g. always [madvise] never)");
  }
  return std::string(text.substr(open + 1, close - open - 1));
}

Result<std::string> ReadThpMode(const SysRoot& root) {
  ASSIGN_OR_RETURN(std::string text, root.ReadAttribute(kThpEnabled));
  auto mode = ParseBracketedChoice(text);
  if (!mode.ok()) return mode.status().WithContext(root.DisplayPath(kThpEnabled));
  return mode;
}

Result<int> ReadNumaBalancing(const SysRoot& root) {
  ASSIGN_OR_RETURN(std::string text, root.ReadAttribute(kNumaBalancing));
  auto v = ParseInt(text);
  if (!v || *v < 0 || *v > 255) {
    return DataLossError(root.DisplayPath(kNumaBalancing) + " = '" + text + "' (expected 0, 1, 2 or 3)");
  }
  return static_cast<int>(*v);
}

}  // namespace fabcheck::sys
