// The PCI config space readers (the ACS and ATS capability walks, the PCI
// Express Device Capabilities and Control registers) over arbitrary bytes, as
// a `config` file of a captured or hostile sysroot holds.
#include <cstdint>
#include <string_view>

#include "sys/pci_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view config(reinterpret_cast<const char*>(data), size);
  auto acs = fabcheck::sys::FindAcs(config);
  if (acs.ok() && acs->has_value()) {
    (void)fabcheck::sys::FormatAcsFlags((*acs)->capability);
    (void)fabcheck::sys::FormatAcsFlags((*acs)->control);
  }
  auto devctl = fabcheck::sys::FindPcieDeviceControl(config);
  if (devctl.ok() && devctl->has_value()) (void)fabcheck::sys::FormatDeviceControl(**devctl);
  (void)fabcheck::sys::FindAts(config);
  return 0;
}
