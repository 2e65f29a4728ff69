// The TCP transport: setup (data connections, placement, memory) and the
// description of what it used. The per-size loops are in tcp_run.cc.
#include "perf/tcp_transport.h"

#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "base/units.h"
#include "dl/cuda.h"
#include "fabcheck/model/json_fields.h"
#include "net/auth.h"
#include "net/hmac.h"
#include "perf/flow_path.h"
#include "perf/tcp_internal.h"
#include "perf/tcp_run.h"

namespace fabcheck::perf {

namespace tcp {

namespace {

constexpr char kHelloMagic[4] = {'F', 'C', 'P', 'D'};
constexpr size_t kHelloSize = 4 + 4 + 32;

std::string Hello(uint32_t index, const std::string& cookie) {
  std::string h(kHelloMagic, 4);
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(index >> (24 - 8 * i)));
  return h + cookie;
}

}  // namespace

Capabilities TcpTransport::GetCapabilities() const {
  Capabilities c;
  c.ops = {model::PerfOp::kSend, model::PerfOp::kWrite};
  c.bidir = true;
  c.max_streams = 1024;
  c.max_message = uint64_t{1} << 30;
  auto cuda = dl::LoadCuda();
  c.cuda_memory = cuda.ok();
  if (!cuda.ok()) c.notes.push_back("CUDA memory unavailable: " + cuda.status().message());
  c.gpudirect = false;  // TCP stages GPU memory through pinned host memory, never GPUDirect
  c.duration_mode = true;
  c.kv = true;
  return c;
}

uint64_t TcpTransport::MemoryNeeded(const TestParams& p, Role role) const {
  uint64_t largest = p.sizes.empty() ? 0 : *std::max_element(p.sizes.begin(), p.sizes.end());
  uint64_t streams = static_cast<uint64_t>(p.streams);
  bool staged = p.local(role).mem.is_cuda();
  if (p.test == model::PerfTest::kKv) return KvMemoryNeeded(p, role);
  if (p.test == model::PerfTest::kLat) return (staged ? 2 : 1) * largest;
  bool sends = p.bidir || role == Role::kClient;
  bool receives = p.bidir || role == Role::kServer;
  uint64_t rx = (p.validate || staged) ? largest : std::max<uint64_t>(largest, kRecvChunk);
  uint64_t per_stream = (sends ? largest : 0) + (receives ? rx : 0);
  if (staged) per_stream += largest;  // the device buffer beside the pinned one
  return streams * per_stream;
}

Status TcpTransport::SetupPlacement() {
  const EndpointSpec& spec = *local_.spec;
  place_ = FindNetPlacement(*local_.root, local_.control_local_addr);
  ASSIGN_OR_RETURN(NumaBinding numa,
                   ResolveNuma(*local_.root, spec.numa, place_.numa_node,
                               place_.netdev.empty() ? local_.control_local_addr : place_.netdev));
  cpus_ = std::move(numa.cpus);
  bound_node_ = numa.node;
  if (!numa.note.empty()) notes_.push_back(numa.note);
  if (spec.mem.is_cuda()) {
    auto cuda = dl::LoadCuda();
    if (!cuda.ok()) {
      return UnavailableError(fmt::format("--mem {} on the {}: {}", spec.mem.ToString(), RoleName(local_.role),
                                          cuda.status().message()));
    }
    cuda_ = *cuda;
    int count = 0;
    RETURN_IF_ERROR(dl::CudaCheck(*cuda_, cuda_->cudaGetDeviceCount(&count), "cudaGetDeviceCount"));
    if (spec.mem.cuda_device >= count) {
      return NotFoundError(fmt::format("--mem {}: this node has {} CUDA device(s) (use cuda:0 .. cuda:{})",
                                       spec.mem.ToString(), count, count - 1));
    }
    notes_.push_back("tcp stages GPU memory through pinned host memory (cudaMemcpy per message); not GPUDirect");
  }
  return Status::Ok();
}

Status TcpTransport::ConfigureSocket(int fd) const {
  RETURN_IF_ERROR(SetIoTimeout(fd, kIdleSlice));
  // Nagle off for ping-pong latency; for bandwidth the kernel may coalesce
  // small sends, as iperf3 and sockperf's throughput mode let it.
  // The kv pattern's notifications and their acknowledgements are small
  // messages a peer waits on: Nagle would hold them back.
  RETURN_IF_ERROR(SetNoDelay(fd, params_.test != model::PerfTest::kBw));
  if (params_.tclass) {
    int tos = *params_.tclass;
    // Either family may carry it; setting both is harmless on a dual-stack socket.
    (void)::setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
    (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos);
  }
  return Status::Ok();
}

int TcpTransport::Connections() const { return params_.streams * (params_.bidir ? 2 : 1); }

void TcpTransport::TracePaths(int port, std::vector<UniqueFd>* bound) {
  // The test itself runs whatever happens here; a note says why its paths are unknown.
  auto give_up = [&](const Status& why) {
    notes_.push_back("flow paths not traced: " + why.message());
    bound->clear();
  };
  auto peer = ResolveFlowPeer(local_.control_peer_addr, port);
  if (!peer.ok()) return give_up(peer.status());
  flow_peer_ = *peer;
  std::vector<int> ports;
  for (int i = 0; i < Connections(); ++i) {
    auto fd = BindFlowSocket(flow_peer_);
    if (!fd.ok()) return give_up(fd.status());
    ports.push_back(LocalPort(fd->get()));
    bound->push_back(std::move(*fd));
  }
  PathProbeOptions o;
  o.max_ttl = local_.trace_hops;
  o.cancel = local_.cancel;
  auto hops = TraceFlowPaths(flow_peer_, ports, o);
  if (!hops.ok()) {
    notes_.push_back("flow paths not traced: " + hops.status().message());
    return;  // the bound sockets still carry the test
  }
  for (size_t i = 0; i < ports.size(); ++i) paths_.push_back({ports[i], std::move((*hops)[i])});
}

Status TcpTransport::Setup(const TestParams& params, const LocalContext& local, ControlChannel& control) {
  params_ = params;
  local_ = local;
  RETURN_IF_ERROR(SetupPlacement());
  int n = Connections();
  socks_.resize(static_cast<size_t>(n));
  if (local.role == Role::kServer) {
    ASSIGN_OR_RETURN(UniqueFd listener, ListenTcp(local.control_local_addr, 0, n + 8));
    ASSIGN_OR_RETURN(std::string raw, net::RandomBytes(16));
    std::string cookie = net::ToHex(raw);
    RETURN_IF_ERROR(control.Exchange("tcp.listen", {{"port", LocalPort(listener.get())}, {"cookie", cookie}},
                                     local.connect_timeout)
                        .status());
    Deadline deadline = DeadlineAfter(local.connect_timeout);
    int connected = 0;
    while (connected < n) {
      auto fd = AcceptWithDeadline(listener.get(), deadline, local.cancel);
      if (!fd.ok()) {
        return fd.status().WithContext(fmt::format("{} during tcp.connect: {} of {} data connections arrived",
                                                   control.PeerName(), connected, n));
      }
      char hello[kHelloSize];
      Deadline hello_deadline = std::min(deadline, DeadlineAfter(std::chrono::milliseconds(2000)));
      if (!RecvAllDeadline(fd->get(), hello, sizeof hello, hello_deadline, local.cancel, "data connection hello")
               .ok() ||
          std::memcmp(hello, kHelloMagic, 4) != 0 || !net::ConstantTimeEqual(std::string_view(hello + 8, 32), cookie)) {
        LOG_WARN("perf", "dropped a data connection from {} with a bad hello", PeerName(fd->get()));
        continue;  // a stranger on the port does not end the test
      }
      uint32_t index = 0;
      for (int i = 0; i < 4; ++i) index = (index << 8) | static_cast<unsigned char>(hello[4 + i]);
      if (index >= static_cast<uint32_t>(n) || socks_[index].valid()) {
        LOG_WARN("perf", "dropped a data connection from {} with a bad index {}", PeerName(fd->get()), index);
        continue;
      }
      socks_[index] = std::move(*fd);
      ++connected;
    }
  } else {
    ASSIGN_OR_RETURN(nlohmann::json listen,
                     control.Exchange("tcp.listen", nlohmann::json::object(), local.connect_timeout));
    int port = model::json_fields::NumberOr(listen, "port", 0);
    std::string cookie = listen.value("cookie", "");
    if (port <= 0 || port > 65535 || cookie.size() != 32) {
      return DataLossError(fmt::format("{} during tcp.listen: bad data port or cookie", control.PeerName()));
    }
    std::vector<UniqueFd> bound;
    if (local.trace_hops > 0) TracePaths(port, &bound);
    for (int i = 0; i < n; ++i) {
      auto fd = bound.empty()
                    ? ConnectTcp(local.control_peer_addr, port, local.connect_timeout)
                    : ConnectFlowSocket(std::move(bound[static_cast<size_t>(i)]), flow_peer_, local.connect_timeout,
                                        fmt::format("connect to {}:{}", local.control_peer_addr, port));
      if (!fd.ok()) return fd.status().WithContext(fmt::format("data connection {} of {}", i + 1, n));
      std::string hello = Hello(static_cast<uint32_t>(i), cookie);
      RETURN_IF_ERROR(SendAllDeadline(fd->get(), hello.data(), hello.size(), DeadlineAfter(local.connect_timeout),
                                      local.cancel, "data connection hello"));
      socks_[static_cast<size_t>(i)] = std::move(*fd);
    }
  }
  for (auto& s : socks_) RETURN_IF_ERROR(ConfigureSocket(s.get()));
  return control.Barrier("tcp.connected", local.connect_timeout);
}

Result<SideMeasurement> TcpTransport::RunSize(uint64_t size, ControlChannel& control) {
  RunContext ctx{params_, local_, socks_, cpus_, cuda_, control.PeerName()};
  Result<SideMeasurement> m = params_.test == model::PerfTest::kLat  ? RunLatency(ctx, size, control)
                              : params_.test == model::PerfTest::kKv ? RunKv(ctx, size, control)
                                                                     : RunBandwidth(ctx, size, control);
  if (!m.ok()) {
    // The connections are in an unknown state now (partial messages); the
    // test ends here, so close them rather than resynchronise.
    for (auto& s : socks_) ::shutdown(s.get(), SHUT_RDWR);
  }
  return m;
}

model::PerfEndpoint TcpTransport::Describe() const {
  model::PerfEndpoint e;
  e.role = std::string(RoleName(local_.role));
  e.device = place_.netdev;
  e.mtu = place_.mtu;
  e.memory = local_.spec != nullptr ? local_.spec->mem.ToString() : "host";
  e.registration = cuda_ != nullptr ? "staged" : "host";
  e.gpudirect = false;
  e.numa_node = bound_node_;
  e.numa_policy = local_.spec != nullptr ? local_.spec->numa.ToString() : "auto";
  e.cpus = cpus_;
  e.notes = notes_;
  e.flows = paths_;
  return e;
}

}  // namespace tcp

Result<std::unique_ptr<Transport>> CreateTcpTransport() {
  return std::unique_ptr<Transport>(std::make_unique<tcp::TcpTransport>());
}

}  // namespace fabcheck::perf
