// A small SVG writer for the report's plots: shapes, text, axes with ticks
// (linear, or log2 for message sizes), and the status colours. Output is a
// string of inline <svg> with explicit width, height and viewBox, so the
// page needs nothing from the network and prints at the size it shows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::report::svg {

// Escapes text for HTML/SVG content and attribute values.
std::string Escape(std::string_view text);

// Status colours shared by the page and the plots (print-safe, colour-blind
// distinguishable with the labels they come with).
inline constexpr const char* kPass = "#2e7d32";
inline constexpr const char* kWarn = "#ef8f00";
inline constexpr const char* kFail = "#c62828";
inline constexpr const char* kUnknown = "#7b8794";
inline constexpr const char* kManual = "#3f6fb5";
inline constexpr const char* kNotRun = "#c9ced6";
const char* StatusColour(std::string_view status);  // "pass", "warn", "fail", "unknown", "manual", "not_run", "dropped"

// Green (ratio >= 0.9) through amber to red (ratio <= 0.3); grey for NaN.
std::string RatioColour(double ratio);

class Canvas {
 public:
  Canvas(int width, int height, std::string_view title);
  void Rect(double x, double y, double w, double h, std::string_view fill, std::string_view title = "",
            std::string_view extra = "");
  void Line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view extra = "");
  void Text(double x, double y, std::string_view text, std::string_view extra = "");
  void Polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width = 1.5,
                std::string_view extra = "");
  void Polygon(const std::vector<std::pair<double, double>>& points, std::string_view fill, std::string_view extra = "");
  void Circle(double x, double y, double r, std::string_view fill, std::string_view title = "");
  void Raw(std::string_view markup);
  std::string Finish() const;
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_, height_;
  std::string body_;
  std::string title_;
};

// Maps a data range to pixels; log2 for sizes.
struct Scale {
  double d0 = 0, d1 = 1;  // data
  double p0 = 0, p1 = 1;  // pixels
  bool log2 = false;
  double operator()(double v) const;
};

// Axes of a plot area with ticks and labels; `x_sizes` labels ticks as byte sizes (4K, 1M).
void Axes(Canvas& c, const Scale& x, const Scale& y, std::string_view x_label, std::string_view y_label, bool x_sizes);

// "64K", "1M", "8G": a power-of-two size as plots label it.
std::string SizeLabel(double bytes);

}  // namespace fabcheck::report::svg
