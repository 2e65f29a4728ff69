// The TCP transport of `fabcheck perf`: plain sockets, one thread per stream,
// data connections separate from the control connection.
#pragma once

#include <memory>

#include "base/status.h"
#include "perf/transport.h"

namespace fabcheck::perf {

Result<std::unique_ptr<Transport>> CreateTcpTransport();

}  // namespace fabcheck::perf
