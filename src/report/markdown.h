// The go-live report as Markdown, for tickets and wikis: verdict, the ten
// checklist items with their evidence and what to record, rungs, members
// (the ones that failed or left the run beyond 128) and baseline changes.
#pragma once

#include <string>

#include "fabcheck/model/report.h"

namespace fabcheck::report {

std::string RenderMarkdown(const model::GoLiveReport& report);

// Foreign text as one line of Markdown that renders as exactly that text:
// control characters neutralised (NeutralizeControls), newlines made spaces,
// the characters that start emphasis, code, tables, headings, links and
// images backslash-escaped, and <, >, & as entities (no raw HTML). Every
// field the Markdown report prints goes through it.
std::string MarkdownEscape(std::string_view text);

}  // namespace fabcheck::report
