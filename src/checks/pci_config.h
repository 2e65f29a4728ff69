// PCI configuration space: just enough to read a bridge's ACS settings.
//
// /sys/bus/pci/devices/<bdf>/config holds the raw bytes (little-endian).
// Unprivileged readers get only the first 64 bytes; the extended capability
// list (where ACS lives, from offset 0x100) needs root and a PCIe device
// (4096 bytes). PCIe Base Specification, "Access Control Services (ACS)
// Extended Capability": extended capability ID 0x000D; at +4 the 16-bit ACS
// Capability register, at +6 the 16-bit ACS Control register, both with
// bit 0 Source Validation, 1 Translation Blocking, 2 P2P Request Redirect,
// 3 P2P Completion Redirect, 4 Upstream Forwarding, 5 P2P Egress Control,
// 6 Direct Translated P2P.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::checks {

inline constexpr uint16_t kExtCapIdAcs = 0x000D;
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

}  // namespace fabcheck::checks
