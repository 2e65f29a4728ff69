// What one side tells the other to connect its RC QPs, exchanged as JSON over
// the perf engine's control channel (phase "verbs.connect"); pure logic.
//
// perftest sends "LID:OUT:QPN:PSN:RKEY:VADDR:GID" as ASCII and trusts it; we
// version it, check every field and refuse a peer whose QP count differs.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "perf/verbs/gid.h"

namespace fabcheck::perf::verbs {

inline constexpr int kConnInfoVersion = 1;

struct QpWire {
  uint32_t qpn = 0;   // 24 bits
  uint32_t psn = 0;   // 24 bits
  uint64_t addr = 0;  // this QP's slot pair in the region (send slot; receive slot follows)
};

struct ConnInfo {
  int version = kConnInfoVersion;
  std::string device;        // "rxe0": for messages and reports
  int port = 1;
  bool infiniband = false;   // link layer: InfiniBand, else Ethernet (RoCE)
  uint16_t lid = 0;          // IB only
  GidBytes gid{};
  int gid_index = 0;
  std::string gid_type;      // "RoCE v2"
  int active_mtu = 0;        // bytes
  int max_rd_atomic = 0;     // reads this side accepts as responder (max_qp_rd_atom)
  uint32_t rkey = 0;
  uint64_t region_bytes = 0;
  uint64_t slot_bytes = 0;
  std::vector<QpWire> qps;
};

nlohmann::json ConnInfoToJson(const ConnInfo& c);
// InvalidArgument naming the field when the peer sent something unusable,
// FailedPrecondition when it disagrees with us (version, QP count, link layer).
Result<ConnInfo> ParseConnInfo(const nlohmann::json& j, size_t expected_qps, bool local_infiniband);

}  // namespace fabcheck::perf::verbs
