#include "inventory/gid.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <string>

#include "base/strings.h"

namespace fabcheck::inventory {

bool IsEmptyGid(std::string_view text) {
  std::string s(Trim(text));
  return s == "0000:0000:0000:0000:0000:0000:0000:0000" || s == "fe80:0000:0000:0000:0000:0000:0000:0000";
}

bool ParseGid(std::string_view text, model::GidEntry* entry) {
  std::string s(Trim(text));
  auto groups = Split(s, ':');
  if (groups.size() != 8) return false;
  std::array<uint8_t, 16> bytes{};
  for (size_t i = 0; i < 8; ++i) {
    if (groups[i].empty() || groups[i].size() > 4) return false;
    auto v = ParseUint(groups[i], 16);
    if (!v) return false;
    bytes[2 * i] = static_cast<uint8_t>(*v >> 8);
    bytes[2 * i + 1] = static_cast<uint8_t>(*v & 0xff);
  }
  entry->gid = s;
  bool mapped = true;  // ::ffff:a.b.c.d: 80 zero bits, 16 one bits
  for (int i = 0; i < 10; ++i) mapped = mapped && bytes[i] == 0;
  mapped = mapped && bytes[10] == 0xff && bytes[11] == 0xff;
  entry->ipv4 = mapped;
  entry->link_local = bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80;
  char buffer[INET6_ADDRSTRLEN] = {};
  if (mapped) {
    ::inet_ntop(AF_INET, bytes.data() + 12, buffer, sizeof(buffer));
  } else {
    ::inet_ntop(AF_INET6, bytes.data(), buffer, sizeof(buffer));
  }
  entry->ip = buffer;
  return true;
}

std::optional<int> PickNcclGidIndex(std::string_view link_layer, const std::vector<model::GidEntry>& gids) {
  if (link_layer == "InfiniBand") return 0;
  if (link_layer != "Ethernet") return std::nullopt;
  for (const auto& g : gids) {
    if (g.type == "RoCE v2" && g.ipv4 && !g.link_local) return g.index;
  }
  return std::nullopt;
}

}  // namespace fabcheck::inventory
