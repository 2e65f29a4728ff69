// TLS as a user sets it up: `fabcheck agent` and `fabcheck exporter` with
// --tls-cert/--tls-key (and --tls-ca for mutual TLS), a coordinator that
// trusts the CA, one that does not, and one that speaks plain HTTP.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <vector>
#include <string>
#include <thread>

#include "../net/test_certs.h"
#include "../telemetry/process_helpers.h"

namespace {

using fabcheck::net::testing::Certs;
using fabcheck::telemetry::testing::BackgroundProcess;
using fabcheck::telemetry::testing::CommandResult;
using fabcheck::telemetry::testing::FreePort;
using fabcheck::telemetry::testing::RunCommand;
using namespace std::chrono_literals;

const std::string kCapture = std::string(FABCHECK_TESTDATA_DIR) + "/captures/dgx-h100-example.tar.gz";

// Waits until the server on `port` completes a TLS handshake and answers `path`.
bool WaitHttps(int port, const std::string& path, const Certs& c, bool mutual) {
  for (int i = 0; i < 100; ++i) {
    httplib::Client client("https://127.0.0.1:" + std::to_string(port), mutual ? c.Path("client.crt") : "",
                           mutual ? c.Path("client.key") : "");
    client.set_ca_cert_path(c.Path("ca.crt").c_str());
    client.enable_server_certificate_verification(true);
    client.set_connection_timeout(1s);
    if (auto res = client.Get(path); res && res->status == 200) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

class TlsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Certs::Get().ok) GTEST_SKIP() << Certs::Get().skip_reason;
  }
  const Certs& c() const { return Certs::Get(); }
  std::string Log(const std::string& name) const { return c().Path(name + ".log"); }
};

TEST_F(TlsCliTest, LadderTalksToAnHttpsAgentOnlyWithTheRightCa) {
  const int port = FreePort();
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({FABCHECK_BINARY, "agent", "--listen", "127.0.0.1:" + std::to_string(port), "--perf-port",
                           "0", "--name", "tls-agent", "--sysroot", kCapture, "--tls-cert", c().Path("server.crt"),
                           "--tls-key", c().Path("server.key")},
                          Log("agent")));
  ASSERT_TRUE(WaitHttps(port, "/v1/health", c(), false)) << RunCommand("cat " + Log("agent")).output;
  int run = 0;
  auto ladder = [&] {
    return std::string(FABCHECK_BINARY) + " ladder --agents 127.0.0.1:" + std::to_string(port) +
           " --rungs L1L2.node --keep-going --out " + c().Path("bundle" + std::to_string(++run)) + " ";
  };

  CommandResult trusted = RunCommand(ladder() + "--tls-ca " + c().Path("ca.crt") + " 2>&1");
  EXPECT_EQ(trusted.exit_code, 0) << trusted.output;
  EXPECT_NE(trusted.output.find("GO: L1L2.node passed"), std::string::npos) << trusted.output;
  EXPECT_EQ(trusted.output.find("HTTPS only"), std::string::npos) << trusted.output;
  EXPECT_EQ(trusted.output.find("certificate"), std::string::npos) << trusted.output;

  CommandResult untrusted = RunCommand(ladder() + "--tls-ca " + c().Path("other-ca.crt") + " 2>&1");
  EXPECT_NE(untrusted.exit_code, 0);
  EXPECT_NE(untrusted.output.find("does not verify against --tls-ca " + c().Path("other-ca.crt")), std::string::npos)
      << untrusted.output;

  CommandResult plain = RunCommand(ladder() + "2>&1");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.output.find("speaks HTTPS only: use https://127.0.0.1:" + std::to_string(port)), std::string::npos)
      << plain.output;

  CommandResult bad_key = RunCommand(std::string(FABCHECK_BINARY) + " agent --listen 127.0.0.1:0 --tls-cert " +
                                     c().Path("server.crt") + " --tls-key " + c().Path("client.key") + " 2>&1");
  EXPECT_EQ(bad_key.exit_code, 64) << bad_key.output;
  EXPECT_NE(bad_key.output.find("is not the key of --tls-cert"), std::string::npos) << bad_key.output;
}

TEST_F(TlsCliTest, ExporterServesMetricsOverMutualTls) {
  const int port = FreePort();
  BackgroundProcess exporter;
  ASSERT_TRUE(exporter.Start({FABCHECK_BINARY, "exporter", "--listen", "127.0.0.1:" + std::to_string(port),
                              "--sysroot", kCapture, "--ethtool", "off", "--kubelet-socket", "none", "--tls-cert",
                              c().Path("server.crt"), "--tls-key", c().Path("server.key"), "--tls-ca",
                              c().Path("ca.crt")},
                             Log("exporter")));
  ASSERT_TRUE(WaitHttps(port, "/healthz", c(), /*mutual=*/true)) << RunCommand("cat " + Log("exporter")).output;
  httplib::Client scraper("https://127.0.0.1:" + std::to_string(port), c().Path("client.crt"), c().Path("client.key"));
  scraper.set_ca_cert_path(c().Path("ca.crt").c_str());
  auto metrics = scraper.Get("/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_NE(metrics->body.find("fabcheck_rdma_port_up"), std::string::npos);
  // Without a client certificate: no handshake, no metrics.
  httplib::Client anonymous("https://127.0.0.1:" + std::to_string(port));
  anonymous.set_ca_cert_path(c().Path("ca.crt").c_str());
  EXPECT_FALSE(anonymous.Get("/metrics"));
}

// The perf control channel: TLS from `perf run` to `perf serve`, a plain
// client told what to pass, and the wrong CA refused.
TEST_F(TlsCliTest, PerfControlChannelOverTls) {
  const int port = FreePort();
  BackgroundProcess server;
  ASSERT_TRUE(server.Start({FABCHECK_BINARY, "perf", "serve", "--bind", "127.0.0.1", "--port", std::to_string(port),
                            "--tls-cert", c().Path("server.crt"), "--tls-key", c().Path("server.key")},
                           Log("perf-serve")));
  const std::string run = std::string(FABCHECK_BINARY) + " perf run 127.0.0.1 --port " + std::to_string(port) +
                          " --transport tcp --duration 200ms --connect-timeout 5 ";
  CommandResult ok;
  for (int i = 0; i < 50; ++i) {  // until the server listens
    ok = RunCommand(run + "--tls-ca " + c().Path("ca.crt") + " --json 2>&1");
    if (ok.exit_code == 0 || ok.output.find("refused") == std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("\"schema\": \"fabcheck.perf/v1\""), std::string::npos) << ok.output;

  CommandResult plain = RunCommand(run + "2>&1");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.output.find("this perf server requires TLS: give the client --tls-ca"), std::string::npos)
      << plain.output;

  CommandResult wrong = RunCommand(run + "--tls-ca " + c().Path("other-ca.crt") + " 2>&1");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("certificate"), std::string::npos) << wrong.output;
}

// Mutual TLS among agents: the sweep's coordinator and both agents present
// certificates of one CA, and the agents' peer tests run their perf channel
// over TLS too (each agent's perf server refuses a plain or anonymous peer).
TEST_F(TlsCliTest, SweepBetweenMutualTlsAgents) {
  std::vector<int> ports;
  std::vector<std::unique_ptr<BackgroundProcess>> agents;
  for (int i = 0; i < 2; ++i) {
    const int port = FreePort();
    ports.push_back(port);
    agents.push_back(std::make_unique<BackgroundProcess>());
    ASSERT_TRUE(agents.back()->Start(
        {FABCHECK_BINARY, "agent", "--listen", "127.0.0.1:" + std::to_string(port), "--perf-port", "0", "--name",
         "a" + std::to_string(i), "--tls-cert", c().Path("server.crt"), "--tls-key", c().Path("server.key"),
         "--tls-ca", c().Path("ca.crt")},
        Log("agent" + std::to_string(i))));
  }
  for (int port : ports) ASSERT_TRUE(WaitHttps(port, "/v1/health", c(), /*mutual=*/true));
  const std::string sweep = std::string(FABCHECK_BINARY) + " sweep --agents 127.0.0.1:" + std::to_string(ports[0]) +
                            ",127.0.0.1:" + std::to_string(ports[1]) +
                            " --duration 200ms --lat-duration 100ms --no-mtu --json --tls-ca " + c().Path("ca.crt") +
                            " ";
  CommandResult result = RunCommand(sweep + "--tls-cert " + c().Path("client.crt") + " --tls-key " +
                                    c().Path("client.key") + " 2>" + Log("sweep-stderr"));
  EXPECT_EQ(result.exit_code, 0) << result.output << RunCommand("cat " + Log("sweep-stderr")).output;
  EXPECT_NE(result.output.find("\"bw_gbps\""), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("requires TLS"), std::string::npos) << result.output;
  // Without a client certificate the agents refuse the coordinator in the handshake.
  CommandResult anonymous = RunCommand(sweep + "2>&1");
  EXPECT_NE(anonymous.exit_code, 0) << anonymous.output;
}

// Ranks of an SPMD launch (two Slurm ranks on one host) over mutual TLS: rank 0
// serves the rendezvous over HTTPS, each rank's agent serves HTTPS, and rank 0
// reaches rank 1's agent at its address, checking the name rank 1 reported.
TEST_F(TlsCliTest, SpmdSweepRanksMeetOverMutualTls) {
  const int port = FreePort();
  const std::string coordinator = "localhost:" + std::to_string(port);
  const std::vector<std::string> tls = {"--tls-cert", c().Path("server.crt"), "--tls-key", c().Path("server.key"),
                                        "--tls-ca", c().Path("ca.crt")};
  std::vector<std::string> rank1 = {"/usr/bin/env", "SLURM_PROCID=1", "SLURM_NTASKS=2", FABCHECK_BINARY, "sweep",
                                    "--coordinator", coordinator, "--listen", "127.0.0.1:0", "--rendezvous-timeout",
                                    "30s"};
  rank1.insert(rank1.end(), tls.begin(), tls.end());
  BackgroundProcess other;
  ASSERT_TRUE(other.Start(rank1, Log("rank1")));
  std::string rank0 = "SLURM_PROCID=0 SLURM_NTASKS=2 " + std::string(FABCHECK_BINARY) + " sweep --coordinator " +
                      coordinator + " --listen 127.0.0.1:0 --rendezvous-timeout 30s --duration 200ms " +
                      "--lat-duration 100ms --no-mtu --json";
  for (const auto& a : tls) rank0 += " " + a;
  CommandResult result = RunCommand(rank0 + " 2>" + Log("rank0-stderr"));
  EXPECT_EQ(result.exit_code, 0) << result.output << RunCommand("cat " + Log("rank0-stderr")).output
                                 << RunCommand("cat " + Log("rank1")).output;
  EXPECT_NE(result.output.find("\"bw_gbps\""), std::string::npos) << result.output;
  // Half of the files is not mutual TLS: refused before anything starts.
  CommandResult half = RunCommand("SLURM_PROCID=1 SLURM_NTASKS=2 " + std::string(FABCHECK_BINARY) +
                                  " sweep --coordinator " + coordinator + " --tls-ca " + c().Path("ca.crt") + " 2>&1");
  EXPECT_EQ(half.exit_code, 64) << half.output;
  EXPECT_NE(half.output.find("mutual"), std::string::npos) << half.output;
}

}  // namespace
