// Renderings of a lint result (text for people, JSON, SARIF 2.1.0 for code
// scanning) and of the rule catalog (Markdown for docs/k8s-rules.md).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "k8s/lint.h"

namespace fabcheck::k8s {

inline constexpr const char* kLintSchema = "fabcheck.k8s-lint/v1";
inline constexpr const char* kRulesSchema = "fabcheck.k8s-rules/v1";

// Grouped per file, then per object; each finding with why, evidence and fix.
std::string FormatText(const LintResult& result, bool verbose);
nlohmann::json FormatJson(const LintResult& result);
// SARIF 2.1.0: one run, the rule catalog as tool.driver.rules, one result per finding.
nlohmann::json FormatSarif(const LintResult& result);
// The part of that log the result decides: runs[0].results and
// runs[0].artifacts. The rest (the rule catalog, the tool) is the same for
// every result; the fuzzer renders only this part.
struct SarifFindings {
  nlohmann::json results;
  nlohmann::json artifacts;
};
SarifFindings FormatSarifFindings(const LintResult& result);

// The catalog: Markdown (docs/k8s-rules.md), JSON, or a short table.
std::string RulesMarkdown();
nlohmann::json RulesJson();
std::string RulesText();

// SARIF level of a lint level: error, warning, note.
std::string SarifLevel(Level level);
// A relative file path as a URI reference (percent-encoded).
std::string FileUri(const std::string& path);

}  // namespace fabcheck::k8s
