// HTTPS on the HTTP service: certificates made with the openssl command for
// each run (a CA, a server certificate for 127.0.0.1 and localhost, a client
// certificate, and a second CA nobody trusts), then what users and attackers
// do: a verified request, a plain HTTP client, the wrong CA, mutual TLS with
// and without a client certificate, a handshake that never finishes, garbage
// in place of a ClientHello, and TlsStream for request/response channels.
#include "net/tls.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/fd.h"
#include "net/cert_dates.h"
#include "net/http_client.h"
#include "net/http_service.h"
#include "test_certs.h"

namespace fabcheck::net {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::Certs;

UniqueFd Connect(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) fd.Reset();
  return fd;
}

class TlsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Certs::Get().ok) GTEST_SKIP() << Certs::Get().skip_reason;
  }
  const Certs& c() const { return Certs::Get(); }

  void Start(bool mutual, HttpLimits limits = {}, const std::string& cert = "server.crt") {
    TlsFiles files{c().Path(cert), c().Path("server.key"), mutual ? c().Path("ca.crt") : ""};
    auto tls = TlsContext::ForServer(files);
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    HttpServiceOptions o;
    o.name = "agent";
    o.bind = "127.0.0.1";
    o.tls = *tls;
    o.limits = limits;
    auto s = HttpService::Start(o, [](httplib::Server& http) {
      http.Get("/v1/health", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"status\":\"ok\"}", "application/json");
      });
      http.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
        res.set_content(req.body, "text/plain");
      });
    });
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    service_ = std::move(s).value();
  }

  httplib::Client Client(const std::string& ca, const std::string& cert = "", const std::string& key = "") {
    httplib::Client client("https://127.0.0.1:" + std::to_string(service_->port()), cert, key);
    client.set_ca_cert_path(ca.c_str());
    client.enable_server_certificate_verification(true);
    client.set_connection_timeout(2s);
    client.set_read_timeout(2s);
    return client;
  }

  std::unique_ptr<HttpService> service_;
};

TEST_F(TlsServiceTest, VerifiedClientIsServedAndKeepAliveAndBodiesWork) {
  Start(/*mutual=*/false);
  auto client = Client(c().Path("ca.crt"));
  client.set_keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    auto res = client.Get("/v1/health");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->body, "{\"status\":\"ok\"}");
  }
  std::string big(300 * 1024, 'x');  // several TLS records
  auto echo = client.Post("/echo", big, "text/plain");
  ASSERT_TRUE(echo) << httplib::to_string(echo.error());
  EXPECT_EQ(echo->body.size(), big.size());
  EXPECT_EQ(service_->stats().tls_failed, 0u);
}

TEST_F(TlsServiceTest, PlainHttpClientIsToldToUseHttps) {
  Start(false);
  httplib::Client plain("127.0.0.1", service_->port());
  plain.set_read_timeout(2s);
  auto res = plain.Get("/v1/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("speaks HTTPS only: use https://127.0.0.1:" + std::to_string(service_->port())),
            std::string::npos)
      << res->body;
  EXPECT_EQ(service_->stats().tls_failed, 1u);
}

TEST_F(TlsServiceTest, ClientTrustingAnotherCaRefusesTheServer) {
  Start(false);
  auto client = Client(c().Path("other-ca.crt"));
  auto res = client.Get("/v1/health");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::SSLServerVerification);
}

// An agent whose certificate expired used to serve it without a word, and
// its clients said only "does not verify".
TEST_F(TlsServiceTest, AnExpiredCertificateIsServedWithAWarningAndClientsSayExpired) {
  // What the server logs when it loads it (it still serves it: it may be being renewed).
  EXPECT_NE(CertificateDateProblem(c().Path("expired.crt")).find("EXPIRED"), std::string::npos)
      << CertificateDateProblem(c().Path("expired.crt"));
  EXPECT_EQ(CertificateDateProblem(c().Path("server.crt")), "");
  auto tls = TlsContext::ForServer({c().Path("expired.crt"), c().Path("server.key"), ""});
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();

  Start(false, {}, "expired.crt");
  TlsFiles client_files{"", "", c().Path("ca.crt")};
  auto http = MakeHttpClient("127.0.0.1", service_->port(), &client_files);
  http.set_connection_timeout(2s);
  auto res = http.Get("/v1/health");
  ASSERT_FALSE(res);
  const std::string text =
      HttpErrorText(res.error(), "agent 127.0.0.1", &client_files, "127.0.0.1", http.get_openssl_verify_result());
  EXPECT_NE(text.find("expired"), std::string::npos) << text;
}

TEST_F(TlsServiceTest, MutualTlsNeedsAClientCertificateOfTheCa) {
  Start(/*mutual=*/true);
  auto without = Client(c().Path("ca.crt"));
  EXPECT_FALSE(without.Get("/v1/health"));
  auto stranger = Client(c().Path("ca.crt"), c().Path("stranger.crt"), c().Path("stranger.key"));
  EXPECT_FALSE(stranger.Get("/v1/health"));
  auto member = Client(c().Path("ca.crt"), c().Path("client.crt"), c().Path("client.key"));
  auto res = member.Get("/v1/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_GE(service_->stats().tls_failed, 2u);
}

// A handshake started and never finished holds a descriptor until the
// request deadline, never a worker: a real client is still served at once.
TEST_F(TlsServiceTest, StalledHandshakesAndGarbageDoNotStopTheService) {
  HttpLimits limits;
  limits.request_timeout = 1500ms;
  Start(false, limits);
  std::vector<UniqueFd> stalled;
  for (int i = 0; i < 64; ++i) {
    UniqueFd fd = Connect(service_->port());
    ASSERT_TRUE(fd.valid());
    const char start[] = {0x16, 0x03, 0x01};  // the first bytes of a ClientHello, then nothing
    ASSERT_EQ(::send(fd.get(), start, sizeof(start), MSG_NOSIGNAL), 3);
    stalled.push_back(std::move(fd));
  }
  UniqueFd garbage = Connect(service_->port());
  std::string junk = "\x16\x03\x01\xff\xff" + std::string(4096, '\xAB');
  (void)::send(garbage.get(), junk.data(), junk.size(), MSG_NOSIGNAL);

  auto begin = std::chrono::steady_clock::now();
  auto client = Client(c().Path("ca.crt"));
  auto res = client.Get("/v1/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);

  // After the deadline the stalled connections are closed by the server.
  std::this_thread::sleep_for(2s);
  char byte;
  for (auto& fd : stalled) {
    timeval tv{1, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    // Closed by the server: end of stream or a reset, not our own receive timeout.
    ssize_t n = ::recv(fd.get(), &byte, 1, 0);
    const bool timed_out = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    EXPECT_TRUE(n == 0 || (n < 0 && !timed_out)) << "recv " << n << ": the server left the stalled handshake open";
  }
  EXPECT_GE(service_->stats().tls_failed, 1u);  // the garbage
}

TEST(TlsContextTest, BadFilesNameTheFileAndTheFix) {
  if (!Certs::Get().ok) GTEST_SKIP() << Certs::Get().skip_reason;
  const Certs& c = Certs::Get();
  auto missing = TlsContext::ForServer({"/nonexistent.crt", c.Path("server.key"), ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--tls-cert /nonexistent.crt"), std::string::npos);
  auto mismatch = TlsContext::ForServer({c.Path("server.crt"), c.Path("client.key"), ""});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("is not the key of --tls-cert"), std::string::npos)
      << mismatch.status().message();
  auto not_pem = TlsContext::ForServer({c.Path("make.sh"), c.Path("server.key"), ""});
  ASSERT_FALSE(not_pem.ok());
  EXPECT_NE(not_pem.status().message().find("PEM certificate chain is expected"), std::string::npos)
      << not_pem.status().message();
  auto half = TlsContext::ForServer({c.Path("server.crt"), "", ""});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("--tls-key"), std::string::npos);
  const std::string open_key = c.Path("open.key");
  fs::copy_file(c.Path("server.key"), open_key, fs::copy_options::overwrite_existing);
  fs::permissions(open_key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                fs::perms::others_read);
  auto readable = TlsContext::ForServer({c.Path("server.crt"), open_key, ""});
  ASSERT_FALSE(readable.ok());
  EXPECT_NE(readable.status().message().find("readable by group or others (mode 0644): chmod 600"),
            std::string::npos)
      << readable.status().message();
  auto bad_ca = TlsContext::ForClient({"", "", c.Path("make.sh")});
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_NE(bad_ca.status().message().find("--tls-ca"), std::string::npos);
  EXPECT_TRUE(TlsContext::ForClient({"", "", c.Path("ca.crt")}).ok());
}

TEST(TlsContextTest, PlainHttpIsRecognised) {
  EXPECT_TRUE(LooksLikePlainHttp("GET /v1/health HTTP/1.1"));
  EXPECT_TRUE(LooksLikePlainHttp("POST /v1"));
  EXPECT_FALSE(LooksLikePlainHttp("\x16\x03\x01\x02"));
  EXPECT_FALSE(LooksLikePlainHttp("GE"));
  EXPECT_FALSE(LooksLikePlainHttp(""));
}

// TlsStream: the blocking channel (perf control) over a socket pair: the
// client verifies the server's name, data crosses both ways, the peer's
// close reads as 0, and a server nobody talks to times out.
TEST(TlsStreamTest, HandshakeVerifiesTheNameAndCarriesData) {
  if (!Certs::Get().ok) GTEST_SKIP() << Certs::Get().skip_reason;
  const Certs& c = Certs::Get();
  auto server_ctx = TlsContext::ForServer({c.Path("server.crt"), c.Path("server.key"), ""});
  auto client_ctx = TlsContext::ForClient({"", "", c.Path("ca.crt")});
  ASSERT_TRUE(server_ctx.ok() && client_ctx.ok());
  for (const std::string name : {"127.0.0.1", "localhost", "wrong.example"}) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    UniqueFd a(fds[0]), b(fds[1]);
    Result<std::unique_ptr<TlsStream>> accepted = UnavailableError("not run");
    std::thread server([&] { accepted = TlsStream::Accept(**server_ctx, b.get(), 2000); });
    auto connected = TlsStream::Connect(**client_ctx, a.get(), name, 2000);
    if (name == "wrong.example") {
      ASSERT_FALSE(connected.ok());
      EXPECT_NE(connected.status().message().find("mismatch"), std::string::npos) << connected.status().message();
      a.Reset();
      server.join();
      continue;
    }
    server.join();
    ASSERT_TRUE(connected.ok()) << name << ": " << connected.status().ToString();
    ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
    ASSERT_TRUE((*connected)->Write("hello", 5, 1000).ok());
    char buf[16] = {};
    auto n = (*accepted)->Read(buf, sizeof(buf), 1000);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(std::string(buf, *n), "hello");
    connected->reset();  // close_notify
    auto closed = (*accepted)->Read(buf, sizeof(buf), 1000);
    ASSERT_TRUE(closed.ok()) << closed.status().ToString();
    EXPECT_EQ(*closed, 0u);
  }
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  UniqueFd a(fds[0]), b(fds[1]);
  auto silent = TlsStream::Accept(**server_ctx, b.get(), 300);
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.status().code(), StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace fabcheck::net
