#include "checks/pci_config.h"

#include <fmt/format.h>

namespace fabcheck::checks {
namespace {

constexpr size_t kExtendedStart = 0x100;
constexpr size_t kExtendedEnd = 0x1000;

uint32_t Le32(std::string_view b, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[at])) |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 3])) << 24;
}
uint16_t Le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}

}  // namespace

std::string FormatAcsFlags(uint16_t bits) {
  struct Flag {
    uint16_t bit;
    const char* name;
  };
  static constexpr Flag kFlags[] = {{kAcsSourceValidation, "SrcValid"},   {kAcsTranslationBlocking, "TransBlk"},
                                    {kAcsRequestRedirect, "ReqRedir"},    {kAcsCompletionRedirect, "CmpltRedir"},
                                    {kAcsUpstreamForwarding, "UpstreamFwd"}, {kAcsEgressControl, "EgressCtrl"},
                                    {kAcsDirectTranslated, "DirectTrans"}};
  std::string out;
  for (const auto& f : kFlags) {
    if (!out.empty()) out += ' ';
    out += f.name;
    out += (bits & f.bit) ? '+' : '-';
  }
  return out;
}

Result<std::optional<AcsInfo>> FindAcs(std::string_view config) {
  if (config.size() < kExtendedStart + 4) {
    return FailedPreconditionError("only " + std::to_string(config.size()) +
                                   " bytes of config space are readable; the extended capabilities start at 0x100 "
                                   "(reading them needs root, or the device is not PCI Express)");
  }
  size_t offset = kExtendedStart;
  // Each capability is at least 4 bytes and offsets are dword aligned, so a
  // well-formed list has at most (0x1000-0x100)/4 entries; more means a loop.
  for (int hops = 0; hops < static_cast<int>((kExtendedEnd - kExtendedStart) / 4); ++hops) {
    if (offset + 4 > config.size()) {
      return DataLossError(fmt::format("extended capability at {:#x} lies past the {} bytes read", offset, config.size()));
    }
    uint32_t header = Le32(config, offset);
    if (header == 0 || header == 0xffffffffu) return std::optional<AcsInfo>();  // no (more) capabilities
    uint16_t id = header & 0xffff;
    size_t next = (header >> 20) & 0xffc;
    if (id == kExtCapIdAcs) {
      if (offset + 8 > config.size()) return DataLossError("ACS capability truncated in config space");
      AcsInfo info;
      info.offset = static_cast<uint16_t>(offset);
      info.capability = Le16(config, offset + 4);
      info.control = Le16(config, offset + 6);
      return std::optional<AcsInfo>(info);
    }
    if (next == 0) return std::optional<AcsInfo>();
    if (next < kExtendedStart) {
      return DataLossError(fmt::format(
          "extended capability list points back into the standard header ({:#x}); config space is malformed", next));
    }
    offset = next;
  }
  return DataLossError("extended capability list loops; config space is malformed");
}

}  // namespace fabcheck::checks
