// A coordinator reading an impostor agent: an endless answer used to be read
// until the coordinator ran out of memory (bad_alloc, abort) and one sent a
// byte at a time kept it waiting forever (no read ever timed out). Now each
// route's answer has a size cap and the whole call a deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "../fixtures/hostile_http.h"
#include "../fixtures/in_child.h"
#include "control/budgets.h"
#include "control/client.h"

namespace fabcheck::control {
namespace {

using namespace std::chrono_literals;
using test_support::EndlessHttpServer;

ClientOptions Options() {
  ClientOptions o;
  o.token = "a-cluster-token";
  o.connect_timeout = 1s;
  o.read_timeout = 2s;
  return o;
}

TEST(AgentClientBounds, AnEndlessAnswerEndsTheCallNotTheCoordinator) {
  EndlessHttpServer impostor(EndlessHttpServer::Shape::kFlood);
  auto outcome = test_support::RunInChild(1ll << 30, [&] {
    AgentClient client({"127.0.0.1", impostor.port()}, Options());
    auto start = std::chrono::steady_clock::now();
    auto info = client.Info();
    if (info.ok()) return 3;
    if (info.status().code() != StatusCode::kResourceExhausted) return 4;
    if (info.status().message().find("larger than") == std::string::npos) return 5;
    return std::chrono::steady_clock::now() - start < 10s ? 0 : 6;
  });
  EXPECT_EQ(outcome.code, 0) << outcome.Describe() << " (3: ok; 4: other error; 5: message; 6: too slow)";
}

TEST(AgentClientBounds, AnAnswerDeclaringAHugeLengthIsRefusedBeforeItsBody) {
  EndlessHttpServer impostor(EndlessHttpServer::Shape::kHugeLength);
  auto outcome = test_support::RunInChild(1ll << 30, [&] {
    auto node = AgentClient({"127.0.0.1", impostor.port()}, Options()).Node(nlohmann::json::object(), 2s);
    return !node.ok() && node.status().code() == StatusCode::kResourceExhausted ? 0 : 3;
  });
  EXPECT_EQ(outcome.code, 0) << outcome.Describe();
}

TEST(AgentClientBounds, AnAnswerTrickledByteByByteEndsAtTheDeadline) {
  auto impostor = std::make_unique<EndlessHttpServer>(EndlessHttpServer::Shape::kTrickle, 100ms);
  AgentClient client({"127.0.0.1", impostor->port()}, Options());
  auto call = std::async(std::launch::async, [&] { return client.Info(); });
  // connect 1 s x 2 + read 2 s is the call's deadline.
  const bool ended = call.wait_for(15s) == std::future_status::ready;
  if (!ended) impostor.reset();  // closes the connection, so the stuck call returns and the test can end
  ASSERT_TRUE(ended) << "the call was still reading a trickled answer after 15 s";
  auto info = call.get();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kDeadlineExceeded) << info.status().ToString();
}

TEST(AgentClientBounds, EveryRouteHasACap) {
  for (const char* route : {"/v1/health", "/v1/info", "/v1/test", "/v1/counters", "/v1/coll", "/v1/inventory",
                            "/v1/kv", "/v1/node"}) {
    EXPECT_GE(MaxAnswerBytes(route), 1u << 20) << route;
    EXPECT_LE(MaxAnswerBytes(route), 128u << 20) << route;
  }
}

}  // namespace
}  // namespace fabcheck::control
