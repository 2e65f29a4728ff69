#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fabcheck::report::svg {

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in HTML text; show them as a space.
        out += static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' ? ' ' : c;
    }
  }
  return out;
}

const char* StatusColour(std::string_view s) {
  if (s == "pass") return kPass;
  if (s == "warn") return kWarn;
  if (s == "fail") return kFail;
  if (s == "manual") return kManual;
  if (s == "unknown") return kUnknown;
  if (s == "dropped") return "#e8eaed";
  return kNotRun;
}

std::string RatioColour(double ratio) {
  if (std::isnan(ratio)) return "#e0e0e0";
  double t = std::clamp((ratio - 0.3) / 0.6, 0.0, 1.0);  // 0 red .. 1 green
  // red (198,40,40) -> amber (239,143,0) -> green (46,125,50)
  auto mix = [](double a, double b, double u) { return static_cast<int>(a + (b - a) * u + 0.5); };
  int r, g, b;
  if (t < 0.5) {
    double u = t / 0.5;
    r = mix(198, 239, u), g = mix(40, 143, u), b = mix(40, 0, u);
  } else {
    double u = (t - 0.5) / 0.5;
    r = mix(239, 46, u), g = mix(143, 125, u), b = mix(0, 50, u);
  }
  return fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
}

Canvas::Canvas(int width, int height, std::string_view title) : width_(width), height_(height), title_(title) {}

void Canvas::Rect(double x, double y, double w, double h, std::string_view fill, std::string_view title,
                  std::string_view extra) {
  body_ += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"{}{}", x, y, w, h,
                       fill, extra.empty() ? "" : " ", extra);
  if (title.empty()) {
    body_ += "/>";
  } else {
    body_ += "><title>" + Escape(title) + "</title></rect>";
  }
}

void Canvas::Line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                  std::string_view extra) {
  body_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{:g}\"{}{}/>",
                       x1, y1, x2, y2, stroke, width, extra.empty() ? "" : " ", extra);
}

void Canvas::Text(double x, double y, std::string_view text, std::string_view extra) {
  body_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>", x, y, extra.empty() ? "" : " ", extra,
                       Escape(text));
}

void Canvas::Polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width,
                      std::string_view extra) {
  if (points.empty()) return;
  std::string pts;
  for (const auto& [x, y] : points) pts += fmt::format("{:.1f},{:.1f} ", x, y);
  pts.pop_back();
  body_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{:g}\"{}{}/>", pts, stroke,
                       width, extra.empty() ? "" : " ", extra);
}

void Canvas::Polygon(const std::vector<std::pair<double, double>>& points, std::string_view fill,
                     std::string_view extra) {
  if (points.empty()) return;
  std::string pts;
  for (const auto& [x, y] : points) pts += fmt::format("{:.1f},{:.1f} ", x, y);
  pts.pop_back();
  body_ += fmt::format("<polygon points=\"{}\" fill=\"{}\"{}{}/>", pts, fill, extra.empty() ? "" : " ", extra);
}

void Canvas::Circle(double x, double y, double r, std::string_view fill, std::string_view title) {
  body_ += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:g}\" fill=\"{}\"", x, y, r, fill);
  body_ += title.empty() ? std::string("/>") : "><title>" + Escape(title) + "</title></circle>";
}

void Canvas::Raw(std::string_view markup) { body_ += markup; }

std::string Canvas::Finish() const {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                     "role=\"img\" aria-label=\"{2}\" class=\"plot\"><title>{2}</title>{3}</svg>",
                     width_, height_, Escape(title_), body_);
}

double Scale::operator()(double v) const {
  double a = d0, b = d1, x = v;
  if (log2) {
    a = std::log2(std::max(a, 1e-12));
    b = std::log2(std::max(b, 1e-12));
    x = std::log2(std::max(x, 1e-12));
  }
  if (b == a) return (p0 + p1) / 2;
  return p0 + (x - a) / (b - a) * (p1 - p0);
}

std::string SizeLabel(double bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:g}{}", std::round(bytes * 10) / 10, units[u]);
}

namespace {

// 1, 2, 5 x 10^k steps giving about `n` ticks over [a, b].
std::vector<double> NiceTicks(double a, double b, int n) {
  std::vector<double> out;
  if (!(b > a)) return {a};
  double raw = (b - a) / n;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push_back(v);
  return out;
}

}  // namespace

void Axes(Canvas& c, const Scale& x, const Scale& y, std::string_view x_label, std::string_view y_label, bool x_sizes) {
  const char* grid = "#e3e6ea";
  const char* ink = "#444";
  double left = std::min(x.p0, x.p1), right = std::max(x.p0, x.p1);
  double top = std::min(y.p0, y.p1), bottom = std::max(y.p0, y.p1);
  for (double v : NiceTicks(y.d0, y.d1, 5)) {
    double py = y(v);
    c.Line(left, py, right, py, grid);
    c.Text(left - 6, py + 4, fmt::format("{:g}", v), "text-anchor=\"end\" class=\"tick\"");
  }
  if (x.log2) {
    double lo = std::ceil(std::log2(std::max(x.d0, 1.0))), hi = std::floor(std::log2(std::max(x.d1, 1.0)));
    int step = std::max(1, static_cast<int>((hi - lo) / 8 + 0.999));
    for (double e = lo; e <= hi; e += step) {
      double v = std::pow(2, e);
      double px = x(v);
      c.Line(px, top, px, bottom, grid);
      c.Text(px, bottom + 16, x_sizes ? SizeLabel(v) : fmt::format("{:g}", v), "text-anchor=\"middle\" class=\"tick\"");
    }
  } else {
    for (double v : NiceTicks(x.d0, x.d1, 6)) {
      double px = x(v);
      c.Line(px, top, px, bottom, grid);
      c.Text(px, bottom + 16, fmt::format("{:g}", v), "text-anchor=\"middle\" class=\"tick\"");
    }
  }
  c.Line(left, bottom, right, bottom, ink);
  c.Line(left, top, left, bottom, ink);
  c.Text((left + right) / 2, bottom + 34, x_label, "text-anchor=\"middle\" class=\"axis\"");
  c.Text(14, (top + bottom) / 2, y_label,
         fmt::format("text-anchor=\"middle\" class=\"axis\" transform=\"rotate(-90 14 {:.1f})\"", (top + bottom) / 2));
}

}  // namespace fabcheck::report::svg
