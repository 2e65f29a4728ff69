// One JSON call and one status table for every fabcheck client and server.
#include "net/json_call.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "net/http_client.h"
#include "net/http_service.h"

namespace fabcheck::net {
namespace {

TEST(JsonCallTest, OneTableBothWays) {
  // The statuses the issue found mapped three ways: 401 and 409.
  EXPECT_EQ(StatusCodeForHttp(401), StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeForHttp(403), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeForHttp(409), StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusCodeForHttp(400), StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForHttp(404), StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeForHttp(429), StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusCodeForHttp(413), StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusCodeForHttp(501), StatusCode::kUnimplemented);
  EXPECT_EQ(StatusCodeForHttp(503), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForHttp(504), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(StatusCodeForHttp(500), StatusCode::kInternal);
  EXPECT_EQ(StatusCodeForHttp(302), StatusCode::kUnknown);
  // What a server sends comes back as the code it started from.
  for (StatusCode code : {StatusCode::kInvalidArgument, StatusCode::kUnauthenticated, StatusCode::kPermissionDenied,
                          StatusCode::kNotFound, StatusCode::kFailedPrecondition, StatusCode::kResourceExhausted,
                          StatusCode::kUnimplemented, StatusCode::kUnavailable, StatusCode::kDeadlineExceeded,
                          StatusCode::kInternal}) {
    EXPECT_EQ(StatusCodeForHttp(HttpStatusFor(code)), code) << StatusCodeName(code);
  }
  EXPECT_EQ(HttpStatusFor(StatusCode::kAborted), 409);
}

TEST(JsonCallTest, AnswersOfAServerOnLoopback) {
  HttpServiceOptions options;
  options.bind = "127.0.0.1";
  options.token = std::string("right-token");
  options.public_paths = {"/open"};
  auto service = HttpService::Start(options, [](httplib::Server& s) {
    s.Get("/open", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"ok":true})", "application/json");
    });
    s.Post("/busy", [](const httplib::Request&, httplib::Response& res) {
      res.status = HttpStatusFor(StatusCode::kFailedPrecondition);
      res.set_content(R"({"error":"agent busy"})", "application/json");
    });
    s.Get("/text", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("not json \x1b[31m", "text/plain");
    });
  });
  ASSERT_TRUE(service.ok()) << service.status().message();
  const int port = (*service)->port();
  auto client = [&](std::optional<std::string> token) {
    httplib::Client http = MakeHttpClient("127.0.0.1", port, nullptr);
    http.set_connection_timeout(std::chrono::seconds(2));
    http.set_read_timeout(std::chrono::seconds(5));
    if (token) http.set_bearer_token_auth(*token);
    return http;
  };
  httplib::Error no_answer = httplib::Error::Unknown;
  {
    auto http = client(std::nullopt);
    auto ok = CallJson(http, {"GET", "/open", "", "test server"}, &no_answer);
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    EXPECT_EQ((*ok)["ok"], true);
    EXPECT_EQ(no_answer, httplib::Error::Success);
  }
  {
    auto http = client(std::string("wrong-token"));
    auto refused = CallJson(http, {"POST", "/busy", "{}", "test server"}, &no_answer);
    EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << refused.status().message();
    EXPECT_EQ(no_answer, httplib::Error::Success);
  }
  {
    auto http = client(std::string("right-token"));
    auto busy = CallJson(http, {"POST", "/busy", "{}", "test server"});
    EXPECT_EQ(busy.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(busy.status().message().find("test server: HTTP 409: agent busy"), std::string::npos)
        << busy.status().message();
    auto text = CallJson(http, {"GET", "/text", "", "test server"});
    EXPECT_EQ(text.status().code(), StatusCode::kDataLoss);
    auto missing = CallJson(http, {"GET", "/nowhere", "", "test server"});
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  }
  (void)(*service)->Stop();
  auto http = client(std::nullopt);
  auto gone = CallJson(http, {"GET", "/open", "", "test server", "(is it running?)"}, &no_answer);
  EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(no_answer, httplib::Error::Success);  // nothing answered: a caller may retry
  EXPECT_NE(gone.status().message().find("(is it running?)"), std::string::npos) << gone.status().message();
}

}  // namespace
}  // namespace fabcheck::net
