// The example cluster of the report tests, the README's run and the
// benchmark: DGX-class members (8 GPUs, 8 ConnectX-7 400G RoCE NICs, one PCIe
// switch per GPU-NIC pair; the doctor tests' node fixture), two racks, a
// ladder run with --keep-going and planted faults:
//   dgx-03  NIC mlx5_2 PCIe link at Gen4 x8 of Gen5 x16   -> fails L1L2.node
//   dgx-05  every data-plane netdev at MTU 4200, not 9000  -> outlier in L1L2.cluster
//   dgx-02 -> dgx-07 rail 1 at 148 Gb/s (cross-rack), with port_rcv_errors and
//           symbol errors rising on dgx-07 mlx5_1          -> slow pair in L3
//   dgx-06  NCCL on NET/Socket (NCCL_IB_HCA typo)          -> TCP fallback in L4
// and a baseline run a week earlier (dgx-09 still there, dgx-08 not yet;
// no downgrade, MTU 9000 everywhere, the pair at full speed, no errors).
#pragma once

#include <string>

#include "base/status.h"
#include "fabcheck/model/ladder.h"
#include "report/evidence.h"

namespace fabcheck::report::example {

struct ClusterSpec {
  int members = 8;
  bool baseline = false;   // the earlier, healthy run
  bool with_nodes = true;  // generate node fixtures for inventory and doctor (off: manifest only, for large benches)
  int rails = 8;
};

// Builds the evidence (manifest, inventories, doctor reports) of the run.
Result<BundleEvidence> MakeCluster(const ClusterSpec& spec);

// The baseline groups of L3 and L4 as the ladder forms them, with healthy
// figures (example_baselines.cc).
void AddBaselineGroups(const BundleEvidence& e, model::RungResult& l3, model::RungResult& l4, int rails);

// Writes it as a bundle directory (or .tar.gz) through bundle::Writer.
Status WriteBundle(const BundleEvidence& evidence, const std::string& out);

}  // namespace fabcheck::report::example
