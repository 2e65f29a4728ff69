// Runs NCCL collectives and measures them exactly as nccl-tests does:
// warm-up of every size first, then per size one untimed run, `iters` timed
// launches on a host timer ended by a stream sync, the time averaged over
// iterations and over ranks; out-of-place then in-place; #wrong from a
// host-side --check.
//
// Two shapes: one process driving every local GPU (ncclCommInitAll, group
// calls), or one process per GPU (ncclCommInitRank with the unique id handed
// over by a RankExchange). Probes never print: the result is a CollReport.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "coll/busbw.h"
#include "coll/rendezvous.h"
#include "dl/nccl.h"
#include "fabcheck/model/coll.h"
#include "net/rank.h"

namespace fabcheck::coll {

struct CollOptions {
  std::vector<CollOp> ops;
  std::vector<uint64_t> sizes;  // bytes, as nccl-tests' -b/-e/-f (powers of two)
  dl::ncclDataType_t dtype = dl::ncclFloat32;
  dl::ncclRedOp_t redop = dl::ncclSum;
  int root = 0;
  int iters = 20;
  int warmup = 5;
  bool check = false;
  std::vector<int> devices;  // single-process: the CUDA devices to drive (empty: all)
};

// Where this process stands: one process for all local GPUs, or one rank.
struct RankSetup {
  bool single_process = true;
  net::LaunchRank env;               // process-per-GPU: this rank (local_rank -1: not known from the launcher)
  RankExchange* rendezvous = nullptr;  // process-per-GPU: how the NCCL id travels
  std::string host;                  // process-per-GPU: this host's name, for the rendezvous
  int device = -1;                   // process-per-GPU: CUDA device (default: local rank)
};

// Runs every op and size. Fills results, ranks and versions of `report`;
// leaves the NCCL log, expectation and findings to the caller.
Status RunCollectives(const CollOptions& options, const RankSetup& setup, model::CollReport* report);

}  // namespace fabcheck::coll
