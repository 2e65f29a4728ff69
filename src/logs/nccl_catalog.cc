#include "logs/nccl_catalog.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>

#include "base/strings.h"
#include "logs/nccl_catalog_data.h"

namespace fabcheck::logs {
namespace {

// Length of the printf conversion at s[i] == '%' ("%d", "%ld", "%.*s", "%-8s", "%%"); 0 when not one.
size_t ConversionLength(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size() && std::string_view("-+ #0").find(s[j]) != std::string_view::npos) ++j;
  while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '*' || s[j] == '.')) ++j;
  while (j < s.size() && std::string_view("hlzjtL").find(s[j]) != std::string_view::npos) ++j;
  if (j < s.size() && std::string_view("diouxXeEfgGcspnm%").find(s[j]) != std::string_view::npos) return j + 1 - i;
  return 0;
}

std::vector<std::string> SplitTsv(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    out.emplace_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return out;
}

}  // namespace

NcclMessageCatalog::NcclMessageCatalog() {
  nlohmann::json j = nlohmann::json::parse(kNcclMessageFamiliesJson, nullptr, false);
  if (j.is_object()) {
    for (const auto& f : j.value("families", nlohmann::json::array())) {
      NcclMessageFamily fam;
      fam.id = f.value("id", "");
      auto subs = f.value("subsystems", std::vector<std::string>{});
      fam.subsystem = subs.empty() ? "" : subs.front();
      fam.title = f.value("title", "");
      fam.causes = f.value("causes", std::vector<std::string>{});
      fam.fix = f.value("fix", "");
      fam.next = f.value("next", "");
      fam.specific = f.value("specific", true);
      // "refine": one {family, source} or a list of them.
      nlohmann::json refine = f.value("refine", nlohmann::json());
      if (refine.is_object()) refine = nlohmann::json::array({refine});
      for (const auto& r : refine.is_array() ? refine : nlohmann::json::array()) {
        if (!r.is_object()) continue;
        refines_.push_back({r.value("family", ""), fam.id, std::regex(r.value("source", "$^"))});
      }
      families_.push_back(std::move(fam));
    }
  }
  std::string_view tsv = kNcclMessageFormatsTsv;
  while (!tsv.empty()) {
    size_t nl = tsv.find('\n');
    std::string_view line = tsv.substr(0, nl);
    tsv = nl == std::string_view::npos ? std::string_view() : tsv.substr(nl + 1);
    if (StartsWith(line, "# extracted")) extracted_from_ = std::string(line.substr(2));
    if (line.empty() || line[0] == '#') continue;
    auto cols = SplitTsv(line);
    if (cols.size() < 7) continue;
    NcclMessageFormat f{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], static_cast<int>(ParseInt(cols[6]).value_or(0))};
    Matcher m;
    m.anchored = !f.format.empty() && !(f.format[0] == '%' && ConversionLength(f.format, 0) > 0 &&
                                        f.format.compare(0, 2, "%%") != 0);
    std::string piece;
    for (size_t i = 0; i < f.format.size();) {
      size_t n = f.format[i] == '%' ? ConversionLength(f.format, i) : 0;
      if (n > 0 && f.format.compare(i, 2, "%%") != 0) {
        if (!piece.empty()) m.pieces.push_back(std::move(piece));
        piece.clear();
        i += n;
        continue;
      }
      piece += f.format[i];
      i += n > 0 ? n : 1;
    }
    if (!piece.empty()) m.pieces.push_back(std::move(piece));
    // Trailing spaces of a format are lost when lines are pasted.
    while (!m.pieces.empty() && !m.pieces.back().empty() && m.pieces.back().back() == ' ') m.pieces.back().pop_back();
    if (!m.pieces.empty() && m.pieces.back().empty()) m.pieces.pop_back();
    for (const auto& p : m.pieces) m.literal += p.size();
    formats_.push_back(std::move(f));
    matchers_.push_back(std::move(m));
  }
  for (const auto& f : formats_) family_of_.push_back(Family(f.family));
}

const NcclMessageCatalog& NcclMessageCatalog::Get() {
  static const NcclMessageCatalog catalog;
  return catalog;
}

const NcclMessageFamily* NcclMessageCatalog::Family(std::string_view id) const {
  for (const auto& f : families_) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

NcclMessageMatch NcclMessageCatalog::Classify(std::string_view message, std::string_view source) const {
  message = Trim(message);
  NcclMessageMatch best;
  // The most literal text wins; among equals, a format with a family, then
  // one printed by the same source file.
  auto score = [&](size_t i) {
    const NcclMessageFormat& f = formats_[i];
    size_t s = matchers_[i].literal * 4;
    if (family_of_[i] != nullptr) s += 2;
    if (!source.empty() && StartsWith(source, f.file + ":")) s += 1;
    return s;
  };
  size_t best_score = 0;
  for (size_t i = 0; i < matchers_.size(); ++i) {
    const Matcher& m = matchers_[i];
    // A format of conversions only ("%s") says nothing about a message.
    if (m.literal < 4 || m.literal * 4 + 3 <= best_score) continue;
    size_t s = score(i);
    if (s <= best_score) continue;
    size_t at = 0;
    bool ok = true;
    for (size_t k = 0; k < m.pieces.size(); ++k) {
      size_t found = message.find(m.pieces[k], at);
      if (found == std::string_view::npos || (k == 0 && m.anchored && found != 0)) {
        ok = false;
        break;
      }
      at = found + m.pieces[k].size();
    }
    if (!ok) continue;
    best_score = s;
    best.format = &formats_[i];
  }
  if (best.format == nullptr) return best;
  best.family = family_of_[static_cast<size_t>(best.format - formats_.data())];
  if (!source.empty() && best.family != nullptr) {
    for (const auto& r : refines_) {
      if (r.from != best.family->id) continue;
      if (std::regex_search(source.begin(), source.end(), r.source_pattern)) {
        if (const NcclMessageFamily* to = Family(r.to)) best.family = to;
        break;
      }
    }
  }
  return best;
}

std::vector<NcclMessageCatalog::Coverage> NcclMessageCatalog::CoverageAtNewest() const {
  std::vector<Coverage> out;
  for (const auto& f : formats_) {
    if (f.sites_at_newest <= 0) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const Coverage& c) { return c.subsystem == f.subsystem; });
    if (it == out.end()) it = out.insert(out.end(), Coverage{f.subsystem});
    it->sites += f.sites_at_newest;
    NcclMessageMatch m = Classify(SampleLine(f.format), f.file + ":1");
    if (m.family == nullptr) continue;
    it->recognised += f.sites_at_newest;
    if (m.family->specific) it->specific += f.sites_at_newest;
  }
  std::sort(out.begin(), out.end(), [](const Coverage& a, const Coverage& b) { return a.subsystem < b.subsystem; });
  return out;
}

std::string NcclMessageCatalog::SampleLine(std::string_view format) {
  std::string out;
  int n = 0;
  for (size_t i = 0; i < format.size();) {
    size_t len = format[i] == '%' ? ConversionLength(format, i) : 0;
    if (len == 0) {
      out += format[i++];
      continue;
    }
    char conv = format[i + len - 1];
    ++n;
    switch (conv) {
      case '%': out += '%'; break;
      case 's': out += n % 2 ? "mlx5_0" : "10.0.0.2<43512>"; break;
      case 'p': out += "0x7f3a2c000000"; break;
      case 'x': case 'X': out += "1f"; break;
      case 'f': case 'g': case 'e': out += "1.5"; break;
      case 'c': out += 'x'; break;
      case 'm': out += "No such device"; break;
      default: out += std::to_string(n * 3); break;
    }
    i += len;
  }
  return out;
}

}  // namespace fabcheck::logs
