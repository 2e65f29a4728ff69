// Kubernetes YAML through the whole lint: the event-built tree, the manifest
// loader and every rule, then the text, JSON and SARIF renderers. Of the
// SARIF log only what the input decides is built and serialised: its rule
// catalog is the same for every input (and checked by the unit tests), and
// copying it into each log and writing it out took a fifth of every execution.
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/json_text.h"
#include "k8s/config.h"
#include "k8s/lint.h"
#include "k8s/manifest.h"
#include "k8s/output.h"

using namespace fabcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const auto kProfile = k8s::FindProfile("generic");
  if (!kProfile.ok()) __builtin_trap();
  auto set = std::make_unique<k8s::ManifestSet>();
  set->files.push_back("fuzz.yaml");
  k8s::AddYamlText(text, "fuzz.yaml", *set);
  k8s::LintResult result = k8s::LintSet(std::move(set), k8s::LintConfig(), *kProfile);
  (void)k8s::FormatText(result, /*verbose=*/true);
  (void)ToJsonText(k8s::FormatJson(result), 2);
  k8s::SarifFindings sarif = k8s::FormatSarifFindings(result);
  (void)ToJsonText(sarif.results, 2);
  (void)ToJsonText(sarif.artifacts, 2);
  return 0;
}
