#include "perf/transport.h"

#include "perf/limits.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"
#include "fabcheck/model/json_fields.h"
#include "perf/tcp_transport.h"

#include "perf/verbs/verbs_transport.h"

namespace fabcheck::perf {

namespace {

constexpr uint64_t kMaxMessage = uint64_t{1} << 30;  // 1 GiB: far above perftest's 8 MiB sweep
constexpr uint64_t kMaxIters = 1'000'000'000;
constexpr double kMaxDurationS = 24 * 3600;

}  // namespace

Status ValidateKvPattern(const TestParams& p) {
  const KvPattern& kv = p.kv;
  if (kv.layers == 0 && kv.pages_per_layer == 0) {
    return InvalidArgumentError("a kv test needs its pattern from the model: run it with fabcheck kv run");
  }
  if (p.sizes.size() != 1) return InvalidArgumentError("a kv test has one page size (sizes holds exactly one)");
  if (kv.layers < 1 || kv.layers > 4096) {
    return InvalidArgumentError(fmt::format("kv: {} layers out of range (1 .. 4096)", kv.layers));
  }
  if (kv.pages_per_layer < 1 || kv.pages_per_layer > (uint64_t{1} << 24)) {
    return InvalidArgumentError(fmt::format("kv: {} pages per layer out of range (1 .. 16M)", kv.pages_per_layer));
  }
  if (kv.pool_pages < 1 || kv.pool_pages > kMaxKvPoolPages) {
    return InvalidArgumentError(
        fmt::format("kv: a destination pool of {} pages is out of range (1 .. {})", kv.pool_pages, kMaxKvPoolPages));
  }
  if (p.bidir) return InvalidArgumentError("kv: the KV-cache pattern is one-way (prefill to decode); no --bidir");
  if (p.validate) return InvalidArgumentError("kv: --validate is not supported for the KV-cache pattern");
  if (p.op != model::PerfOp::kWrite && p.op != model::PerfOp::kWriteImm && p.op != model::PerfOp::kSend) {
    return InvalidArgumentError("kv: pages are written (--op write, write_imm or send), never read");
  }
  if (p.transport == TransportKind::kTcp && (p.client.mem.is_cuda() || p.server.mem.is_cuda())) {
    return InvalidArgumentError("kv over tcp moves host memory; GPU memory (--mem cuda:N) needs --transport verbs");
  }
  if (p.sizes[0] > (uint64_t{1} << 30) / 2) {
    return InvalidArgumentError(fmt::format("kv: page of {} bytes above 512 MiB", p.sizes[0]));
  }
  return Status::Ok();
}

std::string_view TransportName(TransportKind kind) { return kind == TransportKind::kTcp ? "tcp" : "verbs"; }

std::optional<TransportKind> ParseTransportKind(std::string_view name) {
  if (name == "tcp") return TransportKind::kTcp;
  if (name == "verbs" || name == "rdma") return TransportKind::kVerbs;
  return std::nullopt;
}

std::string_view RoleName(Role role) { return role == Role::kClient ? "client" : "server"; }

Result<MemorySpec> MemorySpec::Parse(std::string_view text) {
  MemorySpec m;
  if (text == "host") return m;
  if (StartsWith(text, "cuda:")) {
    auto n = ParseUint(text.substr(5));
    if (n && *n < 1024) {
      m.kind = Kind::kCuda;
      m.cuda_device = static_cast<int>(*n);
      return m;
    }
  } else if (text == "cuda") {
    m.kind = Kind::kCuda;
    return m;
  }
  return InvalidArgumentError(
      fmt::format("bad memory type '{}' (use host or cuda:N, N the CUDA device index)", text));
}

std::string MemorySpec::ToString() const {
  return kind == Kind::kHost ? "host" : fmt::format("cuda:{}", cuda_device);
}

Result<NumaSpec> NumaSpec::Parse(std::string_view text) {
  NumaSpec n;
  if (text == "auto") return n;
  if (text == "off" || text == "none") {
    n.mode = Mode::kOff;
    return n;
  }
  if (auto v = ParseUint(text); v && *v < 4096) {
    n.mode = Mode::kNode;
    n.node = static_cast<int>(*v);
    return n;
  }
  return InvalidArgumentError(fmt::format("bad NUMA binding '{}' (use auto, off, or a node number)", text));
}

std::string NumaSpec::ToString() const {
  switch (mode) {
    case Mode::kAuto: return "auto";
    case Mode::kOff: return "off";
    case Mode::kNode: return std::to_string(node);
  }
  return "auto";
}

model::PerfSettings TestParams::ToSettings() const {
  model::PerfSettings s;
  s.transport = std::string(TransportName(transport));
  s.test = test;
  s.op = op;
  s.bidir = bidir;
  s.sizes = sizes;
  s.iters = iters;
  s.duration_s = duration_s;
  s.warmup = warmup;
  s.streams = streams;
  s.tx_depth = tx_depth;
  s.inline_size = inline_size;
  s.mtu = mtu;
  s.tclass = tclass;
  s.sl = sl;
  s.validate = validate;
  s.use_cm = use_cm;
  return s;
}

namespace {

void EndpointToJson(nlohmann::json& j, const EndpointSpec& e) {
  j = {{"device", e.device}, {"port", e.port}, {"mem", e.mem.ToString()}, {"numa", e.numa.ToString()}};
  j["gid_index"] = e.gid_index ? nlohmann::json(*e.gid_index) : nlohmann::json(nullptr);
}

EndpointSpec EndpointFromJson(const nlohmann::json& j) {
  EndpointSpec e;
  e.device = j.value("device", "");
  e.port = model::json_fields::NumberOr(j, "port", 0);
  if (j.contains("gid_index") && !j.at("gid_index").is_null()) e.gid_index = j.at("gid_index").get<int>();
  auto mem = MemorySpec::Parse(j.value("mem", "host"));
  if (!mem.ok()) throw nlohmann::json::other_error::create(501, mem.status().message(), &j);
  e.mem = *mem;
  auto numa = NumaSpec::Parse(j.value("numa", "auto"));
  if (!numa.ok()) throw nlohmann::json::other_error::create(501, numa.status().message(), &j);
  e.numa = *numa;
  return e;
}

}  // namespace

void to_json(nlohmann::json& j, const TestParams& p) {
  j = {{"transport", TransportName(p.transport)},
       {"test", p.test},
       {"op", p.op},
       {"bidir", p.bidir},
       {"sizes", p.sizes},
       {"iters", p.iters},
       {"duration_s", p.duration_s},
       {"warmup", p.warmup},
       {"streams", p.streams},
       {"tx_depth", p.tx_depth},
       {"cq_moderation", p.cq_moderation},
       {"inline_size", p.inline_size},
       {"mtu", p.mtu},
       {"validate", p.validate},
       {"use_cm", p.use_cm}};
  j["tclass"] = p.tclass ? nlohmann::json(*p.tclass) : nlohmann::json(nullptr);
  j["sl"] = p.sl ? nlohmann::json(*p.sl) : nlohmann::json(nullptr);
  if (p.test == model::PerfTest::kKv) {
    j["kv"] = {{"layers", p.kv.layers}, {"pages_per_layer", p.kv.pages_per_layer}, {"pool_pages", p.kv.pool_pages}};
  }
  EndpointToJson(j["client"], p.client);
  EndpointToJson(j["server"], p.server);
}

void from_json(const nlohmann::json& j, TestParams& p) {
  auto kind = ParseTransportKind(j.at("transport").get<std::string>());
  if (!kind) throw nlohmann::json::other_error::create(501, "unknown transport " + j.at("transport").dump(), &j);
  p.transport = *kind;
  p.test = j.at("test").get<model::PerfTest>();
  p.op = j.at("op").get<model::PerfOp>();
  p.bidir = j.value("bidir", false);
  p.sizes = j.at("sizes").get<std::vector<uint64_t>>();
  p.iters = model::json_fields::NumberOr(j, "iters", uint64_t{0});
  p.duration_s = model::json_fields::NumberOr(j, "duration_s", 0.0);
  p.warmup = model::json_fields::NumberOr(j, "warmup", uint64_t{0});
  p.streams = model::json_fields::NumberOr(j, "streams", 1);
  p.tx_depth = model::json_fields::NumberOr(j, "tx_depth", 128);
  p.cq_moderation = model::json_fields::NumberOr(j, "cq_moderation", 100);
  p.inline_size = model::json_fields::NumberOr(j, "inline_size", 0);
  p.mtu = model::json_fields::NumberOr(j, "mtu", 0);
  if (j.contains("tclass") && !j.at("tclass").is_null()) p.tclass = j.at("tclass").get<int>();
  if (j.contains("sl") && !j.at("sl").is_null()) p.sl = j.at("sl").get<int>();
  p.validate = j.value("validate", false);
  p.use_cm = j.value("use_cm", false);
  if (p.test == model::PerfTest::kKv) {
    const nlohmann::json& kv = j.at("kv");
    p.kv.layers = model::json_fields::Number<int>(kv.at("layers"), "kv.layers");
    p.kv.pages_per_layer = model::json_fields::Number<uint64_t>(kv.at("pages_per_layer"), "kv.pages_per_layer");
    p.kv.pool_pages = model::json_fields::Number<uint64_t>(kv.at("pool_pages"), "kv.pool_pages");
  }
  if (j.contains("client")) p.client = EndpointFromJson(j.at("client"));
  if (j.contains("server")) p.server = EndpointFromJson(j.at("server"));
}

Result<TestParams> ParseTestParams(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgumentError("test request is not a JSON object");
  try {
    return j.get<TestParams>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("malformed test request: {}", e.what()));
  }
}

Status ValidateTestParams(const TestParams& p) {
  if (p.sizes.empty()) return InvalidArgumentError("no message size given (use --size N or --sizes 2:8M)");
  for (uint64_t s : p.sizes) {
    if (s == 0 || s > kMaxMessage) {
      return InvalidArgumentError(fmt::format("message size {} out of range (1 B .. {})", s, FormatSize(kMaxMessage)));
    }
  }
  if ((p.iters == 0) == (p.duration_s <= 0)) {
    return InvalidArgumentError("give exactly one of --iters N or --duration S");
  }
  if (p.iters > kMaxIters) return InvalidArgumentError(fmt::format("--iters {} above {}", p.iters, kMaxIters));
  if (p.duration_s > kMaxDurationS || p.duration_s < 0) {
    return InvalidArgumentError(fmt::format("--duration {} s out of range (0 .. {} s)", p.duration_s, kMaxDurationS));
  }
  if (p.test == model::PerfTest::kLat && p.iters != 0 && p.iters < 2) {
    return InvalidArgumentError("a latency test needs --iters 2 or more (it reports iters-1 deltas)");
  }
  if (p.warmup > kMaxIters) return InvalidArgumentError(fmt::format("--warmup {} above {}", p.warmup, kMaxIters));
  if (p.streams < 1 || p.streams > kMaxStreams) {
    return InvalidArgumentError(fmt::format("--streams/--qps {} out of range (1 .. {})", p.streams, kMaxStreams));
  }
  if (p.tx_depth < 1 || p.tx_depth > 65536) {
    return InvalidArgumentError(fmt::format("--tx-depth {} out of range (1 .. 65536)", p.tx_depth));
  }
  if (p.cq_moderation < 1 || p.cq_moderation > 65536) {
    return InvalidArgumentError(fmt::format("CQ moderation {} out of range (1 .. 65536)", p.cq_moderation));
  }
  if (p.inline_size < 0 || p.inline_size > 65536) {
    return InvalidArgumentError(fmt::format("--inline {} out of range (0 .. 65536)", p.inline_size));
  }
  if (p.mtu != 0 && p.mtu != 256 && p.mtu != 512 && p.mtu != 1024 && p.mtu != 2048 && p.mtu != 4096) {
    return InvalidArgumentError(fmt::format("--mtu {} is not an IB MTU (256, 512, 1024, 2048 or 4096)", p.mtu));
  }
  if (p.tclass && (*p.tclass < 0 || *p.tclass > 255)) {
    return InvalidArgumentError(fmt::format("--tclass {} out of range (0 .. 255)", *p.tclass));
  }
  if (p.sl && (*p.sl < 0 || *p.sl > 15)) return InvalidArgumentError(fmt::format("--sl {} out of range (0 .. 15)", *p.sl));
  if (p.bidir && p.test == model::PerfTest::kLat) {
    return InvalidArgumentError("--bidir applies to bandwidth tests (--test bw), a latency test is a ping-pong");
  }
  if (p.test == model::PerfTest::kLat && p.streams != 1) {
    return InvalidArgumentError("a latency test runs one ping-pong (--qps/--streams 1), as perftest's *_lat");
  }
  if (p.test == model::PerfTest::kKv) RETURN_IF_ERROR(ValidateKvPattern(p));
  for (const EndpointSpec* e : {&p.client, &p.server}) {
    if (e->port < 0 || e->port > 255) return InvalidArgumentError(fmt::format("--port {} out of range (1 .. 255)", e->port));
    if (e->gid_index && (*e->gid_index < 0 || *e->gid_index > 65535)) {
      return InvalidArgumentError(fmt::format("--gid-index {} out of range", *e->gid_index));
    }
  }
  if (p.transport == TransportKind::kTcp) {
    if (p.op != model::PerfOp::kSend && p.op != model::PerfOp::kWrite) {
      return InvalidArgumentError(fmt::format(
          "--op {} is an RDMA operation; the tcp transport moves a byte stream (use --op send, or --transport verbs)",
          model::PerfOpName(p.op)));
    }
    if (p.mtu != 0) return InvalidArgumentError("--mtu applies to verbs; over tcp the interface MTU is used (ip link)");
    if (p.use_cm) return InvalidArgumentError("--cm applies to verbs (rdma_cm), not to the tcp transport");
    if (p.sl) return InvalidArgumentError("--sl applies to verbs (InfiniBand service level), not to tcp");
    if (p.inline_size != 0) return InvalidArgumentError("--inline applies to verbs, not to the tcp transport");
  }
  return Status::Ok();
}

bool Capabilities::Supports(model::PerfOp op) const {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

void to_json(nlohmann::json& j, const Capabilities& c) {
  j = {{"ops", c.ops},
       {"bidir", c.bidir},
       {"max_streams", c.max_streams},
       {"max_message", c.max_message},
       {"cuda_memory", c.cuda_memory},
       {"gpudirect", c.gpudirect},
       {"max_inline", c.max_inline},
       {"rdma_cm", c.rdma_cm},
       {"duration_mode", c.duration_mode},
       {"kv", c.kv},
       {"notes", c.notes}};
}

void from_json(const nlohmann::json& j, Capabilities& c) {
  c.ops = j.value("ops", std::vector<model::PerfOp>{});
  c.bidir = j.value("bidir", false);
  c.max_streams = model::json_fields::NumberOr(j, "max_streams", 1);
  c.max_message = model::json_fields::NumberOr(j, "max_message", uint64_t{0});
  c.cuda_memory = j.value("cuda_memory", false);
  c.gpudirect = j.value("gpudirect", false);
  c.max_inline = model::json_fields::NumberOr(j, "max_inline", 0);
  c.rdma_cm = j.value("rdma_cm", false);
  c.duration_mode = j.value("duration_mode", false);
  c.kv = j.value("kv", false);
  c.notes = j.value("notes", std::vector<std::string>{});
}

Status CheckCapabilities(const TestParams& p, const Capabilities& caps) {
  RETURN_IF_ERROR(CheckCapabilities(p, caps, Role::kClient));
  return CheckCapabilities(p, caps, Role::kServer);
}

Status CheckCapabilities(const TestParams& p, const Capabilities& caps, Role role) {
  std::string why = caps.notes.empty() ? "" : " (" + Join(caps.notes, "; ") + ")";
  if (!caps.Supports(p.op)) {
    return UnimplementedError(fmt::format("--op {} is not supported by the {} transport here{}",
                                          model::PerfOpName(p.op), TransportName(p.transport), why));
  }
  if (p.bidir && !caps.bidir) return UnimplementedError("--bidir is not supported by this transport" + why);
  if (p.streams > caps.max_streams) {
    return FailedPreconditionError(
        fmt::format("{} streams/QPs asked, this side allows {}", p.streams, caps.max_streams));
  }
  uint64_t largest = *std::max_element(p.sizes.begin(), p.sizes.end());
  if (caps.max_message != 0 && largest > caps.max_message) {
    return FailedPreconditionError(
        fmt::format("message size {} above this side's maximum {}", largest, caps.max_message));
  }
  if (p.local(role).mem.is_cuda() && !caps.cuda_memory) {
    return FailedPreconditionError(fmt::format("CUDA memory ({} {}) is unavailable on the {}{}",
                                               role == Role::kClient ? "--mem" : "--server-mem",
                                               p.local(role).mem.ToString(), RoleName(role), why));
  }
  if (p.inline_size > 0 && p.inline_size > caps.max_inline) {
    return FailedPreconditionError(
        fmt::format("--inline {} above the device's maximum inline size {}", p.inline_size, caps.max_inline));
  }
  if (p.use_cm && !caps.rdma_cm) return FailedPreconditionError("--cm (rdma_cm) is unavailable here" + why);
  if (p.test == model::PerfTest::kKv && !caps.kv) {
    return UnimplementedError(fmt::format("the KV-cache pattern (fabcheck kv) is not supported by the {} transport on the "
                                          "{}{} (use --transport tcp, or upgrade fabcheck there)",
                                          TransportName(p.transport), RoleName(role), why));
  }
  if (p.iters == 0 && !caps.duration_mode) {
    return UnimplementedError("--duration is not supported by this transport; use --iters N");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Transport>> CreateTransport(TransportKind kind) {
  if (kind == TransportKind::kTcp) return CreateTcpTransport();
  return verbs::CreateVerbsTransport();
}

}  // namespace fabcheck::perf
