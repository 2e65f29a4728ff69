// `fabcheck diagnose` and `fabcheck nccl-log` as users run them: JSON schema,
// the catalog in docs/diagnose.md, stdin, odd inputs and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

struct CommandRun {
  int code = -1;
  std::string out;
};

CommandRun Fabcheck(const std::string& args) {
  CommandRun r;
  std::string cmd = std::string(FABCHECK_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Real(const std::string& name) { return std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/real/" + name; }

TEST(DiagnoseCommand, JsonSchemaAndExitCode) {
  CommandRun r = Fabcheck("diagnose --json " + Real("nccl-1405-ibext-status12.log"));
  EXPECT_EQ(r.code, 2);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["schema"], "fabcheck.diagnose/v1");
  ASSERT_FALSE(j["findings"].empty());
  EXPECT_EQ(j["findings"][0]["rule"], "nccl.ib.wc-error");
  for (const char* key : {"severity", "confidence", "evidence", "causes", "fix", "next"}) {
    EXPECT_TRUE(j["findings"][0].contains(key)) << key;
  }
}

TEST(DiagnoseCommand, TextNamesCausesAndNext) {
  CommandRun r = Fabcheck("diagnose " + Real("nccl-799-modify-qp-nodev-2.7.8.log"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("nccl.verbs.call-failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cause 1:"), std::string::npos);
  EXPECT_NE(r.out.find("next:"), std::string::npos);
}

TEST(DiagnoseCommand, CatalogIsDocsDiagnoseMd) {
  CommandRun r = Fabcheck("diagnose --catalog");
  EXPECT_EQ(r.code, 0);
  std::ifstream in(std::string(FABCHECK_SOURCE_DIR) + "/docs/diagnose.md");
  std::stringstream docs;
  docs << in.rdbuf();
  EXPECT_EQ(r.out, docs.str()) << "regenerate: fabcheck diagnose --catalog > docs/diagnose.md";
}

TEST(DiagnoseCommand, StdinGarbageAndMissingFiles) {
  CommandRun piped = Fabcheck("diagnose - < " + Real("llamafactory-7396-watchdog.log"));
  EXPECT_EQ(piped.code, 2);
  EXPECT_NE(piped.out.find("nccl.hang.timeout"), std::string::npos) << piped.out;
  CommandRun missing = Fabcheck("diagnose /nonexistent/job.log");
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.out.find("/nonexistent/job.log"), std::string::npos);
  CommandRun usage = Fabcheck("diagnose --line-rate fast x.log");
  EXPECT_EQ(usage.code, 64);
  CommandRun zero = Fabcheck("diagnose /dev/zero");
  EXPECT_EQ(zero.code, 3);
  EXPECT_NE(zero.out.find("larger than"), std::string::npos) << zero.out;
}

TEST(NcclLogCommand, SharesTheRulesAndReadsStdin) {
  CommandRun r = Fabcheck("nccl-log - < " + Real("nccl-tests-166-socket-abort.log"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("nccl.bootstrap.connect"), std::string::npos) << r.out;
  CommandRun j = Fabcheck("nccl-log --json " + Real("nccl-1814-status12-then-flush.log"));
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["schema"], "fabcheck.nccl-log/v1");
  bool wc = false;
  for (const auto& f : doc["findings"]) wc |= f["id"] == "nccl.ib.wc-error";
  EXPECT_TRUE(wc);
}

}  // namespace
