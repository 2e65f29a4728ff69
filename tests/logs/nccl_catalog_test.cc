// The catalogue of NCCL's WARN messages: a line generated from every
// catalogued format is recognised as its family, the source file refines a
// family, and the coverage of NCCL's WARN sites per subsystem does not shrink.
#include <gtest/gtest.h>

#include <map>

#include "logs/nccl_catalog.h"
#include "logs/nccl_log.h"

namespace fabcheck::logs {
namespace {

TEST(NcclCatalog, LoadsFamiliesAndFormats) {
  const auto& c = NcclMessageCatalog::Get();
  EXPECT_GE(c.families().size(), 40u);
  EXPECT_GE(c.formats().size(), 900u);
  EXPECT_NE(c.extracted_from().find("v2.30"), std::string::npos) << c.extracted_from();
  for (const auto& f : c.families()) {
    EXPECT_FALSE(f.causes.empty()) << f.id;
    EXPECT_FALSE(f.fix.empty()) << f.id;
    EXPECT_FALSE(f.next.empty()) << f.id;
  }
}

// Every format the catalogue assigns to a family: the line NCCL would print
// for it is recognised, as that family (or as a family whose formats are more
// specific for the same text).
TEST(NcclCatalog, EveryCataloguedFormatIsRecognised) {
  const auto& c = NcclMessageCatalog::Get();
  int checked = 0, missed = 0;
  for (const auto& f : c.formats()) {
    if (c.Family(f.family) == nullptr) continue;  // "<subsystem>.other": not catalogued
    std::string line = NcclMessageCatalog::SampleLine(f.format);
    auto m = c.Classify(line, f.file + ":100");
    ++checked;
    if (m.family == nullptr) {
      ++missed;
      ADD_FAILURE() << "not recognised: " << f.format << " (" << f.file << ")";
    }
  }
  EXPECT_GT(checked, 700);
  EXPECT_EQ(missed, 0);
}

TEST(NcclCatalog, SourceFileRefinesTheFamily) {
  const auto& c = NcclMessageCatalog::Get();
  auto plain = c.Classify("Cuda failure 'invalid argument'", "");
  ASSERT_NE(plain.family, nullptr);
  EXPECT_EQ(plain.family->id, "cuda.failure");
  auto nvls = c.Classify("Cuda failure 'system not yet initialized'", "transport/nvls.cc:121");
  ASSERT_NE(nvls.family, nullptr);
  EXPECT_EQ(nvls.family->id, "transport.nvls");
  auto p2p = c.Classify("Cuda failure 1 'invalid argument'", "transport/p2p.cc:270");
  ASSERT_NE(p2p.family, nullptr);
  EXPECT_EQ(p2p.family->id, "transport.p2p");
}

TEST(NcclCatalog, RealMessagesAreNamed) {
  const auto& c = NcclMessageCatalog::Get();
  const std::pair<const char*, const char*> cases[] = {
      {"NET/IB : Got completion from peer 10.0.0.2<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
       "localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0",
       "net-ib.completion-error"},
      {"socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort", "socket.connect"},
      {"Error: network IB not found.", "plugin.net-not-found"},
      {"Bootstrap : no socket interface found", "socket.interface"},
      {"Failed to bind NVLink SHARP (NVLS) Multicast memory of size 1048576 : CUDA error 401 'operation not "
       "supported'.",
       "transport.nvls"},
      {"cudaArch 900 dynamic smem 233472 exceeds device/fn maxSharedMem 232448", "cuda.shared-memory"},
      {"Mismatched NCCL version detected : rank 0 version 22103 rank 8 version 21805", "init.version-mismatch"},
  };
  for (const auto& [line, family] : cases) {
    auto m = c.Classify(line, "");
    ASSERT_NE(m.family, nullptr) << line;
    EXPECT_EQ(m.family->id, family) << line;
  }
  EXPECT_EQ(c.Classify("something NCCL never printed", "").family, nullptr);
}

// The coverage docs/diagnose.md shows; these floors keep it from shrinking.
TEST(NcclCatalog, CoverageOfWarnSitesDoesNotShrink) {
  std::map<std::string, NcclMessageCatalog::Coverage> by;
  for (const auto& c : NcclMessageCatalog::Get().CoverageAtNewest()) by[c.subsystem] = c;
  struct Floor {
    const char* subsystem;
    double recognised, specific;  // shares of the sites
  };
  const Floor floors[] = {
      {"bootstrap", 0.90, 0.90}, {"socket", 0.90, 0.30}, {"net/ib", 0.90, 0.65}, {"plugin", 0.90, 0.80},
      {"transport", 0.90, 0.90}, {"proxy", 0.90, 0.35},  {"init", 0.90, 0.90},
  };
  for (const auto& f : floors) {
    ASSERT_TRUE(by.count(f.subsystem)) << f.subsystem;
    const auto& c = by[f.subsystem];
    ASSERT_GT(c.sites, 0) << f.subsystem;
    EXPECT_GE(static_cast<double>(c.recognised) / c.sites, f.recognised) << f.subsystem;
    EXPECT_GE(static_cast<double>(c.specific) / c.sites, f.specific) << f.subsystem;
  }
}

// Through the parser: the source file printed before "NCCL WARN" reaches the event.
TEST(NcclCatalog, ParserKeepsTheWarnSource) {
  NcclLogParser p;
  p.AddText(
      "node-a:100:200 [3] transport/nvls.cc:376 NCCL WARN Cuda failure 'system not yet initialized'\n"
      "node-a:100:200 [3] misc/socket.cc:483 (socketStartConnect) NCCL WARN something new\n",
      "job.log");
  auto s = p.Finish();
  std::vector<std::string> sources;
  for (const auto& e : s.events) {
    if (e.kind == "warn") sources.push_back(e.fields.count("source") ? e.fields.at("source") : "");
  }
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0], "transport/nvls.cc:376");
  EXPECT_EQ(sources[1], "misc/socket.cc:483");
}

}  // namespace
}  // namespace fabcheck::logs
