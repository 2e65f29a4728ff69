// perf control protocol messages as a peer (or anyone reaching the port)
// sends them: frame decoding, then what the server and client read from each
// message type (test parameters, measurements, capabilities, reasons).
#include <cstdint>
#include <string_view>

#include "base/json_text.h"
#include "perf/protocol.h"
#include "perf/tcp_transport.h"
#include "perf/transport.h"

using namespace fabcheck;

// transport.cc (ParseTestParams, ValidateTestParams) also holds the transport
// factory, which refers to the TCP transport and with it most of perf/. No
// transport is created here; this keeps the fuzz build to the parsers.
namespace fabcheck::perf {
Result<std::unique_ptr<Transport>> CreateTcpTransport() {
  return UnimplementedError("the fuzz build has no transports");
}
namespace verbs {
Result<std::unique_ptr<Transport>> CreateVerbsTransport() {
  return UnimplementedError("the fuzz build has no transports");
}
}  // namespace verbs
}  // namespace fabcheck::perf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)perf::DecodeFrameHeader(bytes.substr(0, perf::kFrameHeader), perf::kMaxFrame);
  // The payload alone, framed as it arrives.
  std::string_view payload = bytes;
  std::string frame = "FCP1";
  uint32_t len = static_cast<uint32_t>(payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) frame.push_back(static_cast<char>((len >> shift) & 0xff));
  frame.append(payload);
  for (std::string_view candidate : {bytes, std::string_view(frame)}) {
    auto message = perf::DecodeFrame(candidate, perf::kMaxFrame);
    if (!message.ok()) continue;
    const nlohmann::json& j = *message;
    (void)ToJsonText(j);
    if (j.contains("params")) {
      auto params = perf::ParseTestParams(j["params"]);
      if (params.ok()) (void)perf::ValidateTestParams(*params);
    }
    try {
      if (j.contains("capabilities")) (void)j["capabilities"].get<perf::Capabilities>();
      if (j.contains("measurement")) (void)j["measurement"].get<perf::SideMeasurement>();
    } catch (const nlohmann::json::exception&) {
      // The receivers catch these and report a malformed message.
    }
  }
  return 0;
}
