// The retransmission counters a stalled verbs test reports: which counters
// are read (mlx5 and rxe names), and how growth is described.
#include "perf/verbs/retry_counters.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace fabcheck::perf::verbs {
namespace {

namespace fs = std::filesystem;

class RetryCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-retry-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& device, const std::string& name, const std::string& text) {
    fs::path d = dir_ / "sys/class/infiniband" / device / "ports/1/hw_counters";
    fs::create_directories(d);
    std::ofstream(d / name) << text;
  }
  fs::path dir_;
};

TEST_F(RetryCountersTest, ReadsTheRetryCountersAPortHasAndSkipsGarbage) {
  Write("rxe0", "completer_retry_err", "774\n");
  Write("rxe0", "rcvd_seq_err", "3\n");
  Write("rxe0", "out_of_seq_request", "not a number\n");
  Write("rxe0", "sent_pkts", "99\n");  // not a retry counter
  auto root = sys::SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok()) << root.status().message();
  CounterValues v = ReadRetryCounters(*root, "rxe0", 1);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v["completer_retry_err"], 774u);
  EXPECT_EQ(v["rcvd_seq_err"], 3u);
  EXPECT_TRUE(ReadRetryCounters(*root, "mlx5_9", 1).empty());
}

TEST(RetryGrowthTest, NamesOnlyTheCountersThatGrewInAFixedOrder) {
  CounterValues before{{"completer_retry_err", 10}, {"rcvd_seq_err", 5}, {"local_ack_timeout_err", 7}};
  CounterValues after{{"completer_retry_err", 784}, {"rcvd_seq_err", 5}, {"local_ack_timeout_err", 9}};
  EXPECT_EQ(DescribeRetryGrowth(before, after), "local_ack_timeout_err +2, completer_retry_err +774");
}

TEST(RetryGrowthTest, NoGrowthResetsAndMissingCountersGiveNothing) {
  EXPECT_EQ(DescribeRetryGrowth({}, {}), "");
  EXPECT_EQ(DescribeRetryGrowth({{"packet_seq_err", 4}}, {{"packet_seq_err", 4}}), "");
  EXPECT_EQ(DescribeRetryGrowth({{"packet_seq_err", 40}}, {{"packet_seq_err", 2}}), "");  // counter reset
  EXPECT_EQ(DescribeRetryGrowth({}, {{"packet_seq_err", 2}}), "");                         // appeared mid-run
}

}  // namespace
}  // namespace fabcheck::perf::verbs
