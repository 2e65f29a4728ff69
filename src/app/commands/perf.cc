// `fabcheck perf serve` and `fabcheck perf run`: the L3 point-to-point tests.
// Parsing and wiring only; the engine is perf/ (engine.h, server.h).
#include <fmt/format.h>

#include <csignal>
#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/malloc_arenas.h"
#include "base/strings.h"
#include "base/units.h"
#include "net/auth.h"
#include "perf/engine.h"
#include "perf/limits.h"
#include "perf/server.h"
#include "report/perf_table.h"
#include "sys/sysroot.h"

namespace {

using namespace fabcheck;

struct RunArgs {
  std::string host;
  int port = perf::kDefaultPort;
  std::string transport = "auto", test = "bw", op, size, sizes, duration, mem = "host", numa = "auto";
  std::string server_mem = "host", server_numa = "auto", gid_index = "auto", server_gid_index = "auto";
  std::string device, server_device, token_file;
  net::TlsFiles tls;
  uint64_t iters = 0, warmup = 16;
  int streams = 1, tx_depth = 128, cq_mod = 100, inline_size = 0, mtu = 0, ib_port = 0, server_ib_port = 0;
  int tclass = -1, sl = -1;
  bool bidir = false, validate = false, json = false, mibps = false, cm = false;
  double connect_timeout = 10, timeout = 30;
};

struct ServeArgs {
  std::string bind, token_file, max_mem = "1G", max_total_mem = "4G";
  net::TlsFiles tls;
  int port = perf::kDefaultPort, max_clients = 4, max_streams = 64;
  double max_duration = 600, timeout = 30;
  bool json = false;
};

std::atomic<perf::Server*> g_server{nullptr};
extern "C" void OnSignal(int) {
  if (perf::Server* s = g_server.load()) s->Stop();
}

int Usage(const std::string& message) {
  std::cerr << "fabcheck perf: " << message << "\n";
  return kExitUsage;
}

Result<std::optional<int>> ParseGidIndex(const std::string& text) {
  if (text == "auto") return std::optional<int>();
  auto v = ParseInt(text);
  if (!v || *v < 0 || *v > 65535) return InvalidArgumentError("--gid-index '" + text + "': use a number or auto");
  return std::optional<int>(static_cast<int>(*v));
}

int RunClientCommand(const RunArgs& a, const CLI::App& cmd) {
  perf::ClientOptions o;
  o.root = sys::SysRoot::Live();
  o.host = a.host;
  o.port = a.port;
  if (auto colon = a.host.rfind(':'); colon != std::string::npos && a.host.find(':') == colon) {
    auto port = ParseInt(a.host.substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) return Usage("bad port in '" + a.host + "'");
    o.host = a.host.substr(0, colon);
    o.port = static_cast<int>(*port);
  }
  perf::TestParams& p = o.params;
  auto transport = perf::ChooseTransport(a.transport, *o.root);
  if (!transport) return Usage("--transport '" + a.transport + "': use auto, verbs or tcp");
  p.transport = transport->kind;
  if (!transport->why_tcp.empty()) {
    std::cerr << "fabcheck perf run: --transport auto: " << transport->why_tcp << "; measuring TCP, not RDMA\n";
  }
  auto test = model::ParsePerfTest(a.test);
  if (!test) return Usage("--test '" + a.test + "': use bw or lat");
  p.test = *test;
  std::string op = a.op.empty() ? (p.transport == perf::TransportKind::kTcp ? "send" : "write") : a.op;
  auto parsed_op = model::ParsePerfOp(op);
  if (!parsed_op) return Usage("--op '" + op + "': use write, write_imm, read or send");
  p.op = *parsed_op;
  p.bidir = a.bidir;
  if (!a.size.empty() && !a.sizes.empty()) return Usage("give --size or --sizes, not both");
  if (!a.sizes.empty()) {
    auto list = ParseSizeList(a.sizes == "all" ? "2:8M" : a.sizes);
    if (!list.ok()) return Usage("--sizes: " + list.status().message());
    p.sizes = *list;
  } else {
    auto one = ParseSize(a.size.empty() ? (p.test == model::PerfTest::kBw ? "65536" : "2") : a.size);
    if (!one.ok()) return Usage("--size: " + one.status().message());
    p.sizes = {*one};
  }
  if (!a.duration.empty()) {
    if (cmd.count("--iters") > 0) return Usage("give --iters or --duration, not both");
    auto d = ParseDurationSeconds(a.duration);
    if (!d.ok()) return Usage("--duration: " + d.status().message());
    p.duration_s = *d;
  } else {
    p.iters = a.iters != 0 ? a.iters : (p.test == model::PerfTest::kBw ? 5000 : 1000);  // perftest's defaults
  }
  p.warmup = a.warmup;
  p.streams = a.streams;
  p.tx_depth = a.tx_depth;
  p.cq_moderation = a.cq_mod;
  p.inline_size = a.inline_size;
  p.mtu = a.mtu;
  if (a.tclass >= 0) p.tclass = a.tclass;
  if (a.sl >= 0) p.sl = a.sl;
  p.validate = a.validate;
  p.use_cm = a.cm;
  struct Side {
    perf::EndpointSpec* spec;
    const std::string &device, &gid, &mem, &numa;
    int ib_port;
  };
  for (const Side& s : {Side{&p.client, a.device, a.gid_index, a.mem, a.numa, a.ib_port},
                        Side{&p.server, a.server_device, a.server_gid_index, a.server_mem, a.server_numa,
                             a.server_ib_port}}) {
    s.spec->device = s.device;
    s.spec->port = s.ib_port;
    auto gid = ParseGidIndex(s.gid);
    if (!gid.ok()) return Usage(gid.status().message());
    s.spec->gid_index = *gid;
    auto mem = perf::MemorySpec::Parse(s.mem);
    if (!mem.ok()) return Usage(mem.status().message());
    s.spec->mem = *mem;
    auto numa = perf::NumaSpec::Parse(s.numa);
    if (!numa.ok()) return Usage(numa.status().message());
    s.spec->numa = *numa;
  }
  if (Status v = perf::ValidateTestParams(p); !v.ok()) return Usage(v.message());
  if (!a.token_file.empty()) {
    auto token = net::ReadTokenFile(a.token_file);
    if (!token.ok()) {
      std::cerr << "fabcheck perf run: " << token.status().message() << "\n";
      return kExitError;
    }
    o.token = *token;
  }
  if (a.tls.enabled()) {
    auto tls = net::TlsContext::ForClient(a.tls);
    if (!tls.ok()) return Usage(tls.status().message());
    o.tls = *tls;
    o.tls_server_name = o.host;  // the certificate must name the host dialled
  }
  o.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.connect_timeout * 1000));
  o.io_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 1000));

  auto result = perf::RunClient(o);
  if (!result.ok()) {
    std::cerr << "fabcheck perf run: " << result.status().message() << "\n";
    if (a.transport == "auto" && p.transport == perf::TransportKind::kVerbs) {
      std::cerr << "fabcheck perf run: --transport auto chose verbs (this node has an RDMA device); if the server "
                   "has none, --transport tcp measures TCP\n";
    }
    if (a.json) {
      std::cout << ToJsonText(nlohmann::json{{"schema", model::kPerfSchema},
                                             {"ok", false},
                                             {"error", result.status().message()},
                                             {"code", StatusCodeName(result.status().code())}},
                              2)
                << "\n";
    }
    return kExitError;
  }
  if (a.json) {
    std::cout << ToJsonText(nlohmann::json(*result), 2) << "\n";
  } else {
    std::cout << report::FormatPerfTable(*result, {a.mibps});
  }
  if (!result->error.empty()) std::cerr << "fabcheck perf run: " << result->error << "\n";
  return result->ok() ? kExitOk : kExitFailures;
}

int RunServeCommand(const ServeArgs& a) {
  base::LimitMallocArenas();  // every test runs on its own threads
  perf::ServeOptions o;
  o.root = sys::SysRoot::Live();
  o.bind = a.bind;
  o.port = a.port;
  o.limits.max_clients = a.max_clients;
  o.limits.max_streams = a.max_streams;
  o.limits.max_duration_s = a.max_duration;
  auto per_client = ParseSize(a.max_mem);
  auto total = ParseSize(a.max_total_mem);
  if (!per_client.ok()) return Usage("--max-mem: " + per_client.status().message());
  if (!total.ok()) return Usage("--max-total-mem: " + total.status().message());
  o.limits.max_mem_per_client = *per_client;
  o.limits.max_mem_total = *total;
  o.io_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 1000));
  if (!a.token_file.empty()) {
    auto token = net::ReadTokenFile(a.token_file);
    if (!token.ok()) {
      std::cerr << "fabcheck perf serve: " << token.status().message() << "\n";
      return kExitError;
    }
    o.token = *token;
  }
  if (a.tls.enabled()) {
    auto tls = net::TlsContext::ForServer(a.tls);
    if (!tls.ok()) return Usage(tls.status().message());
    o.tls = *tls;
  }
  auto server = perf::Server::Start(o);
  if (!server.ok()) {
    std::cerr << "fabcheck perf serve: " << server.status().message() << "\n";
    return kExitError;
  }
  g_server = server->get();
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);
  // One line on stdout when ready, so scripts can wait for it (and learn the port with --port 0).
  if (a.json) {
    std::cout << ToJsonText({{"schema", "fabcheck.perf-serve/v1"},
                             {"listening", fmt::format("{}:{}", a.bind.empty() ? "*" : a.bind, (*server)->port())},
                             {"port", (*server)->port()}})
              << std::endl;
  } else {
    std::cout << "fabcheck perf serve: listening on " << (a.bind.empty() ? "*" : a.bind) << ":" << (*server)->port()
              << std::endl;
  }
  (*server)->Run();
  g_server = nullptr;
  return kExitOk;
}

app::RunFn Setup(CLI::App& root) {
  auto* perf = root.add_subcommand("perf", "L3: RDMA (verbs) and TCP bandwidth and latency between two nodes");
  perf->require_subcommand(1);
  auto ra = std::make_shared<RunArgs>();
  auto sa = std::make_shared<ServeArgs>();

  auto* serve = perf->add_subcommand("serve", "Serve perf tests to clients (run once per node; no test options here)");
  app::Tunables st(serve, "perf serve");
  st.Text("--bind", sa->bind, "Address to listen on (default: all)", "address");
  st.Port("--port", sa->port, "Control port", /*zero_means_any=*/true);
  st.Path("--token-file", sa->token_file, "Require clients to prove this shared token (HMAC; mode 600)");
  st.Tls(sa->tls, fabcheck::app::Tunables::TlsRole::kServer);
  st.Integer("--max-clients", sa->max_clients, "Tests running at once", 1, 4096);
  st.Text("--max-mem", sa->max_mem, "Buffer memory one test may use here", "size (K/M/G)");
  st.Text("--max-total-mem", sa->max_total_mem, "Buffer memory of all tests together", "size (K/M/G)");
  st.Seconds("--max-duration", sa->max_duration, "Seconds one test may run", /*zero_allowed=*/true);
  st.Integer("--max-streams", sa->max_streams, "Streams/QPs one test may open", 1, fabcheck::perf::kMaxStreams);
  st.Seconds("--timeout", sa->timeout, "Seconds any wait on a client may block");
  st.Flag("--json", sa->json,
          "The ready line as JSON (schema fabcheck.perf-serve/v1, with the port); errors as fabcheck.error/v1");
  serve->footer(
      "Examples:\n"
      "  fabcheck perf serve\n"
      "  fabcheck perf serve --bind 10.0.0.2 --token-file /etc/fabcheck/token --max-clients 8\n"
      "Stop with Ctrl-C (SIGINT) or SIGTERM. Clients negotiate everything; nothing is repeated here.");

  auto* run = perf->add_subcommand("run", "Run a bandwidth or latency test against a `fabcheck perf serve`");
  run->add_option("host", ra->host, "Server host or address (HOST or HOST:PORT)")->required();
  app::Tunables rt(run, "perf run");
  rt.Port("--port", ra->port, "Server's control port", /*zero_means_any=*/false);
  rt.Text("--transport", ra->transport,
          "auto (verbs where this node has an RDMA device, else tcp, said on stderr), verbs (RDMA) or tcp",
          "auto|verbs|tcp");
  rt.Text("--test", ra->test, "bw (bandwidth) or lat (ping-pong latency)", "bw|lat");
  rt.Text("--op", ra->op, "verbs: write, write_imm, read, send (default write); tcp: send", "operation");
  rt.Flag("--bidir", ra->bidir, "Both directions at once (bw); reports each and the sum");
  rt.Text("--size", ra->size, "Message size (default 65536 for bw, 2 for lat; K/M/G suffixes)", "size");
  rt.Text("--sizes", ra->sizes, "Sizes: 2:8M (powers of two), a list 1K,4K,1M, or all (2:8M)", "size list");
  rt.Count("--iters", ra->iters, "Measured iterations per stream/QP (default 5000 bw, 1000 lat)", 1, 1'000'000'000);
  rt.Text("--duration", ra->duration, "Measure for this long per size instead (10s, 500ms)", "duration");
  rt.Count("--warmup", ra->warmup, "Unmeasured iterations first", 0, 1'000'000'000);
  rt.Integer("--streams,--qps", ra->streams, "TCP connections / verbs QPs", 1, fabcheck::perf::kMaxStreams);
  rt.Integer("--tx-depth", ra->tx_depth, "verbs: outstanding sends per QP", 1, 65536);
  rt.Integer("--cq-mod", ra->cq_mod, "verbs: signal one send in N", 1, 65536);
  rt.Integer("--inline", ra->inline_size, "verbs: inline messages up to N bytes", 0, 65536);
  rt.Integer("--mtu", ra->mtu, "verbs: path MTU 256..4096 (default 0: the port's)", 0, 4096);
  rt.Integer("--tclass", ra->tclass, "Traffic class (verbs RoCE) / IP TOS (tcp); -1 = not set", -1, 255);
  rt.Integer("--sl", ra->sl, "verbs: InfiniBand service level; -1 = not set", -1, 15);
  rt.Text("--device", ra->device, "verbs: local RDMA device (mlx5_0)", "device");
  rt.Integer("--ib-port", ra->ib_port, "verbs: local device port (default 0: first active)", 0, 255);
  rt.Text("--gid-index", ra->gid_index, "verbs: local GID index, or auto (RoCE v2, IPv4)", "index|auto");
  rt.Text("--mem", ra->mem, "Local buffers: host or cuda:N", "host|cuda:N");
  rt.Text("--numa", ra->numa, "Local binding: auto (NIC's node), N, or off", "auto|N|off");
  rt.Text("--server-device", ra->server_device, "verbs: the server's RDMA device (default: its choice)", "device");
  rt.Integer("--server-ib-port", ra->server_ib_port, "verbs: the server's device port", 0, 255);
  rt.Text("--server-gid-index", ra->server_gid_index, "verbs: the server's GID index or auto", "index|auto");
  rt.Text("--server-mem", ra->server_mem, "Server buffers: host or cuda:N", "host|cuda:N");
  rt.Text("--server-numa", ra->server_numa, "Server binding: auto, N, or off", "auto|N|off");
  rt.Flag("--cm", ra->cm, "verbs: connect through rdma_cm");
  rt.Flag("--validate", ra->validate, "Fill buffers with a pattern; receivers verify every message");
  rt.Path("--token-file", ra->token_file, "The server's shared token (when it requires one)");
  rt.Tls(ra->tls, fabcheck::app::Tunables::TlsRole::kClient);
  rt.Seconds("--connect-timeout", ra->connect_timeout, "Seconds to connect");
  rt.Seconds("--timeout", ra->timeout, "Seconds any wait may block before the test fails");
  rt.Flag("--mibps", ra->mibps, "Bandwidth in MiB/s in the table (JSON has both)");
  rt.Flag("--json", ra->json, "JSON (schema fabcheck.perf/v1) instead of the table");
  run->footer(
      "Examples:\n"
      "  fabcheck perf run node2 --transport tcp                      # 64 KiB stream bandwidth\n"
      "  fabcheck perf run node2 --transport tcp --test lat --size 64 # ping-pong latency\n"
      "  fabcheck perf run node2 --transport tcp --sizes 2:8M --streams 4 --bidir --validate\n"
      "  fabcheck perf run node2 --transport verbs --device mlx5_0 --op write --sizes all --json\n"
      "  fabcheck perf run node2 --transport verbs --mem cuda:0 --server-mem cuda:0\n"
      "Figures follow perftest: Gb/s = 1e9 bit/s, latency = half round trip for write/send.\n"
      "Exit codes: 0 ok, 2 the test failed (validation, peer error mid-test), 3 could not run, 64 usage.");

  return [perf, serve, run, ra, sa]() {
    if (serve->parsed()) return RunServeCommand(*sa);
    if (run->parsed()) return RunClientCommand(*ra, *run);
    std::cerr << "fabcheck perf: choose serve or run (see --help)\n";
    return kExitUsage;
  };
}

const bool kRegistered = app::RegisterCommand({"perf", 300, &Setup});

}  // namespace
