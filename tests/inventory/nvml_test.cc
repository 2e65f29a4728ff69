// NVML is optional: without the library the answer is a clear Unavailable
// (GPU names stay unknown); with it, GPUs are named by PCI bus id.
#include <gtest/gtest.h>

#include "dl/nvml.h"

namespace fabcheck::dl {
namespace {

TEST(InventoryNvmlTest, MissingLibraryIsUnavailableWithAHint) {
  auto api = LoadNvml();
  if (api.ok()) GTEST_SKIP() << "libnvidia-ml is installed here (" << (*api)->library->path() << ")";
  EXPECT_EQ(api.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(api.status().message().find("libnvidia-ml.so.1"), std::string::npos) << api.status().message();
  EXPECT_NE(api.status().message().find("NVIDIA driver"), std::string::npos) << api.status().message();
  auto report = QueryNvmlGpus({"0000:18:00.0"});
  EXPECT_FALSE(report.ok());
}

TEST(InventoryNvmlTest, UnknownBusIdIsLeftOut) {
  auto report = QueryNvmlGpus({"ffff:ff:1f.7"});
  if (!report.ok()) GTEST_SKIP() << "no NVML here: " << report.status().message();
  EXPECT_TRUE(report->gpus.empty());
  EXPECT_FALSE(report->library_path.empty());
}

}  // namespace
}  // namespace fabcheck::dl
