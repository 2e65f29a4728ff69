// Without a GPU (this CPU machine, CI): coll and gpu fail cleanly, with a
// message that says what is missing, never a loader error or a crash.
#include <gtest/gtest.h>

#include "coll/coll.h"
#include "coll/gpu_copy.h"
#include "dl/cuda.h"
#include "dl/nccl.h"

namespace fabcheck::coll {
namespace {

bool HaveGpu() {
  auto cuda = dl::LoadCuda();
  if (!cuda.ok()) return false;
  int n = 0;
  return (*cuda)->cudaGetDeviceCount(&n) == dl::cudaSuccess && n > 0;
}

TEST(Unavailable, NcclVersionStrings) {
  EXPECT_EQ(dl::NcclVersionString(22803), "2.28.3");
  EXPECT_EQ(dl::NcclVersionString(21805), "2.18.5");
  EXPECT_EQ(dl::NcclVersionString(2708), "2.7.8");
  EXPECT_EQ(dl::NcclTypeSize(dl::ncclBfloat16), 2u);
  EXPECT_EQ(dl::NcclTypeSize(dl::ncclFloat64), 8u);
}

TEST(Unavailable, NcclLoadsOrSaysHowToInstall) {
  auto nccl = dl::LoadNccl();
  if (nccl.ok()) {
    EXPECT_GE((*nccl)->version, 21200);
    EXPECT_NE((*nccl)->ncclAllReduce, nullptr);
  } else {
    EXPECT_TRUE(nccl.status().code() == StatusCode::kUnavailable ||
                nccl.status().code() == StatusCode::kFailedPrecondition);
    EXPECT_NE(nccl.status().message().find("FABCHECK_NCCL"), std::string::npos) << nccl.status().message();
  }
}

TEST(Unavailable, CollWithoutGpuFailsCleanly) {
  if (HaveGpu()) GTEST_SKIP() << "a GPU is present: the real run is tested on the GPU machine";
  CollOptions options;
  options.ops = {CollOp::kAllReduce};
  options.sizes = {1024};
  RankSetup setup;
  auto report = RunColl(options, setup, ::testing::TempDir() + "/fc-coll-logs");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().code(), StatusCode::kOk);
  const std::string& message = report.status().message();
  EXPECT_TRUE(message.find("libcudart") != std::string::npos || message.find("driver") != std::string::npos ||
              message.find("GPU") != std::string::npos)
      << message;
}

TEST(Unavailable, GpuCopyWithoutGpuFailsCleanly) {
  if (HaveGpu()) GTEST_SKIP() << "a GPU is present";
  auto report = MeasureGpuCopies(sys::SysRoot::Live(), GpuCopyOptions{});
  ASSERT_FALSE(report.ok());
  EXPECT_FALSE(report.status().message().empty());
}

TEST(Unavailable, BadOptionsAreInvalidArgument) {
  CollOptions options;
  options.ops = {CollOp::kAllReduce};
  options.sizes = {};
  RankSetup setup;
  Status s = RunCollectives(options, setup, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fabcheck::coll
