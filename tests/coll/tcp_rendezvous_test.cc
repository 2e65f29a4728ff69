// The TCP rendezvous: the board's validation without networking, then the
// exchange over loopback between threads (the multi-process and namespace
// runs are in rendezvous_e2e_test.cc). No CUDA or NCCL involved.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "coll/coll.h"
#include "coll/tcp_rendezvous.h"
#include "../fixtures/hostile_http.h"
#include "../fixtures/in_child.h"
#include "../net/test_certs.h"

namespace fabcheck::coll {
namespace {

using nlohmann::json;

dl::ncclUniqueId TestId(char fill) {
  dl::ncclUniqueId id{};
  for (size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>(fill + i);
  return id;
}

std::string JoinBody(int rank, int size, const std::string& host, const dl::ncclUniqueId* id = nullptr) {
  json j = {{"rank", rank}, {"size", size}, {"host", host}};
  if (id) j["nccl_id"] = UniqueIdToHex(*id);
  return j.dump();
}

TEST(UniqueIdHex, RoundTripsAndRejectsGarbage) {
  auto id = TestId(char(0xf0));
  std::string hex = UniqueIdToHex(id);
  EXPECT_EQ(hex.size(), 256u);
  auto back = UniqueIdFromHex(hex);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::memcmp(back->internal, id.internal, sizeof(id.internal)), 0);
  EXPECT_FALSE(UniqueIdFromHex(hex.substr(2)).ok());
  hex[10] = 'g';
  EXPECT_FALSE(UniqueIdFromHex(hex).ok());
}

TEST(LocalRankOf, PositionAmongTheRanksOfTheSameHost) {
  std::vector<std::string> hosts = {"a", "a", "b", "b", "a"};
  int size = 0;
  EXPECT_EQ(LocalRankOf(hosts, 0, &size), 0);
  EXPECT_EQ(size, 3);
  EXPECT_EQ(LocalRankOf(hosts, 4, &size), 2);
  EXPECT_EQ(LocalRankOf(hosts, 3, &size), 1);
  EXPECT_EQ(size, 2);
}

TEST(RendezvousBoard, ReadyOnceEveryRankAndTheIdAreThere) {
  RendezvousBoard board(3);
  auto id = TestId(1);
  EXPECT_EQ(board.Meeting()["state"], "waiting");
  ASSERT_TRUE(board.Join(JoinBody(2, 3, "nodeB"), "10.0.0.2").ok());
  ASSERT_TRUE(board.Join(JoinBody(1, 3, "nodeA"), "10.0.0.1").ok());
  EXPECT_EQ(board.MissingJoins(), std::vector<int>{0});
  EXPECT_EQ(board.Meeting()["missing"], json::array({0}));
  ASSERT_TRUE(board.Join(JoinBody(0, 3, "nodeA", &id), "10.0.0.1").ok());
  // A retry from the same process is harmless.
  ASSERT_TRUE(board.Join(JoinBody(2, 3, "nodeB"), "10.0.0.2").ok());
  json m = board.Meeting();
  EXPECT_EQ(m["state"], "ready");
  EXPECT_EQ(m["nccl_id"], UniqueIdToHex(id));
  EXPECT_EQ(m["hosts"], json::array({"nodeA", "nodeA", "nodeB"}));
}

TEST(RendezvousBoard, RejectsMalformedAndImpossibleJoinsNamingTheSender) {
  RendezvousBoard board(4);
  auto garbage = board.Join("\x01\x02 hello", "10.0.0.9");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.message().find("10.0.0.9"), std::string::npos);
  EXPECT_NE(garbage.message().find("not a JSON object"), std::string::npos);
  auto no_rank = board.Join(R"({"size":4,"host":"x"})", "10.0.0.9");
  EXPECT_NE(no_rank.message().find("without a valid \"rank\""), std::string::npos);
  auto too_big = board.Join(JoinBody(4, 4, "x"), "10.0.0.8");
  EXPECT_NE(too_big.message().find("rank 4 (10.0.0.8) is not below the world size 4"), std::string::npos);
  auto size = board.Join(JoinBody(2, 8, "x"), "10.0.0.7");
  EXPECT_NE(size.message().find("rank 2 (10.0.0.7) was started for a world of 8 ranks, but this rendezvous expects 4"),
            std::string::npos);
  auto no_id = board.Join(JoinBody(0, 4, "x"), "10.0.0.1");
  EXPECT_NE(no_id.message().find("rank 0 (10.0.0.1) joined without its \"nccl_id\""), std::string::npos);
  auto bad_id = board.Join(R"({"rank":0,"size":4,"host":"x","nccl_id":"abc"})", "10.0.0.1");
  EXPECT_NE(bad_id.message().find("malformed nccl_id"), std::string::npos);
  ASSERT_TRUE(board.Join(JoinBody(3, 4, "nodeA"), "10.0.0.3").ok());
  auto twice = board.Join(JoinBody(3, 4, "nodeB"), "10.0.0.4");
  EXPECT_EQ(twice.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(twice.message().find("rank 3 joined twice: from nodeA (10.0.0.3) and from nodeB (10.0.0.4)"),
            std::string::npos);
  // Every rejection is remembered for the timeout message.
  EXPECT_EQ(board.problems().size(), 7u);
  EXPECT_EQ(board.Meeting()["problems"].size(), 7u);
  EXPECT_EQ(board.Meeting()["state"], "waiting");
}

TEST(RendezvousBoard, ARankFailingBeforeTheMeetingStopsTheOthers) {
  RendezvousBoard board(2);
  auto id = TestId(2);
  ASSERT_TRUE(board.Join(JoinBody(0, 2, "a", &id), "10.0.0.1").ok());
  RankOutcome failed;
  failed.rank = 1;
  failed.host = "b";
  failed.error = "no GPU";
  ASSERT_TRUE(board.AddResult(OutcomeToJson(failed).dump(), "10.0.0.2").ok());
  json m = board.Meeting();
  EXPECT_EQ(m["state"], "failed");
  EXPECT_EQ(m["failure"], "rank 1 (b) failed before the ranks met: no GPU");
  EXPECT_FALSE(board.AddResult("[1,2]", "10.0.0.3").ok());
  EXPECT_FALSE(board.AddResult(R"({"rank":9})", "10.0.0.3").ok());
  EXPECT_FALSE(board.AddResult(R"({"rank":1,"host":5})", "10.0.0.3").ok());
  EXPECT_EQ(board.MissingResults(), std::vector<int>{0});
}

TEST(MergeRankOutcomes, ListsEveryRankAndFailsTheOnesThatDidNotRun) {
  model::CollReport report;
  report.ranks.push_back({0, "nodeA", 0, "0000:00:06.0", "H200"});
  std::vector<RankOutcome> outcomes(4);
  for (int r = 0; r < 4; ++r) {
    outcomes[r].rank = r;
    outcomes[r].host = r < 2 ? "nodeA" : "nodeB";
    outcomes[r].cuda_device = r % 2;
    outcomes[r].name = "H200";
  }
  outcomes[3].error = "rank 3 never reported its result within 5 s";
  MergeRankOutcomes(outcomes, &report);
  ASSERT_EQ(report.ranks.size(), 3u);
  EXPECT_EQ(report.ranks[0].pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(report.ranks[2].rank, 2);
  EXPECT_EQ(report.ranks[2].host, "nodeB");
  EXPECT_EQ(report.ranks[2].cuda_device, 0);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "coll.rank");
  EXPECT_EQ(report.findings[0].severity, model::Severity::kFail);
  EXPECT_EQ(report.findings[0].object, "rank 3 on nodeB");
}

// ---- over loopback, ranks as threads ----

int PortOf(const RankExchange& r) {
  std::string d = r.Describe();
  return std::stoi(d.substr(d.rfind(':') + 1));
}

RankExchangeConfig Config(int rank, int size, double timeout, std::optional<std::string> token = std::nullopt) {
  RankExchangeConfig c;
  c.rank = rank;
  c.world_size = size;
  c.timeout_seconds = timeout;
  c.token = std::move(token);
  return c;
}

TEST(TcpRankExchange, RanksMeetGetRankZerosIdAndReportBack) {
  auto r0 = MakeRankExchange("tcp:127.0.0.1:0", Config(0, 3, 10, "secret"));
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(PortOf(**r0));
  auto id = TestId(7);
  std::vector<Result<Meeting>> got(3, InternalError("not run"));
  std::vector<std::thread> threads;
  for (int r = 1; r < 3; ++r) {
    threads.emplace_back([&, r] {
      auto rv = MakeRankExchange(spec, Config(r, 3, 10, "secret"));
      if (!rv.ok()) return void(got[r] = rv.status());
      got[r] = (*rv)->Exchange(r, r == 1 ? "nodeA" : "nodeB", dl::ncclUniqueId{});
      RankOutcome o;
      o.rank = r;
      o.host = r == 1 ? "nodeA" : "nodeB";
      o.cuda_device = r;
      if (got[r].ok()) (void)(*rv)->Report(o);
    });
  }
  got[0] = (*r0)->Exchange(0, "nodeA", id);
  RankOutcome own;
  own.host = "nodeA";
  auto all = (*r0)->Gather(own);
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(got[r].ok()) << "rank " << r << ": " << got[r].status().ToString();
    EXPECT_EQ(std::memcmp(got[r]->id.internal, id.internal, sizeof(id.internal)), 0);
  }
  EXPECT_EQ(got[1]->local_rank, 1);  // second rank on nodeA
  EXPECT_EQ(got[1]->local_size, 2);
  EXPECT_EQ(got[2]->local_rank, 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  for (const auto& o : *all) EXPECT_EQ(o.error, "") << o.rank;
  EXPECT_EQ((*all)[2].host, "nodeB");
  EXPECT_EQ((*all)[2].cuda_device, 2);
}

// Rank 0's board binds the address it is given (an agent's own), not every
// address: another local address's same port stays free.
TEST(TcpRankExchange, RankZeroServesOnlyOnTheAddressItIsGiven) {
  RankExchangeConfig c = Config(0, 2, 5, "secret-secret");
  c.bind = "127.0.0.1";
  auto r0 = MakeRankExchange("tcp:127.0.0.1:0", c);
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  const int port = PortOf(**r0);
  int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
  const int bound = ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int err = errno;
  ::close(probe);
  EXPECT_EQ(bound, 0) << "127.0.0.2:" << port << " is taken: the board listens on every address (" << std::strerror(err)
                      << ")";
}

// An impostor at the rendezvous address streams an endless answer: the rank
// used to read it until bad_alloc ended the process; now the board's answer
// has a size limit and the rank's exchange fails, saying so.
TEST(TcpRankExchange, AnEndlessAnswerFromTheBoardIsAnErrorNotACrash) {
  test_support::EndlessHttpServer impostor(test_support::EndlessHttpServer::Shape::kFlood);
  auto outcome = test_support::RunInChild(1ll << 30, [&] {
    auto rank = MakeRankExchange("tcp:127.0.0.1:" + std::to_string(impostor.port()), Config(1, 2, 20));
    if (!rank.ok()) return 2;
    auto met = (*rank)->Exchange(1, "nodeA", dl::ncclUniqueId{});
    if (met.ok()) return 3;
    if (met.status().code() != StatusCode::kResourceExhausted) return 4;
    return met.status().message().find("larger than") != std::string::npos ? 0 : 5;
  });
  EXPECT_EQ(outcome.code, 0) << outcome.Describe() << " (3: met; 4: another error; 5: message)";
}

TEST(TcpRankExchange, AMissingRankIsNamedAfterTheTimeout) {
  auto server = RendezvousServer::Start("127.0.0.1", 0, 3, std::nullopt);
  ASSERT_TRUE(server.ok());
  const std::string spec = "join:127.0.0.1:" + std::to_string((*server)->port());
  auto r1 = MakeRankExchange(spec, Config(1, 3, 10));
  ASSERT_TRUE(r1.ok());
  std::thread other([&] { (void)(*r1)->Exchange(1, "h", dl::ncclUniqueId{}); });
  auto r0 = MakeRankExchange(spec, Config(0, 3, 0.8));
  ASSERT_TRUE(r0.ok());
  auto got = (*r0)->Exchange(0, "h", TestId(3));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(got.status().message().find("2 of 3 ranks arrived"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("missing rank 2"), std::string::npos) << got.status().message();
  // Rank 1 stops waiting once rank 0 says it failed.
  RankOutcome failed;
  failed.error = "rendezvous timed out";
  ASSERT_TRUE((*r0)->Report(failed).ok());
  other.join();
}

TEST(TcpRankExchange, RanksMeetOverTlsAndOthersAreToldWhy) {
  const auto& certs = net::testing::Certs::Get();
  if (!certs.ok) GTEST_SKIP() << certs.skip_reason;
  auto with_tls = [&](int rank, const std::string& cert, const std::string& ca) {
    RankExchangeConfig c = Config(rank, 2, 10, "secret-secret");
    c.tls = net::TlsFiles{certs.Path(cert + ".crt"), certs.Path(cert + ".key"), certs.Path(ca)};
    return c;
  };
  // Rank 0 is dialled as localhost, the name its certificate carries.
  auto r0 = MakeRankExchange("tcp:localhost:0", with_tls(0, "server", "ca.crt"));
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  const std::string spec = "tcp:localhost:" + std::to_string(PortOf(**r0));
  auto id = TestId(9);
  Result<Meeting> got1 = InternalError("not run");
  std::thread rank1([&] {
    auto rv = MakeRankExchange(spec, with_tls(1, "client", "ca.crt"));
    if (!rv.ok()) return void(got1 = rv.status());
    got1 = (*rv)->Exchange(1, "nodeB", dl::ncclUniqueId{});
    RankOutcome o;
    o.rank = 1;
    o.host = "nodeB";
    if (got1.ok()) (void)(*rv)->Report(o);
  });
  auto got0 = (*r0)->Exchange(0, "nodeA", id);
  RankOutcome own;
  own.host = "nodeA";
  auto all = (*r0)->Gather(own);
  rank1.join();
  ASSERT_TRUE(got0.ok()) << got0.status().ToString();
  ASSERT_TRUE(got1.ok()) << got1.status().ToString();
  EXPECT_EQ(std::memcmp(got1->id.internal, id.internal, sizeof(id.internal)), 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 2u);

  // Against a TLS rank 0: a plain rank is told to use HTTPS, and a rank that
  // does not trust rank 0's CA is told which file to check; neither waits out its timeout.
  auto server_tls = net::TlsContext::ForServer(with_tls(0, "server", "ca.crt").tls.value());
  ASSERT_TRUE(server_tls.ok());
  auto server = RendezvousServer::Start("127.0.0.1", 0, 2, std::string("secret-secret"), *server_tls);
  ASSERT_TRUE(server.ok());
  const std::string join = "join:localhost:" + std::to_string((*server)->port());
  auto t0 = std::chrono::steady_clock::now();
  auto plain = MakeRankExchange(join, Config(1, 2, 8, "secret-secret"));
  ASSERT_TRUE(plain.ok());
  auto refused = (*plain)->Exchange(1, "h", dl::ncclUniqueId{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("HTTPS"), std::string::npos) << refused.status().message();
  auto distrustful = MakeRankExchange(join, with_tls(1, "client", "other-ca.crt"));
  ASSERT_TRUE(distrustful.ok());
  auto unverified = (*distrustful)->Exchange(1, "h", dl::ncclUniqueId{});
  ASSERT_FALSE(unverified.ok());
  EXPECT_NE(unverified.status().message().find("does not verify against --tls-ca " + certs.Path("other-ca.crt")),
            std::string::npos)
      << unverified.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
  // A file rendezvous has nothing to secure.
  EXPECT_EQ(MakeRankExchange("file:/tmp/x", with_tls(1, "client", "ca.crt")).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TcpRankExchange, WrongTokenIsRefusedAtOnce) {
  auto server = RendezvousServer::Start("127.0.0.1", 0, 2, std::string("right"));
  ASSERT_TRUE(server.ok());
  auto r1 = MakeRankExchange("join:127.0.0.1:" + std::to_string((*server)->port()), Config(1, 2, 30, "wrong"));
  ASSERT_TRUE(r1.ok());
  auto got = (*r1)->Exchange(1, "h", dl::ncclUniqueId{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(got.status().message().find("refused our token"), std::string::npos);
}

TEST(TcpRankExchange, GarbageOnTheWireIsNamedAndDoesNotStopTheRun) {
  auto server = RendezvousServer::Start("127.0.0.1", 0, 2, std::nullopt);
  ASSERT_TRUE(server.ok());
  const int port = (*server)->port();
  // Raw bytes that are not HTTP at all.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const char junk[] = "\x16\x03\x01\x02\x00 not http\r\n\r\n";
  ASSERT_GT(::write(fd, junk, sizeof(junk)), 0);
  char buffer[256];
  (void)::read(fd, buffer, sizeof(buffer));  // httplib answers 400 or closes
  ::close(fd);
  // HTTP with a body that is not a join.
  httplib::Client http("127.0.0.1", port);
  auto res = http.Post("/v1/coll/join", "{{{ not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("not a JSON object"), std::string::npos);
  // The real ranks still meet.
  const std::string spec = "join:127.0.0.1:" + std::to_string(port);
  Result<Meeting> got1 = InternalError("not run");
  std::thread t([&] { got1 = (*MakeRankExchange(spec, Config(1, 2, 10)))->Exchange(1, "h", dl::ncclUniqueId{}); });
  auto got0 = (*MakeRankExchange(spec, Config(0, 2, 10)))->Exchange(0, "h", TestId(4));
  t.join();
  ASSERT_TRUE(got0.ok()) << got0.status().ToString();
  ASSERT_TRUE(got1.ok()) << got1.status().ToString();
  auto problems = (*server)->Problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("127.0.0.1 sent a join that is not a JSON object"), std::string::npos);
}

TEST(TcpRankExchange, SomethingElseOnThePortIsNotTakenForARendezvous) {
  httplib::Server other;
  other.Post("/v1/coll/join", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>hello</html>", "text/html");
  });
  int port = other.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread t([&] { other.listen_after_bind(); });
  auto r1 = MakeRankExchange("join:127.0.0.1:" + std::to_string(port), Config(1, 2, 30));
  ASSERT_TRUE(r1.ok());
  auto got = (*r1)->Exchange(1, "h", dl::ncclUniqueId{});
  other.stop();
  t.join();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("not a fabcheck coll rendezvous"), std::string::npos)
      << got.status().message();
}

TEST(TcpRankExchange, NobodyListeningTimesOutNamingTheAddress) {
  auto server = RendezvousServer::Start("127.0.0.1", 0, 2, std::nullopt);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  server->reset();  // the port is now closed
  auto r1 = MakeRankExchange("join:127.0.0.1:" + std::to_string(port), Config(1, 2, 0.5));
  ASSERT_TRUE(r1.ok());
  auto got = (*r1)->Exchange(1, "h", dl::ncclUniqueId{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(got.status().message().find("rank 1 could not join"), std::string::npos);
  EXPECT_NE(got.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

TEST(MakeRankExchange, ParsesSpecs) {
  EXPECT_FALSE(MakeRankExchange("udp:host:1", Config(1, 2, 1)).ok());
  EXPECT_FALSE(MakeRankExchange("tcp:", Config(1, 2, 1)).ok());
  auto r = MakeRankExchange("tcp:node01", Config(1, 2, 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->Describe(), "tcp:node01:18523");
}

}  // namespace
}  // namespace fabcheck::coll
