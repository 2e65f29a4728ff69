#include "checks/dcb.h"

#include "fabcheck/model/json_fields.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "base/json_text.h"

namespace fabcheck::checks {

std::string DcbInfo::Trust() const {
  for (const auto& app : apps) {
    if (app.selector == kDcbSelectorDscp) return "dscp";
  }
  return "pcp";
}

std::string DcbInfo::PfcPriorities() const {
  if (!pfc_en) return "unknown";
  std::string out;
  for (int p = 0; p < 8; ++p) {
    if (*pfc_en & (1u << p)) out += (out.empty() ? "" : ",") + std::to_string(p);
  }
  return out.empty() ? "none" : out;
}

namespace {

constexpr size_t Align(size_t n) { return (n + 3) & ~size_t{3}; }

void AppendAttr(std::string& out, uint16_t type, std::string_view payload) {
  struct nlattr attr {};
  attr.nla_len = static_cast<uint16_t>(NLA_HDRLEN + payload.size());
  attr.nla_type = type;
  out.append(reinterpret_cast<const char*>(&attr), sizeof(attr));
  out.append(payload);
  out.append(Align(payload.size()) - payload.size(), '\0');
}

// Walks the attributes in [data, data+len), calling fn(type, payload).
template <typename Fn>
Status ForEachAttr(std::string_view data, Fn fn) {
  size_t at = 0;
  while (at + NLA_HDRLEN <= data.size()) {
    struct nlattr attr {};
    std::memcpy(&attr, data.data() + at, sizeof(attr));
    if (attr.nla_len < NLA_HDRLEN || at + attr.nla_len > data.size()) {
      return DataLossError("malformed dcbnl attribute (length " + std::to_string(attr.nla_len) + ")");
    }
    fn(static_cast<uint16_t>(attr.nla_type & NLA_TYPE_MASK), data.substr(at + NLA_HDRLEN, attr.nla_len - NLA_HDRLEN));
    at += Align(attr.nla_len);
  }
  return Status::Ok();
}

}  // namespace

std::string BuildDcbIeeeGetRequest(std::string_view ifname, uint32_t seq) {
  std::string body;
  struct dcbmsg dcb {};
  dcb.dcb_family = AF_UNSPEC;
  dcb.cmd = DCB_CMD_IEEE_GET;
  body.append(reinterpret_cast<const char*>(&dcb), sizeof(dcb));
  std::string name(ifname);
  name.push_back('\0');
  AppendAttr(body, DCB_ATTR_IFNAME, name);
  struct nlmsghdr hdr {};
  hdr.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
  hdr.nlmsg_type = RTM_GETDCB;
  hdr.nlmsg_flags = NLM_F_REQUEST;
  hdr.nlmsg_seq = seq;
  std::string out(reinterpret_cast<const char*>(&hdr), sizeof(hdr));
  out.append(NLMSG_HDRLEN - sizeof(hdr), '\0');
  out += body;
  return out;
}

Result<DcbInfo> ParseDcbIeeeReply(std::string_view bytes, std::string_view ifname) {
  const std::string what = "dcbnl IEEE_GET on " + std::string(ifname);
  if (bytes.size() < NLMSG_HDRLEN) return DataLossError(what + ": reply shorter than a netlink header");
  struct nlmsghdr hdr {};
  std::memcpy(&hdr, bytes.data(), sizeof(hdr));
  if (hdr.nlmsg_len > bytes.size() || hdr.nlmsg_len < NLMSG_HDRLEN) {
    return DataLossError(what + ": truncated netlink reply");
  }
  std::string_view payload = bytes.substr(NLMSG_HDRLEN, hdr.nlmsg_len - NLMSG_HDRLEN);
  if (hdr.nlmsg_type == NLMSG_ERROR) {
    struct nlmsgerr err {};
    if (payload.size() < sizeof(err.error)) return DataLossError(what + ": truncated netlink error");
    std::memcpy(&err.error, payload.data(), sizeof(err.error));
    int e = -err.error;
    if (e == EOPNOTSUPP) {
      return ErrnoError(e, what, "the driver of " + std::string(ifname) + " has no DCB support (not a RoCE NIC?)");
    }
    if (e == ENODEV) {
      return ErrnoError(e, what, std::string(ifname) + " is not in this network namespace");
    }
    return ErrnoError(e, what);
  }
  if (hdr.nlmsg_type != RTM_GETDCB) {
    return DataLossError(what + ": unexpected netlink message type " + std::to_string(hdr.nlmsg_type));
  }
  if (payload.size() < sizeof(struct dcbmsg)) return DataLossError(what + ": reply without a dcbmsg header");
  DcbInfo info;
  info.source = "dcbnl RTM_GETDCB/DCB_CMD_IEEE_GET";
  Status inner = Status::Ok();
  Status outer = ForEachAttr(payload.substr(Align(sizeof(struct dcbmsg))), [&](uint16_t type, std::string_view data) {
    if (type != DCB_ATTR_IEEE) return;
    inner = ForEachAttr(data, [&](uint16_t ieee_type, std::string_view ieee) {
      if (ieee_type == DCB_ATTR_IEEE_PFC && ieee.size() >= 2) {
        info.pfc_cap = static_cast<uint8_t>(ieee[0]);  // ieee_pfc.pfc_cap
        info.pfc_en = static_cast<uint8_t>(ieee[1]);   // ieee_pfc.pfc_en
      } else if (ieee_type == DCB_ATTR_IEEE_APP_TABLE) {
        info.has_app_table = true;
        Status s = ForEachAttr(ieee, [&](uint16_t app_type, std::string_view app) {
          if (app_type != DCB_ATTR_IEEE_APP || app.size() < sizeof(struct dcb_app)) return;
          struct dcb_app raw {};
          std::memcpy(&raw, app.data(), sizeof(raw));
          info.apps.push_back({raw.selector, raw.priority, raw.protocol});
        });
        if (!s.ok()) inner = s;
      }
    });
  });
  RETURN_IF_ERROR(outer);
  RETURN_IF_ERROR(inner);
  return info;
}

Result<DcbInfo> QueryDcbLive(std::string_view ifname) {
  const std::string what = "dcbnl IEEE_GET on " + std::string(ifname);
  if (ifname.empty() || ifname.size() >= 16) return InvalidArgumentError(what + ": not an interface name");
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return ErrnoError(errno, "cannot open an rtnetlink socket for " + what);
  // Every network wait has a timeout: a kernel answer takes microseconds.
  struct timeval tv {};
  tv.tv_sec = 2;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  static uint32_t seq = 1;
  std::string request = BuildDcbIeeeGetRequest(ifname, seq++);
  struct sockaddr_nl kernel {};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    return ErrnoError(errno, "cannot send " + what);
  }
  std::string reply(64 * 1024, '\0');
  ssize_t n;
  do {
    n = ::recv(fd.get(), reply.data(), reply.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return DeadlineExceededError(what + ": no answer from the kernel in 2 s");
    return ErrnoError(errno, "cannot receive " + what);
  }
  reply.resize(static_cast<size_t>(n));
  auto info = ParseDcbIeeeReply(reply, ifname);
  if (info.ok()) info->source = "dcbnl RTM_GETDCB/DCB_CMD_IEEE_GET on the live node";
  return info;
}

std::string DcbToJson(const DcbInfo& info) {
  nlohmann::json j = nlohmann::json::object();
  if (info.pfc_cap) j["pfc_cap"] = *info.pfc_cap;
  if (info.pfc_en) j["pfc_en"] = *info.pfc_en;
  if (info.has_app_table) {
    j["apps"] = nlohmann::json::array();
    for (const auto& a : info.apps) j["apps"].push_back({{"selector", a.selector}, {"priority", a.priority}, {"protocol", a.protocol}});
  }
  return ToJsonText(j, 2);
}

Result<DcbInfo> DcbFromJson(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return DataLossError("captured DCB data is not a JSON object");
  if (j.contains("error")) {
    return UnavailableError(j["error"].is_string() ? j["error"].get<std::string>() : "DCB query failed when captured");
  }
  DcbInfo info;
  auto u8 = [&](const char* key) -> std::optional<uint8_t> {
    if (!j.contains(key) || !j[key].is_number_unsigned() || j[key].get<unsigned>() > 255) return std::nullopt;
    return static_cast<uint8_t>(j[key].get<unsigned>());
  };
  info.pfc_cap = u8("pfc_cap");
  info.pfc_en = u8("pfc_en");
  if (j.contains("apps") && j["apps"].is_array()) {
    info.has_app_table = true;
    // A capture comes from anywhere: a field out of its type's range makes
    // the whole record garbage, never a wrapped number.
    try {
      using model::json_fields::NumberOr;
      for (const auto& a : j["apps"]) {
        if (!a.is_object()) continue;
        info.apps.push_back({NumberOr<uint8_t>(a, "selector", 0), NumberOr<uint8_t>(a, "priority", 0),
                             NumberOr<uint16_t>(a, "protocol", 0)});
      }
    } catch (const nlohmann::json::exception& e) {
      return DataLossError("captured DCB application table: " + model::json_fields::ExceptionMessage(e));
    }
  }
  return info;
}

Result<DcbInfo> ReadDcb(const sys::SysRoot& root, std::string_view ifname) {
  std::string meta_name = "doctor/dcb/" + std::string(ifname);
  if (root.live()) {
    auto info = QueryDcbLive(ifname);
    root.RecordMeta(meta_name, info.ok() ? DcbToJson(*info)
                                         : ToJsonText(nlohmann::json{{"error", info.status().message()}}, 2));
    return info;
  }
  auto text = root.ReadMeta(meta_name);
  if (!text.ok()) {
    return NotFoundError("no DCB data for " + std::string(ifname) + " in " + root.Describe() +
                         " (dcbnl can only be asked on a live node; take the capture with `fabcheck snapshot` "
                         "on the node to include it)");
  }
  auto info = DcbFromJson(*text);
  if (info.ok()) info->source = "dcbnl answer recorded in " + root.DisplayPath("/fabcheck/" + meta_name);
  return info;
}

}  // namespace fabcheck::checks
