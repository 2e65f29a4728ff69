#include "sys/pci.h"

#include <fmt/format.h>

namespace fabcheck::sys::pci {

FunctionFiles Function(std::string_view bdf) { return FunctionFiles(fmt::format("{}/{}", kDevicesDir, bdf)); }

Result<std::vector<std::string>> ListFunctions(const SysRoot& root) { return root.ListDir(kDevicesDir); }

}  // namespace fabcheck::sys::pci
