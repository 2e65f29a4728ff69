// The agent control API: request bodies a client (or anyone) posts, answers
// a coordinator reads from agents, and host:port lists.
#include <cstdint>
#include <string>

#include "base/json_text.h"
#include "control/api.h"

using namespace fabcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  auto request = control::ParsePeerTestRequest(body);
  if (request.ok()) (void)ToJsonText(nlohmann::json(*request));
  (void)control::ParseHostPort(body, 18530);
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    (void)j.get<control::AgentInfo>();
  } catch (const nlohmann::json::exception&) {
  }
  try {
    (void)ToJsonText(nlohmann::json(j.get<control::PeerTestResponse>()));
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
