#include "control/netif.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "base/fd.h"
#include "base/strings.h"

namespace fabcheck::control {
namespace {

struct Address {
  std::string interface;
  std::string address;
  int family = 0;
};

std::vector<Address> ListAddresses() {
  std::vector<Address> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6)) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = a->ifa_addr->sa_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
    inet_ntop(a->ifa_addr->sa_family, raw, text, sizeof text);
    out.push_back({a->ifa_name, text, a->ifa_addr->sa_family});
  }
  freeifaddrs(list);
  return out;
}

int InterfaceMtu(const std::string& name) {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid() || name.size() >= IFNAMSIZ) return 0;
  ifreq req{};
  std::memcpy(req.ifr_name, name.c_str(), name.size());
  if (::ioctl(fd.get(), SIOCGIFMTU, &req) != 0) return 0;
  return req.ifr_mtu;
}

std::string Known(const std::vector<Address>& all) {
  std::vector<std::string> items;
  for (const auto& a : all) items.push_back(fmt::format("{}={}", a.interface, a.address));
  return items.empty() ? "none" : Join(items, ", ");
}

}  // namespace

Result<RailInfo> RailFromInterface(const std::string& interface) {
  auto all = ListAddresses();
  // Prefer IPv4 (what RoCE v2 GIDs and NCCL's socket bootstrap usually use).
  const Address* best = nullptr;
  for (const auto& a : all) {
    if (a.interface != interface) continue;
    if (!best || (a.family == AF_INET && best->family != AF_INET)) best = &a;
  }
  if (!best) {
    return NotFoundError(fmt::format("--data-iface {}: no such interface with an address here (have: {})", interface,
                                     Known(all)));
  }
  return RailInfo{interface, best->address, InterfaceMtu(interface)};
}

Result<RailInfo> RailFromAddress(const std::string& address) {
  auto all = ListAddresses();
  for (const auto& a : all) {
    if (a.address == address) return RailInfo{a.interface, a.address, InterfaceMtu(a.interface)};
  }
  return NotFoundError(
      fmt::format("--data-addr {}: no interface of this node has that address (have: {})", address, Known(all)));
}

std::string NodeName() {
  if (const char* n = std::getenv("NODE_NAME"); n && *n) return n;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

}  // namespace fabcheck::control
