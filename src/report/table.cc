#include "report/table.h"

#include <utility>

namespace fabcheck::report {

size_t DisplayWidth(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;  // UTF-8 continuation bytes add nothing
  return n;
}

std::string Pad(std::string_view s, size_t width, Align align) {
  const size_t shown = DisplayWidth(s);
  if (shown >= width) return std::string(s);
  std::string fill(width - shown, ' ');
  return align == Align::kLeft ? std::string(s) + fill : fill + std::string(s);
}

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width == 0) return "";
  return std::string(s.substr(0, width - 1)) + "~";
}

TextTable::TextTable(std::vector<Column> columns, TableStyle style)
    : columns_(std::move(columns)), style_(std::move(style)) {}

std::string TextTable::Header() const {
  std::vector<std::string> cells;
  cells.reserve(columns_.size());
  for (const auto& c : columns_) cells.push_back(c.header);
  return Row(cells);
}

std::string TextTable::Row(const std::vector<std::string>& cells) const {
  std::string out = style_.indent;
  const size_t n = std::min(cells.size(), columns_.size());
  for (size_t i = 0; i < n; ++i) {
    const Column& c = columns_[i];
    if (i > 0) out += c.gap ? c.gap : style_.separator;
    std::string cell = c.max > 0 ? Cut(cells[i], c.max) : cells[i];
    // A short row ends at its last cell: nothing to align after it.
    const bool last_of_short_row = i + 1 == n && n < columns_.size();
    out += last_of_short_row ? cell : Pad(cell, c.width, c.align);
  }
  // Cells beyond the columns follow as they are (free text at the end of a row).
  for (size_t i = n; i < cells.size(); ++i) out += style_.separator + cells[i];
  out += style_.line_end;
  return out;
}

void TextTable::Add(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

std::string TextTable::Render(bool with_header) const {
  std::string out = with_header ? Header() : std::string();
  for (const auto& r : rows_) out += Row(r);
  return out;
}

}  // namespace fabcheck::report
