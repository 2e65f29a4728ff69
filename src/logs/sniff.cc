#include "logs/sniff.h"

#include <cctype>

namespace fabcheck::logs {
namespace {

constexpr size_t kSniffBytes = 1024;

// Markers of the lines diagnose reads; each is text no JSON document of
// fabcheck's (or a JSON log of another tool's) starts its first KiB with.
constexpr std::string_view kMarkers[] = {
    "NCCL INFO", "NCCL WARN", "NCCL version", "ProcessGroupNCCL", "torch.distributed", "Watchdog caught",
};

std::string_view SkipSpace(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// Whether the text after an opening '[' can continue a JSON array: a value
// or the closing bracket. "[1,0]<stdout>:" passes this and is caught by the
// second element check; "[rank0]:", "[2026-..." and "[pod/..." fail it.
bool ArrayStartIsJson(std::string_view after_bracket) {
  std::string_view s = SkipSpace(after_bracket);
  if (s.empty()) return true;  // only "[" so far: undecided, JSON keeps its claim
  char c = s[0];
  if (c == '{' || c == '[' || c == '"' || c == ']') return true;
  if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
    // A number must be followed by ',', ']' or space; "2026-11-02" and "1,0]<" are not arrays.
    size_t i = 1;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' ||
                            s[i] == 'E' || s[i] == '+' || (s[i] == '-' && (s[i - 1] == 'e' || s[i - 1] == 'E')))) {
      ++i;
    }
    std::string_view rest = SkipSpace(s.substr(i));
    if (rest.empty()) return true;
    if (rest[0] == ']') {
      // "[1]" closes the array: what follows must be the end of the document.
      std::string_view after = SkipSpace(rest.substr(1));
      return after.empty();
    }
    return rest[0] == ',' && ArrayStartIsJson(rest.substr(1));
  }
  return s.substr(0, 4) == "true" || s.substr(0, 5) == "false" || s.substr(0, 4) == "null";
}

}  // namespace

bool HasLogMarker(std::string_view head) {
  std::string_view window = head.substr(0, kSniffBytes);
  for (std::string_view marker : kMarkers) {
    if (window.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

TextKind SniffText(std::string_view head) {
  std::string_view s = SkipSpace(head);
  if (s.empty()) return TextKind::kUnknown;
  // An object is JSON whatever it holds (fabcheck's coll JSON carries NCCL lines).
  if (s[0] == '{') return TextKind::kJson;
  if (s[0] != '[') return TextKind::kLog;
  if (HasLogMarker(head)) return TextKind::kLog;
  return ArrayStartIsJson(s.substr(1)) ? TextKind::kJson : TextKind::kLog;
  return TextKind::kLog;
}

}  // namespace fabcheck::logs
