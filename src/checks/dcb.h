// DCB (PFC, APP table) of a netdev through dcbnl, the rtnetlink interface
// `dcb pfc show` and mlnx_qos use: RTM_GETDCB with DCB_CMD_IEEE_GET.
//
// Only a live node can be asked. A live recording root stores each answer
// (or the error) as capture metadata "doctor/dcb/<ifname>", so a capture
// answers the same way later; a directory fixture may hold such files too.
// Anything that cannot be asked is NotFound/Unavailable, which the checks
// report as "unknown", never as a failure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::checks {

struct DcbApp {
  uint8_t selector = 0;  // 1 ethertype, 2 TCP/SCTP port, 3 UDP/DCCP, 4 TCP/UDP, 5 DSCP
  uint8_t priority = 0;
  uint16_t protocol = 0;
};

struct DcbInfo {
  std::optional<uint8_t> pfc_cap;  // traffic classes that can have PFC
  std::optional<uint8_t> pfc_en;   // bit p set = PFC on priority p
  bool has_app_table = false;
  std::vector<DcbApp> apps;
  std::string source;              // "dcbnl (RTM_GETDCB IEEE_GET) on the live node" / "capture ..."

  // mlnx_qos's rule: trust is dscp when the APP table maps any DSCP value.
  std::string Trust() const;
  // "3" or "3,4" or "none".
  std::string PfcPriorities() const;
};

inline constexpr uint8_t kDcbSelectorDscp = 5;  // IEEE_8021QAZ_APP_SEL_DSCP

// The request bytes (nlmsghdr + dcbmsg + DCB_ATTR_IFNAME), for tests and the live query.
std::string BuildDcbIeeeGetRequest(std::string_view ifname, uint32_t seq);
// Parses the kernel's reply: an RTM_GETDCB message with DCB_ATTR_IEEE, or an
// NLMSG_ERROR (turned into a Status naming the errno and `ifname`).
Result<DcbInfo> ParseDcbIeeeReply(std::string_view bytes, std::string_view ifname);

// Asks the running kernel (no privileges needed to read).
Result<DcbInfo> QueryDcbLive(std::string_view ifname);

// From the node behind `root` (see above).
Result<DcbInfo> ReadDcb(const sys::SysRoot& root, std::string_view ifname);

std::string DcbToJson(const DcbInfo& info);
Result<DcbInfo> DcbFromJson(std::string_view text);

}  // namespace fabcheck::checks
