// write_fabric_fixture DIR NICS [roce] [sriov]: writes a generated GPU-node
// sysroot (bench/exporter_bench.py uses it for the 16-NIC comparison); sriov
// gives every NIC 8 possible VFs, 4 enabled: one with netdev and RDMA device,
// one whose netdev is in another namespace, one without RDMA device, one vfio-pci.
#include <cstdlib>
#include <iostream>
#include <string>

#include "fabric_fixture.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: write_fabric_fixture DIR NICS [roce] [sriov]\n";
    return 64;
  }
  int nics = std::atoi(argv[2]);
  if (nics <= 0 || nics > 256) {
    std::cerr << "write_fabric_fixture: NICS must be 1..256\n";
    return 64;
  }
  bool roce = false;
  bool sriov = false;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "roce") {
      roce = true;
    } else if (arg == "sriov") {
      sriov = true;
    } else {
      std::cerr << "write_fabric_fixture: unknown option '" << arg << "' (roce, sriov)\n";
      return 64;
    }
  }
  auto spec = fabcheck::telemetry::testing::GpuNode(nics, roce);
  if (sriov) {
    for (auto& nic : spec.nics) {
      nic.sriov_total_vfs = 8;
      nic.vfs = {{true, true, "mlx5_core"}, {false, true, "mlx5_core"}, {true, false, "mlx5_core"},
                 {false, false, "vfio-pci"}};
    }
  }
  fabcheck::telemetry::testing::WriteFabric(argv[1], spec);
  return 0;
}
