// The exporter's HTTP serving: gzip done once per collection, content
// negotiation, and what a scraper gets back over a real socket.
#include <gtest/gtest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <vector>

#include "fabric_fixture.h"
#include "telemetry/compression.h"
#include "telemetry/exporter_service.h"
#include "telemetry/http_server.h"

namespace fabcheck::telemetry {
namespace {

namespace fs = std::filesystem;

std::string Gunzip(const std::string& data) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out;
  char buffer[65536];
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  inflateEnd(&stream);
  EXPECT_EQ(rc, Z_STREAM_END) << "not a complete gzip stream";
  return out;
}

TEST(CompressionTest, GzipRoundTrips) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "fabcheck_rdma_port_up{node=\"n\",device=\"mlx5_" + std::to_string(i % 16) + "\"} 1\n";
  }
  auto gzip = GzipCompress(text);
  ASSERT_TRUE(gzip.ok()) << gzip.status().ToString();
  EXPECT_LT(gzip->size(), text.size() / 10);
  EXPECT_EQ(static_cast<unsigned char>((*gzip)[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*gzip)[1]), 0x8b);
  EXPECT_EQ(Gunzip(*gzip), text);
  EXPECT_EQ(Gunzip(*GzipCompress("")), "");
}

TEST(CompressionTest, AcceptEncodingNegotiation) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("br, gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip(" GZIP "));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.0, br"));
  EXPECT_FALSE(AcceptsGzip("gzipx"));
}

class ServingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-serving-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fixtures::WriteFabric(dir_.string(), fixtures::GpuNode(4));
    auto root = sys::SysRoot::Open(dir_.string());
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    ExporterOptions options;
    options.node_name = "node-s";
    service_ = std::make_unique<ExporterService>(*root, options, nullptr, nullptr);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::unique_ptr<ExporterService> service_;
};

TEST_F(ServingTest, OneCollectionIsCompressedOnce) {
  auto output = service_->Scrape();
  const std::string* first = output->Gzip();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(output->Gzip(), first);  // the same bytes for every scraper of this collection
  EXPECT_EQ(Gunzip(*first), output->text());
}

TEST_F(ServingTest, ScrapersGetGzipWhenTheyAskAndTextOtherwise) {
  HttpServer server(*service_);
  ASSERT_TRUE(server.Start({"127.0.0.1", 0}).ok());
  httplib::Client client("127.0.0.1", server.port());
  client.set_decompress(false);  // look at the bytes as sent
  client.set_connection_timeout(5);
  client.set_read_timeout(10);

  auto zipped = client.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(zipped) << httplib::to_string(zipped.error());
  EXPECT_EQ(zipped->status, 200);
  EXPECT_EQ(zipped->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(zipped->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  std::string text = Gunzip(zipped->body);
  EXPECT_NE(text.find("fabcheck_rdma_port_up{node=\"node-s\",device=\"mlx5_3\",port=\"1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE fabcheck_exporter_scrapes_total counter\n"), std::string::npos);

  auto plain = client.Get("/metrics", {{"Accept-Encoding", "gzip;q=0, identity"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_FALSE(plain->has_header("Content-Encoding"));
  EXPECT_EQ(std::stoul(plain->get_header_value("Content-Length")), plain->body.size());
  EXPECT_NE(plain->body.find("fabcheck_rdma_port_up{node=\"node-s\",device=\"mlx5_0\",port=\"1\"} 1\n"),
            std::string::npos);

  // A client that accepts only brotli still gets the text: never a body it did not ask for.
  auto brotli = client.Get("/metrics", {{"Accept-Encoding", "br"}});
  ASSERT_TRUE(brotli);
  EXPECT_FALSE(brotli->has_header("Content-Encoding"));
  EXPECT_NE(brotli->body.find("# HELP fabcheck_rdma_devices "), std::string::npos);

  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "ok\n");
  server.Stop();
}

// Issue: 64 idle sockets and 5 of 6 scrapes failed; a huge header grew memory.
TEST_F(ServingTest, IdleSocketsAndHugeHeadersDoNotStopScrapes) {
  HttpServer server(*service_);
  ASSERT_TRUE(server.Start({"127.0.0.1", 0}).ok());
  auto connect = [&] {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  };
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) idle.push_back(connect());
  int big = connect();
  std::string head = "GET /metrics HTTP/1.1\r\nX-Big: ";
  (void)::send(big, head.data(), head.size(), MSG_NOSIGNAL);
  std::string chunk(1 << 16, 'a');
  size_t sent = 0;
  while (sent < (256u << 20)) {
    ssize_t n = ::send(big, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  EXPECT_LT(sent, 64u << 20) << "the exporter kept reading an endless header";
  int ok = 0;
  for (int i = 0; i < 6; ++i) {
    httplib::Client client("127.0.0.1", server.port());
    client.set_connection_timeout(2);
    client.set_read_timeout(2);
    auto res = client.Get("/metrics");
    if (res && res->status == 200) ++ok;
  }
  EXPECT_EQ(ok, 6);
  for (int fd : idle) ::close(fd);
  ::close(big);
  server.Stop();
}

// Host findings come from an injected loader, on their own schedule; a run
// that fails keeps the last good findings and says so in _up.
TEST(HostFindingsTest, ExportedOnTheirScheduleAndKeptWhenARunFails) {
  fs::path dir = fs::temp_directory_path() / ("fabcheck-hostfind-" + std::to_string(::getpid()));
  fixtures::WriteFabric(dir.string(), fixtures::GpuNode(1));
  auto root = sys::SysRoot::Open(dir.string());
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  int runs = 0;
  bool fail = false;
  ExporterOptions options;
  options.node_name = "n1";
  options.host_checks_interval = std::chrono::milliseconds(0);
  options.host_checks = [&](const sys::SysRoot&) -> Result<std::vector<model::Finding>> {
    ++runs;
    if (fail) return Status(StatusCode::kUnavailable, "cannot read /proc/interrupts");
    model::Finding warn;
    warn.id = "irq.affinity";
    warn.severity = model::Severity::kWarn;
    warn.object = "mlx5_0 (0000:18:00.0)";
    model::Finding pass = warn;
    pass.id = "cpu.frequency";
    pass.severity = model::Severity::kPass;
    pass.object = "node";
    return std::vector<model::Finding>{warn, warn, pass};  // the same object twice: one series
  };
  ExporterService service(*root, options, nullptr, nullptr);
  MetricSet first = service.Collect();
  EXPECT_EQ(runs, 1);
  const MetricFamily* family = first.Find("fabcheck_host_finding");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->samples.size(), 2u);
  const Sample* irq = first.FindSample("fabcheck_host_finding", {{"check", "irq.affinity"}, {"severity", "warn"}});
  ASSERT_NE(irq, nullptr);
  EXPECT_EQ(irq->value, 1);
  const Sample* warns = first.FindSample("fabcheck_host_findings", {{"severity", "warn"}});
  ASSERT_NE(warns, nullptr);
  EXPECT_EQ(warns->value, 2);
  const Sample* fails = first.FindSample("fabcheck_host_findings", {{"severity", "fail"}});
  ASSERT_NE(fails, nullptr);
  EXPECT_EQ(fails->value, 0);
  const Sample* up = first.FindSample("fabcheck_exporter_host_checks_up", {});
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->value, 1);

  fail = true;
  MetricSet second = service.Collect();
  EXPECT_EQ(runs, 2);
  EXPECT_NE(second.FindSample("fabcheck_host_finding", {{"check", "irq.affinity"}}), nullptr);
  const Sample* down = second.FindSample("fabcheck_exporter_host_checks_up", {});
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->value, 0);
  fs::remove_all(dir);
}

TEST(HostFindingsTest, NotRunBeforeTheirInterval) {
  fs::path dir = fs::temp_directory_path() / ("fabcheck-hostsched-" + std::to_string(::getpid()));
  fixtures::WriteFabric(dir.string(), fixtures::GpuNode(1));
  auto root = sys::SysRoot::Open(dir.string());
  ASSERT_TRUE(root.ok());
  int runs = 0;
  ExporterOptions options;
  options.host_checks_interval = std::chrono::hours(1);
  options.host_checks = [&](const sys::SysRoot&) -> Result<std::vector<model::Finding>> {
    ++runs;
    return std::vector<model::Finding>{};
  };
  ExporterService service(*root, options, nullptr, nullptr);
  service.Collect();
  service.Collect();
  EXPECT_EQ(runs, 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabcheck::telemetry
