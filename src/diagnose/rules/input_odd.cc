// input.binary: an input that is mostly not text (binary garbage, NUL bytes).
#include <fmt/format.h>

#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kInputBinary = {
    "input.binary", "input", "A log held binary bytes (NUL, control bytes, invalid UTF-8) or over-long lines",
    "Such lines were cleaned (control bytes dropped, invalid UTF-8 replaced by U+FFFD) and cut at 64 KiB; when most of a file is binary it "
    "is probably not a log (a core dump, a compressed file).",
    "Give the text log (decompress .gz first); NCCL_DEBUG_FILE writes plain text.", &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  if (s.binary_lines == 0 && s.lines_cut == 0) return;
  bool mostly = s.lines_read > 0 && s.binary_lines * 2 > s.lines_read;
  auto d = Make(kInputBinary, mostly ? model::Severity::kUnknown : model::Severity::kInfo, model::Confidence::kHigh,
                fmt::format("{} file(s)", s.files.size()),
                mostly ? fmt::format("{} of {} lines are binary: this does not look like a text log", s.binary_lines,
                                     s.lines_read)
                       : fmt::format("{} line(s) held binary bytes and {} were cut at 64 KiB; the rest was read",
                                     s.binary_lines, s.lines_cut));
  d.fix = kInputBinary.fix;
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
