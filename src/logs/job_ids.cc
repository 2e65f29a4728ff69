#include "logs/job_ids.h"

#include <cctype>

#include "base/input.h"

namespace fabcheck::logs {

Result<std::set<std::string>> CommIdsOf(const std::string& path) {
  ASSIGN_OR_RETURN(LineReader reader, LineReader::Open(path));
  std::set<std::string> ids;
  constexpr std::string_view kKey = "commId 0x";
  std::string_view line;
  while (reader.Next(&line)) {
    size_t at = line.find(kKey);
    if (at == std::string_view::npos) continue;
    size_t start = at + kKey.size() - 2;  // keep "0x"
    size_t end = start + 2;
    while (end < line.size() && std::isxdigit(static_cast<unsigned char>(line[end]))) ++end;
    if (end > start + 2) ids.emplace(line.substr(start, end - start));
  }
  return ids;
}

}  // namespace fabcheck::logs
