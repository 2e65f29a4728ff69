#include "sys/pci_config.h"

#include <fmt/format.h>

#include "sys/pci.h"

namespace fabcheck::sys {
namespace {

constexpr size_t kExtendedEnd = 0x1000;
constexpr size_t kCapabilityPointer = 0x34;
constexpr size_t kStatusRegister = 0x06;
constexpr uint16_t kStatusCapList = 1u << 4;

uint32_t Le32(std::string_view b, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[at])) |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 3])) << 24;
}
uint16_t Le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}

// The offset of extended capability `want`, nullopt when absent.
Result<std::optional<size_t>> FindExtended(std::string_view config, uint16_t want, const char* name) {
  if (config.size() < kPciExtendedStart + 4) {
    return FailedPreconditionError("only " + std::to_string(config.size()) +
                                   " bytes of config space are readable; the extended capabilities start at 0x100 "
                                   "(reading them needs root, or the device is not PCI Express)");
  }
  size_t offset = kPciExtendedStart;
  // Each capability is at least 4 bytes and offsets are dword aligned, so a
  // well-formed list has at most (0x1000-0x100)/4 entries; more means a loop.
  for (int hops = 0; hops < static_cast<int>((kExtendedEnd - kPciExtendedStart) / 4); ++hops) {
    if (offset + 4 > config.size()) {
      return DataLossError(fmt::format("extended capability at {:#x} lies past the {} bytes read", offset, config.size()));
    }
    uint32_t header = Le32(config, offset);
    if (header == 0 || header == 0xffffffffu) return std::optional<size_t>();  // no (more) capabilities
    uint16_t id = header & 0xffff;
    size_t next = (header >> 20) & 0xffc;
    if (id == want) {
      if (offset + 8 > config.size()) return DataLossError(std::string(name) + " capability truncated in config space");
      return std::optional<size_t>(offset);
    }
    if (next == 0) return std::optional<size_t>();
    if (next < kPciExtendedStart) {
      return DataLossError(fmt::format(
          "extended capability list points back into the standard header ({:#x}); config space is malformed", next));
    }
    offset = next;
  }
  return DataLossError("extended capability list loops; config space is malformed");
}

}  // namespace

std::string PciConfigPath(std::string_view bdf) { return pci::Function(bdf).dir() + "/config"; }

Result<std::string> ReadPciConfig(const SysRoot& root, std::string_view bdf) {
  return root.ReadFile(PciConfigPath(bdf));
}

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
  ASSIGN_OR_RETURN(std::optional<size_t> at, FindExtended(config, kExtCapIdAcs, "ACS"));
  if (!at) return std::optional<AcsInfo>();
  AcsInfo info;
  info.offset = static_cast<uint16_t>(*at);
  info.capability = Le16(config, *at + 4);
  info.control = Le16(config, *at + 6);
  return std::optional<AcsInfo>(info);
}

Result<std::optional<AtsInfo>> FindAts(std::string_view config) {
  ASSIGN_OR_RETURN(std::optional<size_t> at, FindExtended(config, kExtCapIdAts, "ATS"));
  if (!at) return std::optional<AtsInfo>();
  AtsInfo info;
  info.offset = static_cast<uint16_t>(*at);
  info.capability = Le16(config, *at + 4);
  info.control = Le16(config, *at + 6);
  return std::optional<AtsInfo>(info);
}

Result<std::optional<PcieDeviceControl>> FindPcieDeviceControl(std::string_view config) {
  if (config.size() < kPciStandardHeaderBytes) {
    return DataLossError("config space is " + std::to_string(config.size()) +
                         " bytes, shorter than the 64-byte standard header");
  }
  if (!(Le16(config, kStatusRegister) & kStatusCapList)) return std::optional<PcieDeviceControl>();
  size_t offset = static_cast<uint8_t>(config[kCapabilityPointer]) & 0xfc;
  // At most (256-64)/4 entries fit between the header and 0x100; more is a loop.
  for (int hops = 0; hops < 48 && offset != 0; ++hops) {
    if (offset < kPciStandardHeaderBytes) {
      return DataLossError(fmt::format("capability pointer {:#x} points into the standard header; config space is "
                                       "malformed", offset));
    }
    if (offset + 2 > config.size()) {
      return FailedPreconditionError(fmt::format(
          "only {} bytes of config space are readable; the capability list continues at {:#x} (reading beyond the "
          "first 64 bytes needs root)", config.size(), offset));
    }
    uint8_t id = static_cast<uint8_t>(config[offset]);
    if (id == kCapIdPciExpress) {
      if (offset + 0x0a > config.size()) {
        return FailedPreconditionError(fmt::format(
            "only {} bytes of config space are readable; the PCI Express capability at {:#x} lies beyond them "
            "(reading it needs root)", config.size(), offset));
      }
      PcieDeviceControl d;
      d.offset = static_cast<uint16_t>(offset);
      d.device_capabilities = Le32(config, offset + 4);
      d.device_control = Le16(config, offset + 8);
      d.max_payload_supported = 128 << (d.device_capabilities & 0x7);
      d.max_payload = 128 << ((d.device_control >> 5) & 0x7);
      d.max_read_request = 128 << ((d.device_control >> 12) & 0x7);
      d.relaxed_ordering = d.device_control & (1u << 4);
      d.extended_tag = d.device_control & (1u << 8);
      d.no_snoop = d.device_control & (1u << 11);
      return std::optional<PcieDeviceControl>(d);
    }
    offset = static_cast<uint8_t>(config[offset + 1]) & 0xfc;
  }
  if (offset != 0) return DataLossError("capability list loops; config space is malformed");
  return std::optional<PcieDeviceControl>();
}

std::string FormatDeviceControl(const PcieDeviceControl& d) {
  return fmt::format("MaxPayload {} bytes, MaxReadReq {} bytes, RlxdOrd{} NoSnoop{} ExtTag{}", d.max_payload,
                     d.max_read_request, d.relaxed_ordering ? '+' : '-', d.no_snoop ? '+' : '-',
                     d.extended_tag ? '+' : '-');
}

}  // namespace fabcheck::sys
