// Foreign text made safe for a terminal or a log. One home for it, below
// every user: error messages, log lines (base/log.cc), the Markdown report
// (report/markdown.cc) and everything a command prints on stdout
// (base/stdout_guard.h).
#pragma once

#include <string>
#include <string_view>

namespace fabcheck {

// Foreign text (a bundle's fields, a log line, a peer's message) made safe
// to print on a terminal or write to a log: control characters (C0 but tab,
// DEL, C1), Unicode bidirectional overrides and bytes that are not UTF-8
// become visible escapes ("\x1b", "\u202e"), so an ESC sequence cannot
// recolour, move the cursor, retitle the terminal or hide text. Newlines are
// escaped too unless `newlines` keeps them: in a log line a newline would
// forge the next line. Printable text comes back unchanged.
enum class Newlines { kEscape, kKeep };
std::string NeutralizeControls(std::string_view text, Newlines newlines = Newlines::kEscape);

}  // namespace fabcheck
