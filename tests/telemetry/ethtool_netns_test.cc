// The live ethtool path (SIOCETHTOOL: GSSET_INFO, GSTRINGS, GSTATS) against a
// real driver: a veth pair in a network namespace this test creates. veth
// exposes driver statistics (`ethtool -S`), so every name and value read by
// LiveEthtoolSource must equal what the ethtool tool prints for the same
// interface. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN for setns), `ip` and
// `ethtool`; skipped with the reason otherwise. The namespace (prefix
// fcexp-) is removed on every exit path.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "fabric_fixture.h"
#include "process_helpers.h"
#include "telemetry/ethtool_stats.h"

namespace fabcheck::telemetry {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::FindTool;
using testing::RunCommand;

class EthtoolNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a network namespace and a veth pair";
    ip_ = FindTool("ip");
    ethtool_ = FindTool("ethtool");
    if (ip_.empty()) GTEST_SKIP() << "ip not installed (Debian package iproute2)";
    if (ethtool_.empty()) GTEST_SKIP() << "ethtool not installed (Debian package ethtool)";
    netns_ = "fcexp-" + std::to_string(::getpid());
    CommandResult add = RunCommand(ip_ + " netns add " + netns_);
    if (add.exit_code != 0) GTEST_SKIP() << "cannot create a network namespace here: " << add.output;
    created_ = true;
    // Links stay down: no packet (IPv6 DAD, router solicitations) moves a
    // counter between our read and ethtool's.
    CommandResult veth = RunCommand(ip_ + " -n " + netns_ + " link add fcexp0 type veth peer name fcexp1");
    if (veth.exit_code != 0) GTEST_SKIP() << "cannot create a veth pair (veth module?): " << veth.output;
  }
  void TearDown() override {
    if (created_) RunCommand(ip_ + " netns del " + netns_);
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs `read` on a thread that entered the namespace (setns affects only
  // the calling thread; the ioctl socket belongs to the namespace it was
  // created in).
  template <typename Fn>
  void InNamespace(Fn read) {
    std::string error;
    std::thread worker([&] {
      int fd = ::open(("/run/netns/" + netns_).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
        error = "cannot enter /run/netns/" + netns_ + ": " + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return;
      }
      ::close(fd);
      read();
    });
    worker.join();
    ASSERT_TRUE(error.empty()) << error;
  }

  Result<EthtoolStats> EthtoolTool(const std::string& ifname) {
    CommandResult r = RunCommand(ip_ + " netns exec " + netns_ + " " + ethtool_ + " -S " + ifname);
    if (r.exit_code != 0) return UnavailableError("ethtool -S " + ifname + ": " + r.output);
    return ParseEthtoolText(r.output, "ethtool -S " + ifname);
  }

  std::string ip_, ethtool_, netns_;
  bool created_ = false;
  fs::path dir_;
};

TEST_F(EthtoolNetnsTest, LiveReadEqualsEthtoolTool) {
  auto expected = EthtoolTool("fcexp0");
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ASSERT_FALSE(expected->empty()) << "veth printed no statistics";

  LiveEthtoolSource source;
  Result<EthtoolStats> first = UnavailableError("not read");
  Result<EthtoolStats> second = UnavailableError("not read");
  Result<EthtoolStats> missing = UnavailableError("not read");
  InNamespace([&] {
    first = source.Read("fcexp0");
    second = source.Read("fcexp0");  // through the kept string table
    missing = source.Read("fcexp-none");
  });
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*first, *expected);  // same names, same order, same values
  EXPECT_EQ(*second, *expected);
  bool has_peer = false;
  for (const auto& [name, value] : *first) {
    if (name == "peer_ifindex") has_peer = value > 0;  // not all zeros: the values were really read
  }
  EXPECT_TRUE(has_peer) << "veth's peer_ifindex missing or 0";
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("not in this network namespace"), std::string::npos)
      << missing.status().message();

  // The peer is another interface with its own statistics (its own peer index).
  auto peer = EthtoolTool("fcexp1");
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  Result<EthtoolStats> ours = UnavailableError("not read");
  InNamespace([&] { ours = source.Read("fcexp1"); });
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_EQ(*ours, *peer);
  EXPECT_NE(*ours, *first);
}

TEST_F(EthtoolNetnsTest, ExporterReadsEthtoolLiveInItsNamespace) {
  // A RoCE fixture whose first netdev is the veth and second is absent: the
  // exporter run inside the namespace with --ethtool live reads the first
  // without error and reports the second as an ethtool read error.
  dir_ = fs::temp_directory_path() / ("fcexp-ethtool-" + std::to_string(::getpid()));
  fixtures::FabricSpec spec = fixtures::GpuNode(2, /*roce=*/true);
  spec.nics[0].netdev = "fcexp0";
  spec.nics[1].netdev = "fcexp-gone";
  fixtures::WriteFabric(dir_.string(), spec);
  CommandResult r = RunCommand(ip_ + " netns exec " + netns_ + " " + FABCHECK_BINARY +
                               " --log-level error exporter --once --ethtool live --node-name n --sysroot '" +
                               dir_.string() + "' 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fabcheck_rdma_port_up{node=\"n\",device=\"mlx5_0\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fabcheck_exporter_read_errors{node=\"n\",source=\"ethtool\",reason=\"unreadable\"} 1"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace fabcheck::telemetry
