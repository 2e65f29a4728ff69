// IPv4/IPv6 addresses and prefixes for the IPAM checks (whereabouts,
// host-local): parse, containment, overlap.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fabcheck::k8s {

struct IpAddr {
  bool v6 = false;
  unsigned __int128 value = 0;
};

struct IpRange {  // inclusive [first, last]
  bool v6 = false;
  unsigned __int128 first = 0;
  unsigned __int128 last = 0;
  std::string text;
};

std::optional<IpAddr> ParseIp(std::string_view text);
// "192.168.2.0/24" (host bits allowed, as whereabouts accepts "192.168.2.225/28").
std::optional<IpRange> ParseCidr(std::string_view text);
// A CIDR or "a.b.c.d-e.f.g.h".
std::optional<IpRange> ParseRange(std::string_view text);

bool Contains(const IpRange& range, const IpAddr& ip);
bool Contains(const IpRange& outer, const IpRange& inner);
bool Overlaps(const IpRange& a, const IpRange& b);

}  // namespace fabcheck::k8s
