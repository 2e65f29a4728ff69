// The slowly changing facts the exporter attaches to port metrics: PCI
// address, firmware, netdev of each port, PCIe link, NUMA node and the
// GPU-NIC affinity. They come from the inventory (refreshed every few tens
// of seconds, see exporter_service.h), not from every scrape: the inventory
// reads GID tables and walks the PCIe tree, which a 15 s scrape cannot afford.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabcheck/model/inventory.h"

namespace fabcheck::telemetry {

struct GpuAffinity {
  int gpu = 0;
  std::string gpu_pci_address;
  std::string gpu_uuid;
  std::string path_type;  // "PIX", "PXB", "PHB", "NODE", "SYS"
  bool rail = false;      // the recommended NIC of this GPU
};

struct DeviceLabels {
  std::string device;
  std::string pci_address;
  std::string board_id;
  std::string fw_ver;
  std::string hca_type;
  std::string node_guid;
  std::optional<int> numa_node;
  model::PciLink pci_link;
  std::map<int, std::string> port_netdev;  // port -> netdev ("" when none)
  std::vector<GpuAffinity> gpus;
};

struct TopologyLabels {
  std::map<std::string, DeviceLabels> devices;  // by RDMA device name
  const DeviceLabels* Find(const std::string& device) const {
    auto it = devices.find(device);
    return it == devices.end() ? nullptr : &it->second;
  }
};

// Extracts the labels from an inventory (read on this node or loaded from JSON).
TopologyLabels LabelsFromInventory(const model::Inventory& inventory);

}  // namespace fabcheck::telemetry
