// Small string helpers used by every parser.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabcheck {

std::string_view Trim(std::string_view s);
// Splits on `sep`; keeps empty fields unless skip_empty.
std::vector<std::string> Split(std::string_view s, char sep, bool skip_empty = false);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
std::string ToLower(std::string_view s);

// Whole-string integer parses: nullopt on garbage, sign errors or overflow.
std::optional<long long> ParseInt(std::string_view s, int base = 10);
std::optional<unsigned long long> ParseUint(std::string_view s, int base = 10);
std::optional<double> ParseDouble(std::string_view s);

}  // namespace fabcheck
