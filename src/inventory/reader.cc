#include "inventory/reader.h"

#include <cctype>

#include "base/log.h"
#include "base/strings.h"

namespace fabcheck::inventory {
namespace {

// Missing or "not applicable" (the kernel answers EINVAL for carrier/speed of
// a down interface and for empty GID attribute slots).
bool IsAbsence(const Status& status) {
  return status.code() == StatusCode::kNotFound || status.message().find("EINVAL") != std::string::npos;
}

}  // namespace

bool LooksLikeBdf(std::string_view s) {
  // dddd:bb:dd.f
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string Basename(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

void Reader::Warn(const std::string& path, std::string message) {
  LOG_DEBUG("inventory", "{}: {}", root_.DisplayPath(path), message);
  warnings_.push_back({path, std::move(message)});
}

std::optional<std::string> Reader::Attr(const std::string& path, Need need) {
  auto content = root_.ReadFile(path);
  if (!content.ok()) {
    if (need == Need::kOptional && IsAbsence(content.status())) return std::nullopt;
    // Keep the errno part only: the path is the warning's own field, and the
    // host-side location of a fixture or capture must not leak into goldens.
    std::string message = content.status().message();
    std::string prefix = "cannot read " + root_.DisplayPath(path) + ": ";
    if (StartsWith(message, prefix)) message = message.substr(prefix.size());
    Warn(path, "unreadable: " + message);
    return std::nullopt;
  }
  std::string value(Trim(*content));
  if (value.empty()) {
    if (need == Need::kRequired) Warn(path, "empty file");
    return std::nullopt;
  }
  if (StartsWith(value, "N/A")) {
    Warn(path, "not available: '" + value + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<long long> Reader::Int(const std::string& path, Need need, int base) {
  auto text = Attr(path, need);
  if (!text) return std::nullopt;
  auto value = ParseInt(*text, base);
  if (!value) {
    Warn(path, "not an integer: '" + text->substr(0, 40) + "'");
    return std::nullopt;
  }
  return value;
}

std::vector<std::string> Reader::List(const std::string& path, Need need) {
  auto names = root_.ListDir(path);
  if (!names.ok()) {
    if (!(need == Need::kOptional && IsAbsence(names.status()))) {
      std::string message = names.status().message();
      std::string prefix = "cannot list " + root_.DisplayPath(path) + ": ";
      if (StartsWith(message, prefix)) message = message.substr(prefix.size());
      Warn(path, "cannot list: " + message);
    }
    return {};
  }
  return *names;
}

std::string Reader::LinkBasename(const std::string& path) {
  auto target = root_.ReadLink(path);
  return target.ok() ? Basename(*target) : std::string();
}

}  // namespace fabcheck::inventory

namespace fabcheck::inventory {

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      auto na = ParseUint(a.substr(i, ei - i)), nb = ParseUint(b.substr(j, ej - j));
      if (na && nb && *na != *nb) return *na < *nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}
}  // namespace fabcheck::inventory
