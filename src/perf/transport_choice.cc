// perf::ChooseTransport (transport.h): the one place perf reads the node to
// pick a transport, kept out of transport.cc so the protocol code (and its
// fuzzer) needs no sysfs reader.
#include <fmt/format.h>

#include "perf/transport.h"
#include "sys/infiniband.h"

namespace fabcheck::perf {

std::optional<TransportChoice> ChooseTransport(std::string_view name, const sys::SysRoot& root) {
  if (name != "auto") {
    auto kind = ParseTransportKind(name);
    if (!kind) return std::nullopt;
    return TransportChoice{*kind, ""};
  }
  auto devices = sys::infiniband::ListDevices(root);
  if (devices.ok() && !devices->empty()) return TransportChoice{TransportKind::kVerbs, ""};
  return TransportChoice{TransportKind::kTcp,
                         fmt::format("{} has no RDMA device (nothing in {})", root.live() ? "this node" : root.Describe(),
                                     sys::infiniband::kClassDir)};
}

}  // namespace fabcheck::perf
