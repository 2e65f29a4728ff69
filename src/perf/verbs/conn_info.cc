#include "perf/verbs/conn_info.h"

#include <fmt/format.h>

#include "perf/verbs/plan.h"

namespace fabcheck::perf::verbs {

nlohmann::json ConnInfoToJson(const ConnInfo& c) {
  nlohmann::json qps = nlohmann::json::array();
  for (const QpWire& q : c.qps) qps.push_back({{"qpn", q.qpn}, {"psn", q.psn}, {"addr", q.addr}});
  return {{"version", c.version},       {"device", c.device},         {"port", c.port},
          {"infiniband", c.infiniband}, {"lid", c.lid},               {"gid", FormatGid(c.gid)},
          {"gid_index", c.gid_index},   {"gid_type", c.gid_type},     {"active_mtu", c.active_mtu},
          {"max_rd_atomic", c.max_rd_atomic}, {"rkey", c.rkey},       {"region_bytes", c.region_bytes},
          {"slot_bytes", c.slot_bytes}, {"qps", qps}};
}

namespace {

template <typename T>
Result<T> Field(const nlohmann::json& j, const char* name, uint64_t max) {
  bool ok = j.contains(name) && j.at(name).is_number_integer() &&
            (j.at(name).is_number_unsigned() || j.at(name).get<int64_t>() >= 0);
  if (!ok) return InvalidArgumentError(fmt::format("peer connection info: '{}' missing or not a non-negative integer", name));
  uint64_t v = j.at(name).get<uint64_t>();
  if (v > max) return InvalidArgumentError(fmt::format("peer connection info: '{}' = {} above {}", name, v, max));
  return static_cast<T>(v);
}

}  // namespace

Result<ConnInfo> ParseConnInfo(const nlohmann::json& j, size_t expected_qps, bool local_infiniband) {
  if (!j.is_object()) return InvalidArgumentError("peer connection info is not a JSON object");
  ConnInfo c;
  ASSIGN_OR_RETURN(c.version, Field<int>(j, "version", 1000));
  if (c.version != kConnInfoVersion) {
    return FailedPreconditionError(fmt::format("peer speaks verbs connection info v{}, this side v{}: "
                                               "run the same fabcheck version on both sides",
                                               c.version, kConnInfoVersion));
  }
  if (!j.contains("gid") || !j.at("gid").is_string()) return InvalidArgumentError("peer connection info: 'gid' missing");
  ASSIGN_OR_RETURN(c.gid, ParseGid(j.at("gid").get<std::string>()));
  if (!j.contains("infiniband") || !j.at("infiniband").is_boolean()) {
    return InvalidArgumentError("peer connection info: 'infiniband' missing");
  }
  c.infiniband = j.at("infiniband").get<bool>();
  c.device = j.value("device", "");
  c.gid_type = j.value("gid_type", "");
  ASSIGN_OR_RETURN(c.port, Field<int>(j, "port", 255));
  ASSIGN_OR_RETURN(c.lid, Field<uint16_t>(j, "lid", 0xffff));
  ASSIGN_OR_RETURN(c.gid_index, Field<int>(j, "gid_index", 65535));
  ASSIGN_OR_RETURN(c.active_mtu, Field<int>(j, "active_mtu", 4096));
  ASSIGN_OR_RETURN(c.max_rd_atomic, Field<int>(j, "max_rd_atomic", 65535));
  ASSIGN_OR_RETURN(c.rkey, Field<uint32_t>(j, "rkey", 0xffffffffu));
  ASSIGN_OR_RETURN(c.region_bytes, Field<uint64_t>(j, "region_bytes", ~uint64_t{0}));
  ASSIGN_OR_RETURN(c.slot_bytes, Field<uint64_t>(j, "slot_bytes", ~uint64_t{0}));
  if (!MtuEnumFromBytes(c.active_mtu)) {
    return InvalidArgumentError(fmt::format("peer connection info: active_mtu {} is not an IB MTU", c.active_mtu));
  }
  if (c.infiniband != local_infiniband) {
    return FailedPreconditionError(fmt::format(
        "link layers differ: this port is {}, the peer's ({} port {}) is {}; both ends must be InfiniBand or both RoCE",
        local_infiniband ? "InfiniBand" : "Ethernet (RoCE)", c.device, c.port,
        c.infiniband ? "InfiniBand" : "Ethernet (RoCE)"));
  }
  if (c.infiniband && c.lid == 0) {
    return FailedPreconditionError(fmt::format("peer InfiniBand port {} port {} has LID 0 (is the subnet manager running?)",
                                               c.device, c.port));
  }
  if (!c.infiniband && GidIsZero(c.gid)) return InvalidArgumentError("peer connection info: RoCE GID is all zeros");
  if (!j.contains("qps") || !j.at("qps").is_array()) return InvalidArgumentError("peer connection info: 'qps' missing");
  const auto& qps = j.at("qps");
  if (qps.size() != expected_qps) {
    return FailedPreconditionError(fmt::format("peer offers {} QPs, this side has {}", qps.size(), expected_qps));
  }
  for (const auto& q : qps) {
    if (!q.is_object()) return InvalidArgumentError("peer connection info: a 'qps' entry is not an object");
    QpWire w;
    ASSIGN_OR_RETURN(w.qpn, Field<uint32_t>(q, "qpn", 0xffffff));
    ASSIGN_OR_RETURN(w.psn, Field<uint32_t>(q, "psn", 0xffffff));
    ASSIGN_OR_RETURN(w.addr, Field<uint64_t>(q, "addr", ~uint64_t{0}));
    c.qps.push_back(w);
  }
  if (c.slot_bytes == 0 || c.region_bytes < c.slot_bytes * 2 * expected_qps) {
    return InvalidArgumentError(fmt::format("peer connection info: region of {} B cannot hold {} QPs of 2 x {} B slots",
                                            c.region_bytes, expected_qps, c.slot_bytes));
  }
  return c;
}

}  // namespace fabcheck::perf::verbs
