// PCI configuration space: the one home for reading /sys/bus/pci/devices/<bdf>/config
// and walking its capability lists.
//
// The file holds the raw bytes (little-endian). Unprivileged readers get only
// the first 64 bytes (the standard header): the capability list (from the
// pointer at 0x34) and the extended list (from 0x100) need root; a device
// that is not PCI Express has no extended space (256 bytes in all).
//
// PCIe Base Specification references:
//  - Capability list: status register (0x06) bit 4 says there is one; 0x34
//    points at the first; each entry is {id:8, next:8}. PCI Express
//    capability ID 0x10: +0x04 Device Capabilities (32 bits, 2:0 Max_Payload_Size
//    Supported, 128 << n bytes), +0x08 Device Control (16 bits: 4 Enable
//    Relaxed Ordering, 7:5 Max_Payload_Size, 8 Extended Tag, 11 Enable No
//    Snoop, 14:12 Max_Read_Request_Size, each 128 << n bytes).
//  - Extended capabilities from 0x100: {id:16, version:4, next:12}. ACS
//    (0x000D): +4 ACS Capability, +6 ACS Control (16 bits each; bit 0 Source
//    Validation, 1 Translation Blocking, 2 P2P Request Redirect, 3 P2P
//    Completion Redirect, 4 Upstream Forwarding, 5 P2P Egress Control,
//    6 Direct Translated P2P). ATS (0x000F): +4 ATS Capability, +6 ATS
//    Control (bit 15 Enable, 4:0 Smallest Translation Unit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys {

// "/sys/bus/pci/devices/0000:18:00.0/config"
std::string PciConfigPath(std::string_view bdf);
// The raw bytes of a function's config space (through the SysRoot).
Result<std::string> ReadPciConfig(const SysRoot& root, std::string_view bdf);

inline constexpr size_t kPciStandardHeaderBytes = 64;   // what an unprivileged read returns
inline constexpr size_t kPciExtendedStart = 0x100;

inline constexpr uint8_t kCapIdPciExpress = 0x10;
inline constexpr uint16_t kExtCapIdAcs = 0x000D;
inline constexpr uint16_t kExtCapIdAts = 0x000F;

inline constexpr uint16_t kAcsSourceValidation = 1u << 0;
inline constexpr uint16_t kAcsTranslationBlocking = 1u << 1;
inline constexpr uint16_t kAcsRequestRedirect = 1u << 2;
inline constexpr uint16_t kAcsCompletionRedirect = 1u << 3;
inline constexpr uint16_t kAcsUpstreamForwarding = 1u << 4;
inline constexpr uint16_t kAcsEgressControl = 1u << 5;
inline constexpr uint16_t kAcsDirectTranslated = 1u << 6;

struct AcsInfo {
  uint16_t offset = 0;      // where the capability sits in config space
  uint16_t capability = 0;  // what the port supports
  uint16_t control = 0;     // what is enabled
  bool RedirectEnabled() const { return control & (kAcsRequestRedirect | kAcsCompletionRedirect); }
};

// lspci-style flags: "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-".
std::string FormatAcsFlags(uint16_t bits);

// Finds the ACS extended capability. nullopt when the device has none.
// Fails with FailedPrecondition when the bytes stop before the extended
// space (an unprivileged read), and DataLoss when the list is malformed.
Result<std::optional<AcsInfo>> FindAcs(std::string_view config);

// The PCI Express capability's device registers.
struct PcieDeviceControl {
  uint16_t offset = 0;            // of the PCI Express capability
  uint32_t device_capabilities = 0;
  uint16_t device_control = 0;
  int max_payload_supported = 0;  // bytes (Device Capabilities 2:0)
  int max_payload = 0;            // bytes (Device Control 7:5)
  int max_read_request = 0;       // bytes (Device Control 14:12)
  bool relaxed_ordering = false;  // Device Control bit 4
  bool no_snoop = false;          // Device Control bit 11
  bool extended_tag = false;      // Device Control bit 8
};
// Finds the PCI Express capability in the standard list. nullopt when the
// function has none (conventional PCI). FailedPrecondition when only the
// first 64 bytes were readable (the list lies beyond them: needs root);
// DataLoss when the list is malformed.
Result<std::optional<PcieDeviceControl>> FindPcieDeviceControl(std::string_view config);
// lspci's DevCtl line: "MaxPayload 256 bytes, MaxReadReq 4096 bytes, RlxdOrd+ NoSnoop- ExtTag+"
std::string FormatDeviceControl(const PcieDeviceControl& d);

struct AtsInfo {
  uint16_t offset = 0;
  uint16_t capability = 0;
  uint16_t control = 0;
  bool enabled() const { return control & 0x8000; }
  int smallest_translation_unit() const { return control & 0x1f; }  // 4096 << n bytes
};
// Finds the ATS extended capability; errors as FindAcs.
Result<std::optional<AtsInfo>> FindAts(std::string_view config);

}  // namespace fabcheck::sys
