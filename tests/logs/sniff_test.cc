// The text sniffer: each prefix style users paste in front of NCCL's lines is
// a log, whatever its first character; JSON documents stay JSON.
#include <gtest/gtest.h>

#include <string>

#include "logs/sniff.h"

namespace fabcheck::logs {
namespace {

constexpr std::string_view kNccl = "gpu-17:88231:88231 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.17<0>\n";

TEST(Sniff, TorchrunPrefixIsALog) {
  EXPECT_EQ(SniffText(std::string("[default0]:") + std::string(kNccl)), TextKind::kLog);
  EXPECT_EQ(SniffText(std::string("[rank3]:") + std::string(kNccl)), TextKind::kLog);
}

TEST(Sniff, MpirunTagOutputIsALog) {
  // "[1,0]" alone is a valid JSON array: only the content tells them apart.
  EXPECT_EQ(SniffText(std::string("[1,0]<stdout>:") + std::string(kNccl)), TextKind::kLog);
  EXPECT_EQ(SniffText("[1,0]<stdout>:some program output without NCCL\n"), TextKind::kLog);
}

TEST(Sniff, SlurmLabelIsALog) {
  EXPECT_EQ(SniffText(std::string("3: ") + std::string(kNccl)), TextKind::kLog);
  EXPECT_EQ(SniffText(std::string(" 0: ") + std::string(kNccl)), TextKind::kLog);
}

TEST(Sniff, KubectlPrefixIsALog) {
  EXPECT_EQ(SniffText(std::string("[pod/trainer-0/pytorch] ") + std::string(kNccl)), TextKind::kLog);
}

TEST(Sniff, RayPrefixIsALog) {
  EXPECT_EQ(SniffText(std::string("(RayTrainWorker pid=123, ip=10.0.0.5) ") + std::string(kNccl)), TextKind::kLog);
}

TEST(Sniff, BracketedTimestampsAreALog) {
  EXPECT_EQ(SniffText(std::string("[2026-11-02 09:14:03] ") + std::string(kNccl)), TextKind::kLog);
  EXPECT_EQ(SniffText("[2026-11-02 09:14:03] INFO starting trainer\n"), TextKind::kLog);
  EXPECT_EQ(SniffText(std::string("[1733212345.123] ") + std::string(kNccl)), TextKind::kLog);
}

TEST(Sniff, Nccl25RankLinesAreALog) {
  // NCCL 2.5 and earlier with the host prefix cut: " [0] NCCL INFO ...".
  EXPECT_EQ(SniffText(" [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"), TextKind::kLog);
  EXPECT_EQ(SniffText("[0] NCCL INFO Ring 00 :    0   1\n"), TextKind::kLog);
}

TEST(Sniff, NcclLinesAfterOtherBracketedLinesAreALog) {
  std::string head = "[W socket.cpp:601] [c10d] The client socket has failed to connect.\n";
  head += "[rank0]: starting\n" + std::string(kNccl);
  EXPECT_EQ(SniffText(head), TextKind::kLog);
}

TEST(Sniff, JsonStaysJson) {
  EXPECT_EQ(SniffText("{\"schema\": \"fabcheck.perf/v1\"}"), TextKind::kJson);
  // A fabcheck object that carries NCCL lines is still JSON.
  EXPECT_EQ(SniffText("{\"schema\": \"fabcheck.coll/v1\", \"warnings\": [\"x NCCL WARN y\"]}"), TextKind::kJson);
  EXPECT_EQ(SniffText("[{\"a\": 1}]"), TextKind::kJson);
  EXPECT_EQ(SniffText("  [\n  1, 2, 3\n]\n"), TextKind::kJson);
  EXPECT_EQ(SniffText("[]"), TextKind::kJson);
  EXPECT_EQ(SniffText(""), TextKind::kUnknown);
}

}  // namespace
}  // namespace fabcheck::logs
