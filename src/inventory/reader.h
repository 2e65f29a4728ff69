// Reader: reads sysfs attributes through a SysRoot and turns every failure
// into an "unknown" value plus a warning naming the file, so one bad file
// never aborts an inventory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/inventory.h"
#include "sys/sysroot.h"

namespace fabcheck::inventory {

// Whether a missing file is worth a warning. Many attributes legitimately do
// not exist (lid on a RoCE port, link speed of a non-PCIe function, speed of
// an interface that is down): those are kOptional.
enum class Need { kRequired, kOptional };

class Reader {
 public:
  explicit Reader(const sys::SysRoot& root) : root_(root) {}

  const sys::SysRoot& root() const { return root_; }

  // The trimmed attribute, or nullopt (with a warning when it matters).
  // An empty file or one reading "N/A ..." counts as unreadable.
  std::optional<std::string> Attr(const std::string& path, Need need = Need::kRequired);
  // Integer attribute ("16", "-1", "0x15b3" with base 16 or 0).
  std::optional<long long> Int(const std::string& path, Need need = Need::kRequired, int base = 10);
  // Names in a directory; empty (with a warning when required) on failure.
  std::vector<std::string> List(const std::string& path, Need need = Need::kRequired);
  // Basename of a link target ("mlx5_core" for .../driver); "" when absent.
  std::string LinkBasename(const std::string& path);

  // Records that `path` held something unusable.
  void Warn(const std::string& path, std::string message);
  std::vector<model::InventoryWarning>& warnings() { return warnings_; }

 private:
  const sys::SysRoot& root_;
  std::vector<model::InventoryWarning> warnings_;
};

// "0000:18:00.0" (domain:bus:device.function, hex).
bool LooksLikeBdf(std::string_view s);
// Last path component.
std::string Basename(std::string_view path);

}  // namespace fabcheck::inventory

namespace fabcheck::inventory {
// "mlx5_2" < "mlx5_10": digit runs compare as numbers.
bool NaturalLess(std::string_view a, std::string_view b);
}  // namespace fabcheck::inventory
