// write_fabric_fixture DIR NICS [roce]: writes a generated GPU-node sysroot
// (bench/exporter_bench.py uses it for the 16-NIC comparison).
#include <cstdlib>
#include <iostream>
#include <string>

#include "fabric_fixture.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: write_fabric_fixture DIR NICS [roce]\n";
    return 64;
  }
  int nics = std::atoi(argv[2]);
  if (nics <= 0 || nics > 256) {
    std::cerr << "write_fabric_fixture: NICS must be 1..256\n";
    return 64;
  }
  bool roce = argc > 3 && std::string(argv[3]) == "roce";
  auto spec = fabcheck::telemetry::testing::GpuNode(nics, roce);
  fabcheck::telemetry::testing::WriteFabric(argv[1], spec);
  return 0;
}
