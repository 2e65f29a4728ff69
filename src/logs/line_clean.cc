#include "logs/line_clean.h"

#include <cctype>
#include <cstdint>

namespace fabcheck::logs {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of a valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool NeedsScrub(std::string_view s) {
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x7F) {
      if (c == '\t') continue;
      return true;
    }
  }
  return s.find("[0m") != std::string_view::npos || s.find("[0;") != std::string_view::npos;
}

// Removes escape sequences, control bytes and invalid UTF-8; also the "[..m"
// remains of colour codes whose ESC byte was lost.
std::string_view Scrub(std::string_view s, std::string* out, bool* binary) {
  out->clear();
  out->reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b == 0x1B) {  // ESC [ params letter
      size_t j = i + 1;
      if (j < s.size() && s[j] == '[') {
        ++j;
        while (j < s.size() && (IsDigit(s[j]) || s[j] == ';' || s[j] == '?')) ++j;
        if (j < s.size()) ++j;  // the final letter
      }
      i = j;
      continue;
    }
    if (b == '[' && i + 2 < s.size() && (IsDigit(s[i + 1]) || s[i + 1] == 'm')) {
      // "[0m", "[1;31m", "[m": colour remains without ESC.
      size_t j = i + 1;
      while (j < s.size() && j - i < 12 && (IsDigit(s[j]) || s[j] == ';')) ++j;
      if (j < s.size() && s[j] == 'm' && (j + 1 == s.size() || s[j + 1] == ' ' || s[j + 1] == '[' ||
                                          std::isalnum(static_cast<unsigned char>(s[j + 1])))) {
        // Only when it is not the start of something NCCL prints ("[0] ", "[1,0]").
        i = j + 1;
        continue;
      }
    }
    if (b < 0x20 && b != '\t') {
      *binary = true;
      ++i;
      continue;
    }
    if (b == 0x7F) {
      *binary = true;
      ++i;
      continue;
    }
    if (b >= 0x80) {
      size_t n = Utf8Length(s, i);
      if (n == 0) {
        *binary = true;
        out->append("\xef\xbf\xbd");  // U+FFFD, as every --json output writes such bytes
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    out->push_back(static_cast<char>(b));
    ++i;
  }
  return *out;
}

bool ConsumeSpaces(std::string_view* s) {
  size_t n = 0;
  while (n < s->size() && ((*s)[n] == ' ' || (*s)[n] == '\t')) ++n;
  s->remove_prefix(n);
  return n > 0;
}

// Digits at s[pos...]; returns how many.
size_t Digits(std::string_view s, size_t pos) {
  size_t n = 0;
  while (pos + n < s.size() && IsDigit(s[pos + n])) ++n;
  return n;
}

int ToInt(std::string_view digits) {
  int v = 0;
  for (char c : digits.substr(0, 9)) v = v * 10 + (c - '0');
  return v;
}

// "2024-11-28T07:42:11.525Z", "2024-11-28 07:42:11,422", "2026-11-02 09:14:03", with an
// optional zone and optional brackets around it.
bool ConsumeTimestamp(std::string_view* s) {
  std::string_view t = *s;
  bool bracket = !t.empty() && t[0] == '[';
  if (bracket) t.remove_prefix(1);
  if (t.size() < 19 || Digits(t, 0) != 4 || t[4] != '-' || Digits(t, 5) != 2 || t[7] != '-' || Digits(t, 8) != 2 ||
      (t[10] != 'T' && t[10] != ' ') || Digits(t, 11) != 2 || t[13] != ':' || Digits(t, 14) != 2 || t[16] != ':' ||
      Digits(t, 17) != 2) {
    return false;
  }
  size_t i = 19;
  if (i < t.size() && (t[i] == '.' || t[i] == ',')) i += 1 + Digits(t, i + 1);
  if (i < t.size() && t[i] == 'Z') {
    ++i;
  } else if (i + 2 < t.size() && (t[i] == '+' || t[i] == '-') && Digits(t, i + 1) >= 2) {
    i += 1 + Digits(t, i + 1);
    if (i < t.size() && t[i] == ':') i += 1 + Digits(t, i + 1);
  } else if (i + 4 <= t.size() && t.substr(i, 4) == " UTC") {
    i += 4;
  }
  if (bracket) {
    if (i >= t.size() || t[i] != ']') return false;
    ++i;
  }
  if (i < t.size() && t[i] != ' ' && t[i] != '\t' && t[i] != '|' && t[i] != ':' && t[i] != ']') return false;
  if (i < t.size() && t[i] == ':') ++i;
  t.remove_prefix(i);
  *s = t;
  return true;
}

bool ConsumeLiteral(std::string_view* s, std::string_view lit) {
  if (s->substr(0, lit.size()) != lit) return false;
  s->remove_prefix(lit.size());
  return true;
}

}  // namespace

CleanLine Clean(std::string_view raw, std::string* scratch) {
  CleanLine out;
  std::string_view s = raw;
  if (NeedsScrub(s)) s = Scrub(s, scratch, &out.had_binary);
  // Ray's suffix.
  if (size_t r = s.rfind(" [repeated "); r != std::string_view::npos && s.size() > r && s.back() == ']') {
    std::string_view tail = s.substr(r + 11);
    size_t n = Digits(tail, 0);
    if (n > 0 && tail.substr(n, 2) == "x ") {
      out.repeated = std::max(1, ToInt(tail.substr(0, n)));
      s = s.substr(0, r);
    }
  }
  for (int guard = 0; guard < 12 && !s.empty(); ++guard) {
    if (ConsumeSpaces(&s)) continue;
    if (s[0] == '|') {
      s.remove_prefix(1);
      continue;
    }
    if (ConsumeTimestamp(&s)) continue;
    if (s[0] == '[') {
      // "[1,3]<stdout>:"
      size_t a = Digits(s, 1);
      if (a > 0 && s.size() > a + 2 && s[1 + a] == ',') {
        size_t b = Digits(s, 2 + a);
        size_t close = 2 + a + b;
        if (b > 0 && close < s.size() && s[close] == ']') {
          std::string_view rest = s.substr(close + 1);
          if (ConsumeLiteral(&rest, "<stdout>:") || ConsumeLiteral(&rest, "<stderr>:") || ConsumeLiteral(&rest, ":")) {
            out.launcher_rank = ToInt(s.substr(2 + a, b));
            s = rest;
            continue;
          }
        }
      }
      // "[rank3]:", "[default3]:"
      bool torch = false;
      for (std::string_view word : {"[rank", "[default"}) {
        if (s.substr(0, word.size()) == word) {
          size_t d = Digits(s, word.size());
          size_t close = word.size() + d;
          if (d > 0 && close + 1 < s.size() && s[close] == ']' && s[close + 1] == ':') {
            out.launcher_rank = ToInt(s.substr(word.size(), d));
            s.remove_prefix(close + 2);
            torch = true;
            break;
          }
        }
      }
      if (torch) continue;
      // torchrun's --log-line-prefix-template and kin: "[trainer3]:", "[trainer0|0]:" (a
      // name, no spaces, then "]:" at once; NCCL's own "[0] " has a space after it).
      if (size_t close = s.find("]:"); close != std::string_view::npos && close > 1 && close < 64) {
        std::string_view inner = s.substr(1, close - 1);
        bool name = inner.find_first_of(" \t[]()") == std::string_view::npos && !IsDigit(inner[0]);
        if (name) {
          size_t end = inner.find_last_not_of("0123456789");
          if (end != std::string_view::npos && end + 1 < inner.size() && inner.find('|') == std::string_view::npos) {
            out.launcher_rank = ToInt(inner.substr(end + 1));
          } else if (size_t bar = inner.find('|'); bar != std::string_view::npos) {
            std::string_view left = inner.substr(0, bar);
            size_t e = left.find_last_not_of("0123456789");
            if (e != std::string_view::npos && e + 1 < left.size()) out.launcher_rank = ToInt(left.substr(e + 1));
          }
          s.remove_prefix(close + 2);
          continue;
        }
      }
      // "[pod/NAME/CONTAINER] "
      if (s.substr(0, 5) == "[pod/") {
        size_t close = s.find(']');
        if (close != std::string_view::npos && close < 300) {
          std::string_view inner = s.substr(5, close - 5);
          out.pod = inner.substr(0, inner.find('/'));
          s.remove_prefix(close + 1);
          continue;
        }
      }
      // "[0604/1024]" (rank/world prefixes some launchers add)
      size_t d1 = Digits(s, 1);
      if (d1 > 0 && 1 + d1 < s.size() && s[1 + d1] == '/') {
        size_t d2 = Digits(s, 2 + d1);
        if (d2 > 0 && 2 + d1 + d2 < s.size() && s[2 + d1 + d2] == ']') {
          out.launcher_rank = ToInt(s.substr(1, d1));
          s.remove_prefix(3 + d1 + d2);
          continue;
        }
      }
      break;
    }
    if (s[0] == '(') {
      // Ray: "(pid=123)", "(RayTrainWorker pid=123, ip=10.0.0.5)", "(raylet, ip=...)"
      size_t close = s.find(')');
      if (close != std::string_view::npos && close < 200) {
        std::string_view inner = s.substr(1, close - 1);
        if (inner.find("pid=") != std::string_view::npos || inner.find("ip=") != std::string_view::npos ||
            inner == "raylet") {
          if (size_t ip = inner.find("ip="); ip != std::string_view::npos) {
            std::string_view v = inner.substr(ip + 3);
            out.ray_ip = v.substr(0, v.find_first_of(", "));
          }
          s.remove_prefix(close + 1);
          continue;
        }
      }
      break;
    }
    if (IsDigit(s[0])) {
      // Slurm "3: " (also right-aligned " 3: ").
      size_t d = Digits(s, 0);
      if (d < 7 && d + 1 < s.size() && s[d] == ':' && s[d + 1] == ' ') {
        out.launcher_rank = ToInt(s.substr(0, d));
        s.remove_prefix(d + 2);
        continue;
      }
      break;
    }
    // pdsh/clush "node-a: node-a:1234:..." (the same name twice).
    size_t colon = s.find(": ");
    if (colon != std::string_view::npos && colon > 0 && colon < 128) {
      std::string_view name = s.substr(0, colon);
      std::string_view rest = s.substr(colon + 2);
      if (name.find_first_of(" []()") == std::string_view::npos && rest.size() > name.size() &&
          rest.substr(0, name.size()) == name && rest[name.size()] == ':') {
        s = rest;
        continue;
      }
    }
    break;
  }
  out.text = s;
  return out;
}

}  // namespace fabcheck::logs
