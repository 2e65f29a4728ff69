#include "report/perf_table.h"

#include <fmt/format.h>

#include "report/table.h"

namespace fabcheck::report {

namespace {

constexpr const char* kRule =
    "---------------------------------------------------------------------------------------\n";

std::string Side(const model::PerfEndpoint& e) {
  std::string dev = e.device.empty() ? "?" : e.device;
  if (e.port > 0) dev += fmt::format(" port {}", e.port);
  if (e.gid_index) dev += fmt::format(" GID {} ({}{}{})", *e.gid_index, e.gid_type, e.gid.empty() ? "" : " ", e.gid);
  if (e.mtu > 0) dev += fmt::format(" MTU {}", e.mtu);
  std::string numa = e.numa_node ? fmt::format("node {}", *e.numa_node) : std::string("not bound");
  return fmt::format("{} | mem {} ({}{}) | NUMA {} | CPU {:.0f}%", dev, e.memory.empty() ? "host" : e.memory,
                     e.registration.empty() ? "host" : e.registration, e.gpudirect ? ", GPUDirect" : "", numa,
                     e.cpu.percent);
}

std::string Title(const model::PerfSettings& s) {
  std::string op = s.transport == "tcp" ? "Stream" : std::string(model::PerfOpName(s.op));
  if (!op.empty()) op[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(op[0])));
  return fmt::format("{} {}{} {} Test", s.transport == "tcp" ? "TCP" : "RDMA", s.bidir ? "Bidirectional " : "", op,
                     s.test == model::PerfTest::kBw ? "BW" : "Latency");
}

std::string Fixed2(double v) { return fmt::format("{:.2f}", v); }

void BwRows(std::string& out, const model::PerfResult& r, const PerfTableOptions& o) {
  const char* unit = o.mibps ? "MiB/sec" : "Gb/sec";
  auto bw = [&](const model::BwFigures& f, bool peak) {
    double gbps = peak ? f.peak_gbps : f.avg_gbps;
    return o.mibps ? gbps * 1e9 / 8 / (1024.0 * 1024.0) : gbps;
  };
  std::vector<Column> columns = {{"#bytes", 10},
                                 {"#iterations", 14},
                                 {fmt::format("BW peak[{}]", unit), 18},
                                 {fmt::format("BW average[{}]", unit), 21},
                                 {"MsgRate[Mpps]", 15}};
  if (r.settings.bidir) {
    columns.push_back({fmt::format("c->s avg[{}]", unit), 18});
    columns.push_back({fmt::format("s->c avg[{}]", unit), 18});
  }
  TextTable table(columns, {.indent = " "});
  out += table.Header();
  for (const auto& row : r.results) {
    const std::string bytes = std::to_string(row.bytes);
    const std::string iters = std::to_string(row.iterations);
    if (!row.bw) {
      out += table.Row({bytes, iters, "FAILED: " + row.error});
      continue;
    }
    std::vector<std::string> cells = {bytes, iters, Fixed2(bw(*row.bw, true)), Fixed2(bw(*row.bw, false)),
                                      fmt::format("{:.6f}", row.bw->mpps)};
    // A bidirectional row without both directions ends after the message rate.
    if (row.bw_tx && row.bw_rx) {
      cells.push_back(Fixed2(bw(*row.bw_tx, false)));
      cells.push_back(Fixed2(bw(*row.bw_rx, false)));
    }
    out += TextTable(std::vector<Column>(columns.begin(), columns.begin() + static_cast<long>(cells.size())),
                     {.indent = " "})
               .Row(cells);
    if (!row.error.empty()) out += table.Row({"", "FAILED: " + row.error});
  }
}

void LatRows(std::string& out, const model::PerfResult& r) {
  TextTable table({{"#bytes", 7},
                   {"#iterations", 11},
                   {"t_min[usec]", 14},
                   {"t_max[usec]", 14},
                   {"t_typical[usec]", 16},
                   {"t_avg[usec]", 14},
                   {"t_stdev[usec]", 15},
                   {"99% percentile[usec]", 22},
                   {"99.9% percentile[usec]", 24},
                   {"90% percentile[usec]", 0}},
                  {.indent = " "});
  out += table.Header();
  for (const auto& row : r.results) {
    const std::string bytes = std::to_string(row.bytes);
    const std::string iters = std::to_string(row.iterations);
    if (!row.lat) {
      out += table.Row({bytes, iters, "FAILED: " + (row.error.empty() ? std::string("no samples") : row.error)});
      continue;
    }
    const auto& l = *row.lat;
    out += table.Row({bytes, iters, Fixed2(l.min_us), Fixed2(l.max_us), Fixed2(l.median_us), Fixed2(l.avg_us),
                      Fixed2(l.stdev_us), Fixed2(l.p99_us), Fixed2(l.p999_us), Fixed2(l.p90_us)});
    if (!row.error.empty()) out += table.Row({"", "FAILED: " + row.error});
  }
}

}  // namespace

std::string FormatPerfTable(const model::PerfResult& r, const PerfTableOptions& o) {
  const model::PerfSettings& s = r.settings;
  std::string out = kRule;
  out += fmt::format("                    {}  (fabcheck {})\n", Title(s), r.client.fabcheck_version);
  out += fmt::format(" Server          : {} (fabcheck {}, protocol v{})\n", r.server, r.server_side.fabcheck_version,
                     r.protocol_version);
  out += fmt::format(" Transport       : {}   {} : {}\n", s.transport, s.transport == "tcp" ? "Streams" : "QPs    ",
                     s.streams);
  if (s.transport != "tcp") out += fmt::format(" TX depth        : {}   Inline : {}\n", s.tx_depth, s.inline_size);
  out += fmt::format(" Iterations      : {}\n", s.iters != 0 ? fmt::format("{} (+{} warmup)", s.iters, s.warmup)
                                                           : fmt::format("{:.3g} s per size", s.duration_s));
  out += fmt::format(" Validate        : {}\n", s.validate ? "on" : "off");
  out += " local  (client): " + Side(r.client) + "\n";
  out += " remote (server): " + Side(r.server_side) + "\n";
  for (const auto& n : r.client.notes) out += " note (client)   : " + n + "\n";
  for (const auto& n : r.server_side.notes) out += " note (server)   : " + n + "\n";
  out += kRule;
  if (s.test == model::PerfTest::kBw) {
    BwRows(out, r, o);
  } else {
    LatRows(out, r);
  }
  out += kRule;
  if (!r.error.empty()) out += " ERROR: " + r.error + "\n";
  return out;
}

}  // namespace fabcheck::report
