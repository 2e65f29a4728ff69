#include "perf/tcp_transport.h"

namespace fabcheck::perf {

Result<std::unique_ptr<Transport>> CreateTcpTransport() {
  return UnimplementedError("the tcp transport is not implemented yet");
}

}  // namespace fabcheck::perf
