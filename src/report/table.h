// The one table writer behind every command's human output (perf, sweep,
// inventory, doctor, coll, gpu, report): fixed-width columns, left or right
// aligned, like printf's %-10s / %10s, so the tables users already compare with
// perftest and nccl-tests keep their exact layout.
//
// A cell longer than its width is never cut unless the column sets `max`
// (then it ends in "~"). A row with fewer cells than columns ends at its last
// cell without padding it ("FAILED: ..." lines that span the rest of a row).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::report {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  size_t width = 0;          // pad to this many characters (0: no padding)
  Align align = Align::kLeft;
  size_t max = 0;            // cut longer cells to this many characters, ending in "~" (0: never)
  // Text between the previous column and this one; the table's separator when unset.
  const char* gap = nullptr;
};

struct TableStyle {
  std::string indent;            // before every line
  std::string separator = " ";   // between columns (unless a column sets its gap)
  std::string line_end = "\n";
};

class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns, TableStyle style = {});

  // The header line (the columns' headers as a row).
  std::string Header() const;
  // One line of `cells`, formatted by the columns (without storing it).
  std::string Row(const std::vector<std::string>& cells) const;
  // Stores a row for Render().
  void Add(std::vector<std::string> cells);
  // Header (when `with_header`) and the stored rows.
  std::string Render(bool with_header = true) const;

  size_t size() const { return rows_.size(); }

 private:
  std::vector<Column> columns_;
  TableStyle style_;
  std::vector<std::vector<std::string>> rows_;
};

// Characters as a terminal shows them (UTF-8 code points), as fmt pads.
size_t DisplayWidth(std::string_view s);
// Pads `s` to `width` (never cuts).
std::string Pad(std::string_view s, size_t width, Align align = Align::kLeft);
// Cuts `s` to `width` characters, the last one "~" when it was longer.
std::string Cut(std::string_view s, size_t width);

}  // namespace fabcheck::report
