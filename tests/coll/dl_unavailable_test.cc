// The CUDA function table: versions print right, and a node without CUDA gets
// a clear Unavailable that says how to install it (never a loader error).
#include <gtest/gtest.h>

#include "dl/cuda.h"

namespace fabcheck::dl {
namespace {

TEST(CudaVersionString, FormatsMajorMinor) {
  EXPECT_EQ(CudaVersionString(12040), "12.4");
  EXPECT_EQ(CudaVersionString(13000), "13.0");
  EXPECT_EQ(CudaVersionString(11080), "11.8");
}

TEST(LoadCuda, WithoutCudaIsUnavailableWithHint) {
  auto cuda = LoadCuda();
  if (cuda.ok()) GTEST_SKIP() << "CUDA is installed here (" << (*cuda)->runtime->path() << ")";
  EXPECT_TRUE(cuda.status().code() == StatusCode::kUnavailable ||
              cuda.status().code() == StatusCode::kFailedPrecondition)
      << cuda.status().ToString();
  const std::string& message = cuda.status().message();
  if (message.find("no NVIDIA driver") != std::string::npos) {
    // The runtime is installed but there is no GPU driver (a CPU build machine).
    EXPECT_NE(message.find("nvidia-smi"), std::string::npos) << message;
  } else if (cuda.status().code() == StatusCode::kUnavailable) {
    EXPECT_NE(message.find("libcudart"), std::string::npos) << message;
    EXPECT_NE(message.find("FABCHECK_CUDART"), std::string::npos) << message;
  }
  // Cached: the second call answers the same.
  EXPECT_EQ(LoadCuda().status(), cuda.status());
}

}  // namespace
}  // namespace fabcheck::dl
