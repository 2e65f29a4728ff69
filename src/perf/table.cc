#include "perf/table.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace fabcheck::perf {

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

}  // namespace

std::string FormatPerfTable(const model::PerfResult& r, const TableOptions& o) {
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
  const char* unit = o.mibps ? "MiB/sec" : "Gb/sec";
  auto bw = [&](const model::BwFigures& f, bool peak) {
    double gbps = peak ? f.peak_gbps : f.avg_gbps;
    return o.mibps ? gbps * 1e9 / 8 / (1024.0 * 1024.0) : gbps;
  };
  if (s.test == model::PerfTest::kBw) {
    out += fmt::format(" {:<10} {:<14} {:<18} {:<21} {:<15}", "#bytes", "#iterations",
                       fmt::format("BW peak[{}]", unit), fmt::format("BW average[{}]", unit), "MsgRate[Mpps]");
    if (s.bidir) out += fmt::format(" {:<18} {:<18}", fmt::format("c->s avg[{}]", unit), fmt::format("s->c avg[{}]", unit));
    out += "\n";
    for (const auto& row : r.results) {
      if (!row.bw) {
        out += fmt::format(" {:<10} {:<14} FAILED: {}\n", row.bytes, row.iterations, row.error);
        continue;
      }
      out += fmt::format(" {:<10} {:<14} {:<18.2f} {:<21.2f} {:<15.6f}", row.bytes, row.iterations, bw(*row.bw, true),
                         bw(*row.bw, false), row.bw->mpps);
      if (row.bw_tx && row.bw_rx) out += fmt::format(" {:<18.2f} {:<18.2f}", bw(*row.bw_tx, false), bw(*row.bw_rx, false));
      out += "\n";
      if (!row.error.empty()) out += fmt::format(" {:<10} FAILED: {}\n", "", row.error);
    }
  } else {
    out += fmt::format(" {:<7} {:<11} {:<14} {:<14} {:<16} {:<14} {:<15} {:<22} {:<24} {}\n", "#bytes", "#iterations",
                       "t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]",
                       "99% percentile[usec]", "99.9% percentile[usec]", "90% percentile[usec]");
    for (const auto& row : r.results) {
      if (!row.lat) {
        out += fmt::format(" {:<7} {:<11} FAILED: {}\n", row.bytes, row.iterations,
                           row.error.empty() ? "no samples" : row.error);
        continue;
      }
      const auto& l = *row.lat;
      out += fmt::format(" {:<7} {:<11} {:<14.2f} {:<14.2f} {:<16.2f} {:<14.2f} {:<15.2f} {:<22.2f} {:<24.2f} {:.2f}\n",
                         row.bytes, row.iterations, l.min_us, l.max_us, l.median_us, l.avg_us, l.stdev_us, l.p99_us,
                         l.p999_us, l.p90_us);
      if (!row.error.empty()) out += fmt::format(" {:<7} FAILED: {}\n", "", row.error);
    }
  }
  out += kRule;
  if (!r.error.empty()) out += " ERROR: " + r.error + "\n";
  return out;
}

}  // namespace fabcheck::perf
