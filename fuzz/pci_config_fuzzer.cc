// The PCI config space reader (ACS capability walk) over arbitrary bytes, as
// a `config` file of a captured or hostile sysroot holds.
#include <cstdint>
#include <string_view>

#include "checks/pci_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view config(reinterpret_cast<const char*>(data), size);
  auto acs = fabcheck::checks::FindAcs(config);
  if (acs.ok() && acs->has_value()) {
    (void)fabcheck::checks::FormatAcsFlags((*acs)->capability);
    (void)fabcheck::checks::FormatAcsFlags((*acs)->control);
  }
  return 0;
}
