// Writing a rendered report: stdout, or a file replaced atomically (written
// next to it, then renamed), never through a non-regular file.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::report {

enum class Format { kHtml, kMarkdown, kJson };

// "html", "md"/"markdown", "json"; InvalidArgument naming the choices otherwise.
Result<Format> ParseFormat(std::string_view name);
// From an output file name: .html/.htm, .md, .json; nullopt-like NotFound otherwise.
Result<Format> FormatFromPath(std::string_view path);

// Writes `content` to `path` ("-" = stdout). Refuses directories, FIFOs and
// devices; a partial file never replaces a good one.
Status WriteOutput(const std::string& path, std::string_view content);

}  // namespace fabcheck::report
