#include "telemetry/topology_labels.h"

namespace fabcheck::telemetry {

TopologyLabels LabelsFromInventory(const model::Inventory& inventory) {
  TopologyLabels labels;
  for (const model::RdmaDevice& device : inventory.rdma_devices) {
    DeviceLabels& out = labels.devices[device.name];
    out.device = device.name;
    out.pci_address = device.pci_bdf;
    out.board_id = device.board_id;
    out.fw_ver = device.fw_ver;
    out.hca_type = device.hca_type;
    out.node_guid = device.node_guid;
    out.numa_node = device.numa_node;
    for (const model::RdmaPort& port : device.ports) out.port_netdev[port.port] = port.netdev;
    for (const model::Nic& nic : inventory.nics) {
      if (nic.pci.bdf == device.pci_bdf) out.pci_link = nic.pci.link;
    }
  }
  // The topology matrix is indexed by GPU row and NIC label column; a NIC
  // label is its first RDMA device, so map every RDMA device of that NIC.
  const model::Topology& topo = inventory.topology;
  for (size_t col = 0; col < topo.nics.size(); ++col) {
    const model::Nic* nic = inventory.FindNic(topo.nics[col]);
    std::vector<std::string> devices = nic ? nic->rdma_devices : std::vector<std::string>{topo.nics[col]};
    for (size_t row = 0; row < topo.gpus.size() && row < topo.distance.size(); ++row) {
      if (col >= topo.distance[row].size()) continue;
      GpuAffinity affinity;
      affinity.gpu = static_cast<int>(row);
      if (row < inventory.gpus.size()) {
        affinity.gpu = inventory.gpus[row].index;
        affinity.gpu_pci_address = inventory.gpus[row].pci.bdf;
        affinity.gpu_uuid = inventory.gpus[row].uuid;
      }
      affinity.path_type = std::string(model::PathTypeName(topo.distance[row][col]));
      for (const model::RailPair& rail : topo.rails) {
        if (rail.gpu == affinity.gpu && rail.nic == topo.nics[col]) affinity.rail = true;
      }
      for (const std::string& name : devices) {
        auto it = labels.devices.find(name);
        if (it != labels.devices.end()) it->second.gpus.push_back(affinity);
      }
    }
  }
  return labels;
}

}  // namespace fabcheck::telemetry
