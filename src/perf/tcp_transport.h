// The TCP transport of `fabcheck perf`: plain sockets, one thread per stream
// and direction, data connections separate from the control connection.
//
// Per stream: one connection (two with --bidir, one per direction, so the
// receiver's end-of-size acknowledgement never mixes with data). A size ends
// when every receiver has all bytes the sender announced and acknowledged
// them with one byte; the sender's clock stops at that acknowledgement, so
// bandwidth counts delivered bytes, not bytes queued in socket buffers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/status.h"
#include "perf/flow_path.h"
#include "perf/tcp_internal.h"
#include "perf/transport.h"

namespace fabcheck::dl {
struct CudaApi;
}

namespace fabcheck::perf {

Result<std::unique_ptr<Transport>> CreateTcpTransport();

namespace tcp {

// Receivers read up to this much per call when they need not look at messages.
inline constexpr uint64_t kRecvChunk = 256 * 1024;

class TcpTransport final : public Transport {
 public:
  TransportKind kind() const override { return TransportKind::kTcp; }
  Capabilities GetCapabilities() const override;
  uint64_t MemoryNeeded(const TestParams& params, Role role) const override;
  Status Setup(const TestParams& params, const LocalContext& local, ControlChannel& control) override;
  Result<SideMeasurement> RunSize(uint64_t size, ControlChannel& control) override;
  model::PerfEndpoint Describe() const override;

 private:
  Status SetupPlacement();
  Status ConfigureSocket(int fd) const;
  int Connections() const;
  // Client with LocalContext::trace_hops: binds one socket per connection and
  // traces each one's path before any connects (perf/flow_path.h).
  // Never fails the test: what went wrong becomes a note.
  void TracePaths(int port, std::vector<UniqueFd>* bound);

  TestParams params_;
  LocalContext local_;
  std::vector<UniqueFd> socks_;
  NetPlacement place_;
  std::vector<int> cpus_;
  std::optional<int> bound_node_;
  std::vector<std::string> notes_;
  std::vector<model::PerfFlowPath> paths_;
  FlowPeer flow_peer_;
  const dl::CudaApi* cuda_ = nullptr;  // set for --mem cuda:N (staged)
};

}  // namespace tcp
}  // namespace fabcheck::perf
