#include "k8s/ip.h"

#include <arpa/inet.h>

#include "base/strings.h"

namespace fabcheck::k8s {

std::optional<IpAddr> ParseIp(std::string_view text) {
  std::string s(Trim(text));
  IpAddr ip;
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
    for (int i = 0; i < 4; ++i) ip.value = (ip.value << 8) | buf[i];
    return ip;
  }
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    ip.v6 = true;
    for (int i = 0; i < 16; ++i) ip.value = (ip.value << 8) | buf[i];
    return ip;
  }
  return std::nullopt;
}

std::optional<IpRange> ParseCidr(std::string_view text) {
  auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto ip = ParseIp(text.substr(0, slash));
  auto prefix = ParseInt(Trim(text.substr(slash + 1)));
  if (!ip || !prefix) return std::nullopt;
  int bits = ip->v6 ? 128 : 32;
  if (*prefix < 0 || *prefix > bits) return std::nullopt;
  int host_bits = bits - static_cast<int>(*prefix);
  unsigned __int128 host_mask = host_bits == 128 ? ~static_cast<unsigned __int128>(0)
                                                 : ((static_cast<unsigned __int128>(1) << host_bits) - 1);
  IpRange r;
  r.v6 = ip->v6;
  r.first = ip->value & ~host_mask;
  r.last = r.first | host_mask;
  if (!r.v6) {
    r.first &= 0xffffffffu;
    r.last &= 0xffffffffu;
  }
  r.text = std::string(Trim(text));
  return r;
}

std::optional<IpRange> ParseRange(std::string_view text) {
  if (text.find('/') != std::string_view::npos) return ParseCidr(text);
  auto dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto a = ParseIp(text.substr(0, dash));
  auto b = ParseIp(text.substr(dash + 1));
  if (!a || !b || a->v6 != b->v6 || a->value > b->value) return std::nullopt;
  return IpRange{a->v6, a->value, b->value, std::string(Trim(text))};
}

bool Contains(const IpRange& range, const IpAddr& ip) {
  return range.v6 == ip.v6 && ip.value >= range.first && ip.value <= range.last;
}

bool Contains(const IpRange& outer, const IpRange& inner) {
  return outer.v6 == inner.v6 && inner.first >= outer.first && inner.last <= outer.last;
}

bool Overlaps(const IpRange& a, const IpRange& b) {
  return a.v6 == b.v6 && a.first <= b.last && b.first <= a.last;
}

}  // namespace fabcheck::k8s
