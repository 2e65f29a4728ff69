// `fabcheck kv models|size|run`: the L5 inference KV-cache transfer, sized
// from the model and judged against the L3 rung. Parsing and wiring only;
// the work is kv/ (sizing.h, run.h) over perf's engine and server.
#include <csignal>
#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/units.h"
#include "control/api.h"
#include "agent/members.h"
#include "kv/fan.h"
#include "kv/run.h"
#include "kv/sizing.h"
#include "net/auth.h"
#include "report/kv_text.h"
#include "sys/sysroot.h"

namespace {

using namespace fabcheck;

struct SizeArgs {
  std::string model, dtype;
  int layers = 0, kv_heads = 0, head_dim = 0, latent_dim = 0, page = 16, tp = 1;
  uint64_t tokens = 8192;
};

struct KvArgs {
  SizeArgs size;
  double link_gbps = 400;
  std::string host, transport = "auto", duration, pool = "256M";
  std::string device, server_device, gid_index = "auto", server_gid_index = "auto", mem = "host", server_mem = "host";
  std::string token_file, agents;
  std::string direction = "fan-in";  // --direction fan-in|fan-out
  net::TlsFiles tls;
  int port = perf::kDefaultPort, inflight = 1;
  uint64_t requests = 0, warmup = 2;
  bool no_l3 = false, json = false, models_json = false;
  double l3_duration = 2, ttft_budget_ms = 0, timeout = 30, connect_timeout = 10;
};

int Usage(const std::string& message) {
  std::cerr << "fabcheck kv: " << message << "\n";
  return kExitUsage;
}

void SizeOptions(app::Tunables& t, SizeArgs& a) {
  t.Text("--model", a.model,
         "Model preset (Llama-3-8B, Llama-3-70B, Llama-3-405B, Qwen2.5-72B, DeepSeek-V3; 'fabcheck kv models' lists "
         "them) or a config.json file; the options below override it",
         "name|file");
  t.Integer("--layers", a.layers, "Transformer layers (config.json num_hidden_layers)", 0, 4096);
  t.Integer("--kv-heads", a.kv_heads, "KV heads (num_key_value_heads)", 0, 1 << 20);
  t.Integer("--head-dim", a.head_dim, "Head dimension (hidden_size / num_attention_heads, or head_dim)", 0, 1 << 20);
  t.Integer("--latent-dim", a.latent_dim, "MLA: latent per token and layer (kv_lora_rank + qk_rope_head_dim)", 0,
            1 << 20);
  t.Text("--dtype", a.dtype, "KV cache element type: bfloat16, float16, float32, fp8, int8 (default the model's)",
         "dtype");
  t.Integer("--page", a.page, "Tokens per page (the paged-attention block)", 1, 65536);
  t.Count("--tokens", a.tokens, "Prompt tokens per request", 1, 1u << 24);
  t.Integer("--tp", a.tp, "Tensor-parallel ranks the KV heads are split over", 1, 4096);
}

Result<model::KvSizing> Sizing(const SizeArgs& a) {
  model::KvModel m;
  if (!a.model.empty()) {
    ASSIGN_OR_RETURN(m, kv::FindModel(a.model));
  } else {
    if (a.layers == 0 || (a.latent_dim == 0 && (a.kv_heads == 0 || a.head_dim == 0))) {
      return InvalidArgumentError(
          "give --model NAME, or --layers with --kv-heads and --head-dim (GQA) or --latent-dim (MLA)");
    }
    m.name = "custom";
    m.source = "command line";
    m.dtype = "bfloat16";
    m.dtype_bytes = 2;
  }
  bool overridden = false;
  if (a.layers != 0) m.layers = a.layers, overridden = true;
  if (a.latent_dim != 0) {
    m.attention = "mla", m.latent_dim = a.latent_dim, overridden = true;
  } else if (a.kv_heads != 0 || a.head_dim != 0) {
    if (m.attention == "mla") return InvalidArgumentError("--kv-heads/--head-dim describe GQA; this model is MLA (--latent-dim)");
    m.attention = "gqa";
    if (a.kv_heads != 0) m.kv_heads = a.kv_heads;
    if (a.head_dim != 0) m.head_dim = a.head_dim;
    overridden = true;
  }
  if (m.attention.empty()) m.attention = "gqa";
  if (!a.dtype.empty()) {
    ASSIGN_OR_RETURN(m.dtype_bytes, kv::DtypeBytes(a.dtype));
    m.dtype = a.dtype;
    overridden = true;
  }
  if (overridden && !a.model.empty()) m.source += " (with command-line overrides)";
  return kv::ComputeSizing(m, a.tp, a.page, a.tokens);
}

// A run that could not be made: the error on stderr and, with --json, as a
// result of `schema` with ok false; a usage error exits as one.
int RunFailed(const Status& status, const char* schema, bool json) {
  std::cerr << "fabcheck kv run: " << status.message() << "\n";
  if (json) {
    std::cout << ToJsonText(nlohmann::json{{"schema", schema},
                                           {"ok", false},
                                           {"error", status.message()},
                                           {"code", StatusCodeName(status.code())}},
                            2)
              << "\n";
  }
  return status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitError;
}

int RunModels(bool json) {
  std::vector<model::KvModel> models;
  for (const auto& p : kv::Presets()) models.push_back(p.model);
  if (json) {
    nlohmann::json j = {{"schema", "fabcheck.kv-models/v1"}, {"models", nlohmann::json::array()}};
    for (const auto& p : kv::Presets()) {
      nlohmann::json m = p.model;
      m["aliases"] = p.aliases;
      j["models"].push_back(m);
    }
    std::cout << ToJsonText(j, 2) << "\n";
  } else {
    std::cout << report::FormatKvModels(models);
  }
  return kExitOk;
}

int RunSize(const KvArgs& a) {
  // A config.json that cannot be read or parsed is bad input (3); a preset
  // name that does not exist, or options that do not fit, are usage (64).
  const std::string& model = a.size.model;
  if (model.find('/') != std::string::npos || EndsWith(model, ".json")) {
    if (auto m = kv::FindModel(model); !m.ok()) {
      std::cerr << "fabcheck kv: --model " << m.status().message() << "\n";
      return kExitError;
    }
  }
  auto sizing = Sizing(a.size);
  if (!sizing.ok()) return Usage(sizing.status().message());
  if (a.json) {
    std::cout << ToJsonText(nlohmann::json{{"schema", "fabcheck.kv-size/v1"}, {"sizing", *sizing}}, 2) << "\n";
  } else {
    std::cout << report::FormatKvSizing(*sizing, a.link_gbps);
  }
  return kExitOk;
}

Result<std::optional<int>> GidIndex(const std::string& text) {
  if (text == "auto") return std::optional<int>();
  auto v = ParseInt(text);
  if (!v || *v < 0 || *v > 65535) return InvalidArgumentError("--gid-index '" + text + "': use a number or auto");
  return std::optional<int>(static_cast<int>(*v));
}

// --agents: the transfers run between agents, several at once (kv/fan.h).
int RunFanCommand(const KvArgs& a, const kv::RunOptions& run) {
  kv::FanOptions o;
  o.run = run;
  o.fan_out = a.direction == "fan-out";
  // The member list every coordinator reads (a member named twice is refused).
  auto members = agent::ParseAgentList(a.agents, control::kDefaultControlPort);
  if (!members.ok()) return Usage(members.status().message());
  o.members = std::move(members).value();
  o.control.token = run.client.token;
  o.control.connect_timeout = run.client.connect_timeout;
  if (a.tls.enabled()) o.control.tls = a.tls;
  o.progress = run.progress;
  auto result = kv::RunFan(o);
  if (!result.ok()) {
    return RunFailed(result.status(), model::kKvFanSchema, a.json);
  }
  if (a.json) {
    std::cout << ToJsonText(nlohmann::json(*result), 2) << "\n";
  } else {
    std::cout << report::FormatKvFan(*result);
  }
  if (!result->ok()) return kExitFailures;
  for (const auto& f : result->findings) {
    if (f.severity == model::Severity::kWarn) return kExitWarnings;
  }
  return kExitOk;
}

int RunKv(const KvArgs& a, const CLI::App& cmd) {
  auto sizing = Sizing(a.size);
  if (!sizing.ok()) return Usage(sizing.status().message());
  if (a.host.empty() == a.agents.empty()) {
    return Usage("give the decode side's perf server (HOST), or --agents for transfers between agents, not both");
  }
  if (a.direction == "fan-out" && a.agents.empty()) return Usage("--direction fan-out goes with --agents");
  kv::RunOptions o;
  o.sizing = *sizing;
  perf::ClientOptions& c = o.client;
  c.root = sys::SysRoot::Live();
  c.host = a.host;
  c.port = a.port;
  if (auto colon = a.host.rfind(':'); colon != std::string::npos && a.host.find(':') == colon) {
    auto port = ParseInt(a.host.substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) return Usage("bad port in '" + a.host + "'");
    c.host = a.host.substr(0, colon);
    c.port = static_cast<int>(*port);
  }
  auto transport = perf::ChooseTransport(a.transport, *c.root);
  if (!transport) return Usage("--transport '" + a.transport + "': use auto, verbs or tcp");
  o.transport = transport->kind;
  // With --agents the agents run the transfers: each picks for its own node.
  o.transport_auto = a.transport == "auto" && !a.agents.empty();
  if (!o.transport_auto && !transport->why_tcp.empty()) {
    std::cerr << "fabcheck kv run: --transport auto: " << transport->why_tcp << "; measuring TCP, not RDMA\n";
  }
  o.inflight = a.inflight;
  if (cmd.count("--requests") > 0 && !a.duration.empty()) return Usage("give --requests or --duration, not both");
  if (cmd.count("--requests") > 0) {
    o.requests = a.requests;
  } else {
    auto d = ParseDurationSeconds(a.duration.empty() ? "5s" : a.duration);
    if (!d.ok()) return Usage("--duration: " + d.status().message());
    o.duration_s = *d;
  }
  o.warmup = a.warmup;
  auto pool = ParseSize(a.pool);
  if (!pool.ok()) return Usage("--pool: " + pool.status().message());
  o.pool_bytes = *pool;
  o.l3 = !a.no_l3;
  o.l3_duration_s = a.l3_duration;
  if (cmd.count("--ttft-budget-ms") > 0) o.ttft_budget_ms = a.ttft_budget_ms;
  struct Side {
    perf::EndpointSpec* spec;
    const std::string &device, &gid, &mem;
  };
  for (const Side& s : {Side{&c.params.client, a.device, a.gid_index, a.mem},
                        Side{&c.params.server, a.server_device, a.server_gid_index, a.server_mem}}) {
    s.spec->device = s.device;
    auto gid = GidIndex(s.gid);
    if (!gid.ok()) return Usage(gid.status().message());
    s.spec->gid_index = *gid;
    auto mem = perf::MemorySpec::Parse(s.mem);
    if (!mem.ok()) return Usage(mem.status().message());
    s.spec->mem = *mem;
  }
  if (!a.token_file.empty()) {
    auto token = net::ReadTokenFile(a.token_file);
    if (!token.ok()) {
      std::cerr << "fabcheck kv run: " << token.status().message() << "\n";
      return kExitError;
    }
    c.token = *token;
  }
  if (a.tls.enabled()) {
    auto tls = net::TlsContext::ForClient(a.tls);
    if (!tls.ok()) return Usage(tls.status().message());
    c.tls = *tls;
    c.tls_server_name = c.host;
  }
  c.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.connect_timeout * 1000));
  c.io_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 1000));
  o.progress = [](const std::string& line) { std::cerr << "kv: " << line << "\n"; };

  std::signal(SIGPIPE, SIG_IGN);
  if (!a.agents.empty()) return RunFanCommand(a, o);
  auto result = kv::Run(o);
  if (!result.ok()) {
    return RunFailed(result.status(), model::kKvSchema, a.json);
  }
  if (a.json) {
    std::cout << ToJsonText(nlohmann::json(*result), 2) << "\n";
  } else {
    std::cout << report::FormatKvResult(*result);
  }
  if (!result->error.empty()) std::cerr << "fabcheck kv run: " << result->error << "\n";
  if (!result->ok()) return kExitFailures;
  for (const auto& f : result->findings) {
    if (f.severity == model::Severity::kWarn) return kExitWarnings;
  }
  return kExitOk;
}

app::RunFn Setup(CLI::App& root) {
  auto* kv = root.add_subcommand("kv", "L5: inference KV-cache transfer sized from the model, against the L3 rung");
  kv->require_subcommand(1);
  auto a = std::make_shared<KvArgs>();

  auto* models = kv->add_subcommand("models", "List the model presets and where their numbers come from");
  app::Tunables mt(models, "kv models");
  mt.Flag("--json", a->models_json, "JSON instead of the table");

  auto* size = kv->add_subcommand("size", "Print the KV transfer of one request (no peer needed)");
  app::Tunables zt(size, "kv size");
  SizeOptions(zt, a->size);
  zt.Number("--link-gbps", a->link_gbps, "Also show what a link of this rate allows (0: do not)", 0, 1e6);
  zt.Flag("--json", a->json, "JSON (schema fabcheck.kv-size/v1) instead of the text");
  size->footer(
      "Examples:\n"
      "  fabcheck kv size --model Llama-3-70B --tokens 8192 --page 16\n"
      "  fabcheck kv size --model DeepSeek-V3 --tokens 32768 --page 64\n"
      "  fabcheck kv size --model ./config.json --tp 8 --dtype fp8\n"
      "  fabcheck kv size --layers 32 --kv-heads 8 --head-dim 128 --dtype bf16\n"
      "Bytes per layer per page (K and V): 2 x kv_heads/tp x head_dim x dtype_bytes x page;\n"
      "MLA: latent_dim x dtype_bytes x page.");

  auto* run = kv->add_subcommand("run", "Run the KV transfer against a `fabcheck perf serve` (or an agent)");
  run->add_option("host", a->host, "The decode side's perf server (HOST or HOST:PORT); or --agents");
  app::Tunables rt(run, "kv run");
  SizeOptions(rt, a->size);
  rt.Port("--port", a->port, "Server's control port", /*zero_means_any=*/false);
  rt.Text("--transport", a->transport,
          "auto (verbs where the node running the transfer has an RDMA device, else tcp, said on stderr), verbs\n"
          "(RDMA WRITE per page into the server's page table, WRITE_WITH_IMM per layer) or tcp",
          "auto|verbs|tcp");
  rt.Integer("--inflight", a->inflight, "Requests moving at once (one connection or RC QP each)", 1, 256);
  rt.Count("--requests", a->requests, "Measured requests in all (instead of --duration)", 1, 1'000'000);
  rt.Text("--duration", a->duration, "Run for this long (default 5s; requests in progress finish)", "duration");
  rt.Count("--warmup", a->warmup, "Unmeasured requests first", 0, 1'000'000);
  rt.Text("--pool", a->pool, "Destination pages the server keeps (its page table), as bytes", "size (K/M/G)");
  rt.Flag("--no-l3", a->no_l3, "Skip the L3 bandwidth beside it (no ratio)");
  rt.Seconds("--l3-duration", a->l3_duration, "Seconds of the L3 bandwidth run");
  rt.Number("--ttft-budget-ms", a->ttft_budget_ms,
            "Time-to-first-token budget of the KV transfer: pass/fail, and the longest prompt that fits", 0.001, 1e9);
  rt.Text("--device", a->device, "verbs: local RDMA device", "device");
  rt.Text("--gid-index", a->gid_index, "verbs: local GID index, or auto", "index|auto");
  rt.Text("--mem", a->mem, "Local KV cache: host or cuda:N", "host|cuda:N");
  rt.Text("--server-device", a->server_device, "verbs: the server's RDMA device", "device");
  rt.Text("--server-gid-index", a->server_gid_index, "verbs: the server's GID index or auto", "index|auto");
  rt.Text("--server-mem", a->server_mem, "Server KV cache: host or cuda:N", "host|cuda:N");
  rt.Text("--agents", a->agents,
          "Transfers between agents, all at once: the first is the decode side every other one writes into "
          "(fan-in); with --direction fan-out the first writes into every other one",
          "host[:port],...");
  rt.Text("--direction", a->direction,
          "With --agents: fan-in (every other agent writes into the first) or fan-out (the first writes into all "
          "the others at once)",
          "fan-in|fan-out")
      ->check(CLI::IsMember({"fan-in", "fan-out"}));
  rt.Path("--token-file", a->token_file, "The server's (or the agents') shared token, when it requires one");
  rt.Tls(a->tls, app::Tunables::TlsRole::kClient);
  rt.Seconds("--connect-timeout", a->connect_timeout, "Seconds to connect");
  rt.Seconds("--timeout", a->timeout, "Seconds any wait may block before the run fails");
  rt.Flag("--json", a->json, "JSON (schema fabcheck.kv/v1) instead of the table");
  run->footer(
      "Examples:\n"
      "  fabcheck perf serve                                   # on the decode node\n"
      "  fabcheck kv run node2 --model Llama-3-70B --tokens 8192 --page 16 --inflight 4\n"
      "  fabcheck kv run node2 --model DeepSeek-V3 --requests 50 --ttft-budget-ms 200 --json\n"
      "  fabcheck kv run node2 --transport verbs --device mlx5_0 --mem cuda:0 --server-mem cuda:0\n"
      "  fabcheck kv run --agents decode1,prefill1,prefill2,prefill3 --model Llama-3-70B     # fan-in (3 -> 1)\n"
      "  fabcheck kv run --agents prefill1,decode1,decode2 --direction fan-out --json      # fan-out (1 -> 2)\n"
      "Before the transfer both ends' MTU, GID type and memory registration are compared; then the L3 bandwidth at\n"
      "the page size (as many streams as --inflight) and the KV transfer run in the same run; the ratio is kv / L3.\n"
      "Exit codes: 0 ok, 1 warnings (below the L3 goal), 2 failed (mismatch, budget, peer error), 3 could not run, "
      "64 usage.");

  return [models, size, run, a]() {
    if (models->parsed()) return RunModels(a->models_json);
    if (size->parsed()) return RunSize(*a);
    if (run->parsed()) return RunKv(*a, *run);
    return Usage("choose models, size or run (see --help)");
  };
}

const bool kRegistered = app::RegisterCommand({"kv", 450, &Setup});

}  // namespace
