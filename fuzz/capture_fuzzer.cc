// Capture archives (.tar.gz, .tar) through SysRoot::Open: unpacking, then the
// reads a probe makes. Nothing may be written outside the unpack folder; the
// fuzzer runs in its own TMPDIR so a leak would show as files left there.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sys/sysroot.h"

namespace {

const std::string& InputPath() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/fabcheck-capture-fuzz-" + std::to_string(::getpid()) +
           ".tar.gz";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = InputPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto root = fabcheck::sys::SysRoot::Open(path);
  if (root.ok()) {
    auto names = root->ListDir("/sys");
    if (names.ok()) {
      for (const auto& name : *names) {
        (void)root->Resolve("/sys/" + name);
        (void)root->ReadAttribute("/sys/" + name);
        (void)root->ListDir("/sys/" + name);
      }
    }
    (void)root->ReadMeta("capture.json");
    (void)root->ReadLink("/sys/class");
  }
  std::remove(path.c_str());
  return 0;
}
