// Machine-type profiles (doctor --profile): YAML from anywhere.
#include <cstdint>
#include <string_view>

#include "checks/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)fabcheck::checks::ParseProfile(text, "fuzz.yaml");
  return 0;
}
