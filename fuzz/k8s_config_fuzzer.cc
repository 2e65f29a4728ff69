// The YAML files beside the manifests: a lint config (--config) and a render
// profile (k8s render --cluster-profile).
#include <cstdint>
#include <string>

#include "k8s/config.h"
#include "k8s/lint.h"
#include "k8s/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto config = fabcheck::k8s::ParseLintConfig(text, "fuzz-config.yaml");
  if (config.ok()) (void)fabcheck::k8s::ValidateConfig(*config);
  auto profile = fabcheck::k8s::ParseRenderProfile(text, "fuzz-profile.yaml");
  if (profile.ok()) (void)fabcheck::k8s::Render(*profile);
  return 0;
}
