#include "net/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

namespace fabcheck::net {

bool IsLoopbackAddress(std::string_view host) {
  if (host == "localhost") return true;
  std::string h(host);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace fabcheck::net
