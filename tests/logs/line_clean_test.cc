// The cleaner on each prefix and decoration users' logs carry.
#include "logs/line_clean.h"

#include <gtest/gtest.h>

namespace fabcheck::logs {
namespace {

std::string Text(std::string_view raw, CleanLine* out = nullptr) {
  static std::string scratch;
  CleanLine c = Clean(raw, &scratch);
  if (out) *out = c;
  return std::string(c.text);
}

constexpr char kNccl[] = "gpu-17:88231:88231 [0] NCCL INFO Using network IB";

TEST(Clean, LeavesNcclLinesAlone) { EXPECT_EQ(Text(kNccl), kNccl); }

TEST(Clean, OpenMpiTagOutput) {
  CleanLine c;
  EXPECT_EQ(Text(std::string("[1,3]<stdout>:") + kNccl, &c), kNccl);
  EXPECT_EQ(c.launcher_rank, 3);
  EXPECT_EQ(Text(std::string("[1,12]<stderr>:") + kNccl), kNccl);
}

TEST(Clean, SlurmLabel) {
  CleanLine c;
  EXPECT_EQ(Text(std::string("3: ") + kNccl, &c), kNccl);
  EXPECT_EQ(c.launcher_rank, 3);
  EXPECT_EQ(Text(std::string(" 12: ") + kNccl), kNccl);
}

TEST(Clean, TorchrunAndPyTorchRankPrefixes) {
  CleanLine c;
  EXPECT_EQ(Text(std::string("[default5]:") + kNccl, &c), kNccl);
  EXPECT_EQ(c.launcher_rank, 5);
  EXPECT_EQ(Text(std::string("[rank7]:") + kNccl, &c), kNccl);
  EXPECT_EQ(c.launcher_rank, 7);
}

// torchrun's --log-line-prefix-template: a role name with the rank, or "name|restart".
TEST(Clean, TorchrunNamedPrefixes) {
  CleanLine c;
  EXPECT_EQ(Text(std::string("[trainer3]:") + kNccl, &c), kNccl);
  EXPECT_EQ(c.launcher_rank, 3);
  EXPECT_EQ(Text("[trainer0|0]:Last error:", &c), "Last error:");
  EXPECT_EQ(c.launcher_rank, 0);
  // NCCL's own "[0] " and PyTorch's "[W socket.cpp:601]" are not prefixes.
  EXPECT_EQ(Text("[0] NCCL INFO Ring 00 :    0   1"), "[0] NCCL INFO Ring 00 :    0   1");
  EXPECT_EQ(Text("[W socket.cpp:601] [c10d] client socket failed"), "[W socket.cpp:601] [c10d] client socket failed");
}

TEST(Clean, RayPrefixesAndRepeatedSuffix) {
  CleanLine c;
  const std::string ray = std::string("(RayTrainWorker pid=1234, ip=10.0.0.5) ") + kNccl + " [repeated 7x across cluster]";
  EXPECT_EQ(Text(ray, &c), kNccl);
  EXPECT_EQ(c.repeated, 7);
  EXPECT_EQ(c.ray_ip, "10.0.0.5");
  EXPECT_EQ(Text(std::string("(EngineCore_DP0 pid=1088) (RayWorkerWrapper pid=285, ip=192.168.177.12) ") + kNccl),
            kNccl);
  EXPECT_EQ(Text(std::string("(pid=37105) ") + kNccl), kNccl);
}

TEST(Clean, KubectlPrefixAndTimestamps) {
  CleanLine c;
  const std::string pod = std::string("[pod/trainer-worker-0/pytorch] ") + kNccl;  // c.pod points into it
  EXPECT_EQ(Text(pod, &c), kNccl);
  EXPECT_EQ(c.pod, "trainer-worker-0");
  EXPECT_EQ(Text(std::string("[pod/trainer-worker-0/pytorch] 2024-11-28T07:42:11.525812345Z ") + kNccl), kNccl);
  EXPECT_EQ(Text(std::string("2024-11-28T07:42:11.525Z ") + kNccl), kNccl);
  EXPECT_EQ(Text(std::string("[2026-11-02 09:14:03] ") + kNccl), kNccl);
  EXPECT_EQ(Text(std::string("2025-02-16 22:31:34,422 ") + kNccl), kNccl);
  EXPECT_EQ(Text(std::string("  | 2024-11-28T07:42:11.525Z | ") + kNccl), kNccl);
  EXPECT_EQ(Text(std::string("2025-05-16T16:39:51.208-07:00 ") + kNccl), kNccl);
}

TEST(Clean, ColourCodesWithAndWithoutEscape) {
  CleanLine c;
  EXPECT_EQ(Text(std::string("\x1b[32m") + kNccl + "\x1b[0m", &c), kNccl);
  EXPECT_FALSE(c.had_binary);
  EXPECT_EQ(Text(std::string("[0m ") + kNccl), kNccl);
  EXPECT_EQ(Text(std::string("\x1b[1;31m[1,0]<stdout>:\x1b[0m") + kNccl), kNccl);
  // NCCL's own brackets survive: "[0]" is the device, not a colour.
  EXPECT_EQ(Text("h:1:2 [0] NCCL INFO x"), "h:1:2 [0] NCCL INFO x");
}

TEST(Clean, PdshHostPrefix) {
  EXPECT_EQ(Text("MLVM2: MLVM2:10792:10792 [0] NCCL INFO cudaDriverVersion 12030"),
            "MLVM2:10792:10792 [0] NCCL INFO cudaDriverVersion 12030");
  // A different word before ": " is kept (it is not the host prefix).
  EXPECT_EQ(Text("Rank 0: something"), "Rank 0: something");
}

TEST(Clean, NestedPrefixesInAnyOrder) {
  CleanLine c;
  EXPECT_EQ(Text(std::string("[pod/w-1/c] 2024-01-01T00:00:00Z [1,2]<stdout>:") + kNccl, &c), kNccl);
  EXPECT_EQ(c.launcher_rank, 2);
}

TEST(Clean, BinaryBytesAreRemovedOrReplaced) {
  CleanLine c;
  std::string raw = std::string("gpu-1:1:1 [0] NCCL \0INFO x\x01\xff", 28);
  std::string out = Text(raw, &c);
  EXPECT_TRUE(c.had_binary);
  EXPECT_EQ(out.find('\0'), std::string::npos);
  EXPECT_NE(out.find("NCCL INFO x\xef\xbf\xbd"), std::string::npos) << out;
  // Valid UTF-8 stays.
  EXPECT_EQ(Text("h:1:1 [0] NCCL INFO caf\xc3\xa9"), "h:1:1 [0] NCCL INFO caf\xc3\xa9");
}

TEST(Clean, EmptyAndHostileLinesNeverCrash) {
  EXPECT_EQ(Text(""), "");
  EXPECT_EQ(Text("["), "[");
  EXPECT_EQ(Text("(pid="), "(pid=");
  EXPECT_EQ(Text("[1,"), "[1,");
  EXPECT_EQ(Text(std::string(100000, '[')).size(), 100000u);
  std::string many;
  for (int i = 0; i < 50; ++i) many += "[1,0]<stdout>:";
  EXPECT_LE(Text(many).size(), many.size());
}

}  // namespace
}  // namespace fabcheck::logs
