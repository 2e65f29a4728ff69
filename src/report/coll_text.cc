#include "report/coll_text.h"

#include <fmt/format.h>

#include <cstdio>

#include "base/strings.h"
#include "base/units.h"
#include "dl/cuda.h"
#include "report/nccl_log_text.h"
#include "report/table.h"

namespace fabcheck::report {
namespace {

using model::Severity;

// nccl-tests' columns: size, count, type, redop, root, then the out-of-place
// and in-place halves of time, algbw, busbw, #wrong.
std::vector<Column> CollColumns(size_t first, bool halves) {
  std::vector<Column> columns = {{"", first, Align::kRight}, {"", 12, Align::kRight}, {"", 8, Align::kRight},
                                 {"", 6, Align::kRight},     {"", 6, Align::kRight}};
  for (int half = 0; halves && half < 2; ++half) {
    for (size_t width : {7, 6, 6, 6}) columns.push_back({"", width, Align::kRight});
  }
  return columns;
}

// The header lines start with "# " (two characters off the first column) and end in a blank.
const TextTable& HeaderTable() {
  static const TextTable kTable(CollColumns(10, true), {.indent = "# ", .separator = "  ", .line_end = " \n"});
  return kTable;
}

// The halves keep nccl-tests' own field formatting ("%7s  %6s  %6s  %6g", "N/A").
std::string Half(const model::CollHalf& h) {
  std::string wrong = h.wrong ? fmt::format("{:>6}", *h.wrong) : std::string("  N/A");
  return fmt::format("  {}  {}  {}  {}", Pad(FormatFloatField(h.time_us, 7), 7, Align::kRight),
                     Pad(FormatFloatField(h.algbw_gbps, 6), 6, Align::kRight),
                     Pad(FormatFloatField(h.busbw_gbps, 6), 6, Align::kRight), wrong);
}

std::string PcieName(double gts, int width) {
  int generation = PcieGeneration(gts);
  return generation > 0 ? fmt::format("PCIe Gen{} x{}", generation, width) : fmt::format("PCIe {} GT/s x{}", gts, width);
}

}  // namespace

std::string FormatFloatField(double value, int width) {
  char buffer[64];
  for (const char* format : {"%*.2f", "%*.1f", "%*.0f"}) {
    int n = std::snprintf(buffer, sizeof(buffer), format, width, value);
    if (n <= width) return buffer;
  }
  std::snprintf(buffer, sizeof(buffer), width >= 7 ? "%*.1e" : "%*.0e", width, value);
  return std::string(buffer).substr(0, static_cast<size_t>(width));
}

std::string FormatCollTableHeader() {
  std::string out = "#\n";
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n",
                     "", "", "", "", "");
  const TextTable& t = HeaderTable();
  out += t.Row({"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong"});
  out += t.Row({"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""});
  return out;
}

std::string FormatCollRow(const model::CollRow& row) {
  static const TextTable kRow(CollColumns(12, false), {.indent = "", .separator = "  ", .line_end = ""});
  return kRow.Row({std::to_string(row.size_bytes), std::to_string(row.count), row.type, row.redop,
                   std::to_string(row.root)}) +
         Half(row.out_of_place) + Half(row.in_place) + "\n";
}

std::string FormatCollFooter(int64_t wrong, double avg_busbw_gbps) {
  return fmt::format("# {:<20} : {} {}\n# {:<20} : {:g} \n#\n", "Out of bounds values", wrong, wrong ? "FAILED" : "OK",
                     "Avg bus bandwidth", avg_busbw_gbps);
}

std::string FormatCollReport(const model::CollReport& report) {
  std::string out;
  out += fmt::format("# fabcheck coll {}: {} ranks, {}, NCCL {} ({}), CUDA runtime {}\n", report.fabcheck_version,
                     report.nranks, report.mode, report.nccl_version, report.nccl_library, report.cuda_runtime_version);
  out += fmt::format("# iters {}  warmup {}  check {}  dtype {}  redop {}\n", report.args.at("iters"),
                     report.args.at("warmup"), report.args.at("check"), report.args.at("dtype"), report.args.at("redop"));
  for (const auto& r : report.ranks) {
    out += fmt::format("#  Rank {:2} Host {} Device {:2} [{}] {}\n", r.rank, r.host, r.cuda_device, r.pci_bus_id, r.name);
  }
  for (const auto& op : report.results) {
    out += fmt::format("#\n# {}\n", op.op);
    out += FormatCollTableHeader();
    for (const auto& row : op.rows) out += FormatCollRow(row);
    out += FormatCollFooter(op.wrong, op.avg_busbw_gbps);
  }
  out += fmt::format("# Avg bus bandwidth (all ops) : {:g}\n", report.average_bus_bandwidth_gbps);
  if (report.expected.busbw_gbps > 0) {
    out += fmt::format("# Expected busbw: about {:.1f} GB/s ({})\n", report.expected.busbw_gbps, report.expected.basis);
  }
  if (report.nccl_log) {
    out += "#\n";
    out += FormatNcclLogSummary(*report.nccl_log);
    out += FormatNcclFindings(report.nccl_log->findings);
  } else {
    out += "#\n# NCCL log: none found in " + report.nccl_log_file + "\n";
  }
  out += "findings:\n";
  for (const auto& f : report.findings) {
    if (StartsWith(f.id, "nccl.")) continue;  // already listed under the log's verdicts
    out += FormatFindingLines(f);
  }
  return out;
}

std::string FormatGpuCopyReport(const model::GpuCopyReport& report) {
  std::string out = fmt::format("CUDA runtime {}, driver supports CUDA {}\n", report.cuda_runtime_version,
                                dl::CudaVersionString(report.cuda_driver_version));
  for (const auto& g : report.gpus) {
    out += fmt::format("GPU {}: {} [{}] NUMA {} link {} (max {})\n", g.index, g.name, g.pci_bus_id, g.numa_node,
                       g.pcie_gts > 0 ? PcieName(g.pcie_gts, g.pcie_width) : "unknown",
                       g.pcie_max_gts > 0 ? PcieName(g.pcie_max_gts, g.pcie_max_width) : "unknown");
  }
  TextTable table({{"copy", 6},
                   {"gpu", 4, Align::kRight},
                   {"peer", 5, Align::kRight},
                   {"numa", 6, Align::kRight},
                   {"bytes", 12, Align::kRight},
                   {"GB/s", 10, Align::kRight},
                   {"link GB/s", 10, Align::kRight},
                   {"ratio", 6, Align::kRight},
                   {"link", 0, Align::kLeft, 0, "  "}});
  out += table.Header();
  for (const auto& m : report.measurements) {
    out += table.Row({m.kind, std::to_string(m.gpu), m.peer_gpu >= 0 ? std::to_string(m.peer_gpu) : "-",
                      m.kind == "h2d" || m.kind == "d2h" ? fmt::format("{}{}", m.numa_node, m.numa_local ? "" : "*") : "-",
                      std::to_string(m.bytes), fmt::format("{:.2f}", m.gbps),
                      m.expected_gbps > 0 ? fmt::format("{:.2f}", m.expected_gbps) : "-",
                      m.expected_gbps > 0 ? fmt::format("{:.2f}", m.gbps / m.expected_gbps) : "-", m.link});
  }
  out += "findings:\n";
  for (const auto& f : report.findings) {
    out += fmt::format("  [{}] {}: {}: {}\n", model::SeverityName(f.severity), f.id, f.object, f.message);
    if (!f.remedy.empty() && f.severity != Severity::kPass) out += fmt::format("      fix: {}\n", f.remedy);
  }
  return out;
}

}  // namespace fabcheck::report
