// Helpers for the k8s tests: lint YAML text or files in-process.
#pragma once

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "k8s/config.h"
#include "k8s/lint.h"

namespace fabcheck::k8s::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline LintResult LintText(const std::string& yaml, const std::string& profile = "generic",
                           const LintConfig& config = LintConfig{}, const std::string& file = "test.yaml") {
  auto set = std::make_unique<ManifestSet>();
  set->files.push_back(file);
  AddYamlText(yaml, file, *set);
  return LintSet(std::move(set), config, *FindProfile(profile));
}

inline int CountId(const LintResult& r, const std::string& id) {
  int n = 0;
  for (const auto& f : r.findings) n += f.finding.id == id;
  return n;
}

inline std::string Describe(const LintResult& r) {
  std::string s;
  for (const auto& f : r.findings) {
    s += std::string(LevelName(f.level)) + " " + f.finding.id + " " + f.finding.object + " line " +
         std::to_string(f.finding.location->line) + ": " + f.finding.message + "\n";
  }
  return s;
}

}  // namespace fabcheck::k8s::testing
