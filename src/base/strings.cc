#include "base/strings.h"

#include <cctype>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <string>

namespace fabcheck {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string> Split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    std::string_view field = s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    if (!(skip_empty && field.empty())) out.emplace_back(field);
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<long long> ParseInt(std::string_view s, int base) {
  s = Trim(s);
  if (base == 16 && (StartsWith(s, "0x") || StartsWith(s, "0X"))) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  long long value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<unsigned long long> ParseUint(std::string_view s, int base) {
  s = Trim(s);
  if (base == 16 && (StartsWith(s, "0x") || StartsWith(s, "0X"))) s.remove_prefix(2);
  if (s.empty() || s.front() == '-') return std::nullopt;
  unsigned long long value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  // "nan" and "inf" parse, but no value fabcheck reads (a port rate, a
  // profile figure, a bandwidth in a log) can be one: a NaN compares false
  // with everything and would pass every threshold.
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace fabcheck
