#include "sys/sriov.h"

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "sys/infiniband.h"
#include "sys/net_class.h"
#include "sys/pci.h"

namespace fabcheck::sys::sriov {
namespace {

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// "0000:18:00.2": the shape of a PCI function's name in sysfs.
bool IsPciName(std::string_view name) {
  return name.size() == 12 && name[4] == ':' && name[7] == ':' && name[10] == '.';
}

// The PCI function a class entry's device link points at ("../../../0000:18:00.0").
std::optional<std::string> DeviceOf(const SysRoot& root, const std::string& class_entry) {
  auto target = root.ReadLink(class_entry + "/device");
  if (!target.ok()) return std::nullopt;
  std::string name = Basename(*target);
  if (!IsPciName(name)) return std::nullopt;
  return name;
}

std::vector<std::string> ListOrEmpty(const SysRoot& root, const std::string& dir) {
  auto names = root.ListDir(dir);
  return names.ok() ? *names : std::vector<std::string>{};
}

}  // namespace

std::string PciDeviceDir(std::string_view pci_address) { return pci::Function(pci_address).dir(); }

bool IsPhysicalFunction(const SysRoot& root, std::string_view pci_address) {
  return root.Exists(PciDeviceDir(pci_address) + "/sriov_totalvfs");
}

std::vector<std::string> ListPhysicalFunctions(const SysRoot& root) {
  std::set<std::string> found;
  for (std::string_view class_dir : {infiniband::kClassDir, net_class::kClassDir}) {
    for (const std::string& entry : ListOrEmpty(root, std::string(class_dir))) {
      auto bdf = DeviceOf(root, std::string(class_dir) + "/" + entry);  // virtual netdevs have none
      if (!bdf || found.count(*bdf)) continue;
      if (IsPhysicalFunction(root, *bdf)) found.insert(*bdf);
    }
  }
  return {found.begin(), found.end()};
}

bool IsUserspaceDriver(std::string_view driver) {
  return driver == "vfio-pci" || driver == "pci-stub" || driver == "uio_pci_generic" || driver == "igb_uio";
}

Result<PhysicalFunction> ReadPhysicalFunction(const SysRoot& root, std::string_view pci_address) {
  const std::string dir = PciDeviceDir(pci_address);
  auto total = root.ReadAttribute(dir + "/sriov_totalvfs");
  if (!total.ok()) {
    if (total.status().code() == StatusCode::kNotFound) {
      return NotFoundError(root.DisplayPath(dir) + " is not an SR-IOV physical function (no sriov_totalvfs)");
    }
    return total.status();
  }
  PhysicalFunction pf;
  pf.pci_address = std::string(pci_address);
  if (auto v = ParseInt(*total); v && *v >= 0) {
    pf.total_vfs = static_cast<int>(*v);
  } else {
    pf.errors.push_back("unexpected content '" + *total + "' in " + root.DisplayPath(dir + "/sriov_totalvfs"));
  }
  if (auto num = root.ReadAttribute(dir + "/sriov_numvfs"); num.ok()) {
    if (auto v = ParseInt(*num); v && *v >= 0) {
      pf.num_vfs = static_cast<int>(*v);
    } else {
      pf.errors.push_back("unexpected content '" + *num + "' in " + root.DisplayPath(dir + "/sriov_numvfs"));
    }
  } else {
    pf.errors.push_back(num.status().message());
  }
  pf.netdevs = ListOrEmpty(root, dir + "/net");
  pf.rdma_devices = ListOrEmpty(root, dir + "/infiniband");

  auto entries = root.ListDir(dir);
  if (!entries.ok()) return entries.status();
  for (const std::string& entry : *entries) {
    if (!entry.starts_with("virtfn")) continue;
    auto index = ParseInt(std::string_view(entry).substr(6));
    if (!index || *index < 0) continue;
    auto target = root.ReadLink(dir + "/" + entry);
    if (!target.ok()) {
      pf.errors.push_back(target.status().message());
      continue;
    }
    VirtualFunction vf;
    vf.index = static_cast<int>(*index);
    vf.pci_address = Basename(*target);
    if (!IsPciName(vf.pci_address)) {
      pf.errors.push_back(root.DisplayPath(dir + "/" + entry) + " points at '" + *target +
                          "', not a PCI function");
      continue;
    }
    const std::string vf_dir = PciDeviceDir(vf.pci_address);
    if (auto driver = root.ReadLink(vf_dir + "/driver"); driver.ok()) vf.driver = Basename(*driver);
    vf.netdevs = ListOrEmpty(root, vf_dir + "/net");
    vf.rdma_devices = ListOrEmpty(root, vf_dir + "/infiniband");
    pf.vfs.push_back(std::move(vf));
  }
  std::sort(pf.vfs.begin(), pf.vfs.end(),
            [](const VirtualFunction& a, const VirtualFunction& b) { return a.index < b.index; });
  return pf;
}

}  // namespace fabcheck::sys::sriov
