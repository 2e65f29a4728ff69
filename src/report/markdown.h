// The go-live report as Markdown, for tickets and wikis: verdict, the ten
// checklist items with their evidence and what to record, rungs, members
// (the ones that failed or left the run beyond 128) and baseline changes.
#pragma once

#include <string>

#include "fabcheck/model/report.h"

namespace fabcheck::report {

std::string RenderMarkdown(const model::GoLiveReport& report);

// Escapes text for a Markdown table cell or line (|, *, _, `, <, newlines).
std::string MarkdownEscape(std::string_view text);

}  // namespace fabcheck::report
