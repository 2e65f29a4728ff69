#include "base/terminal_text.h"

#include <cstdio>

namespace fabcheck {
namespace {

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0
// for a byte that does not start one (overlong forms and surrogates included).
size_t Utf8Sequence(std::string_view text, size_t i, char32_t* code_point) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  char32_t cp = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, cp = lead & 0x0f;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, cp = lead & 0x07;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xbf)) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  *code_point = cp;
  return length;
}

// C1 controls (8-bit CSI, OSC...) and the bidirectional embeddings,
// overrides and isolates that reorder what a reader sees.
bool Hidden(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string NeutralizeControls(std::string_view text, Newlines newlines) {
  std::string out;
  out.reserve(text.size());
  char escape[16];
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\t' || (c == '\n' && newlines == Newlines::kKeep)) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x80) {  // C0 controls and DEL
      std::snprintf(escape, sizeof(escape), "\\x%02x", c);
      out += escape;
      ++i;
      continue;
    }
    char32_t cp = 0;
    const size_t length = Utf8Sequence(text, i, &cp);
    if (length == 0) {  // not UTF-8: a lone 0x9b would be an 8-bit CSI to some terminals
      std::snprintf(escape, sizeof(escape), "\\x%02x", c);
      out += escape;
      ++i;
      continue;
    }
    if (Hidden(cp)) {
      std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(cp));
      out += escape;
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace fabcheck
