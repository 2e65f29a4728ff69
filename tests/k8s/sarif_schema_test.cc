// fabcheck's SARIF against the official SARIF 2.1.0 JSON schema, when a copy
// of the schema and a validator are on the machine (neither is a build
// dependency: CI has Debian packages only). Skips with the reason otherwise.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "k8s/output.h"
#include "test_util.h"

namespace fabcheck::k8s {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = FABCHECK_SOURCE_DIR;

std::string SchemaPath() {
  if (const char* env = std::getenv("FABCHECK_SARIF_SCHEMA")) return env;
  for (const char* rel : {"/.peer/sarif/node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json",
                          "/.peer/sarif/sarif-schema-2.1.0.json"}) {
    if (fs::exists(kSource + rel)) return kSource + rel;
  }
  return "";
}

struct ValidatorRun {
  int code;
  std::string out;
};

ValidatorRun Validate(const std::string& schema, const std::vector<std::string>& logs) {
  std::string cmd = "python3 " + kSource + "/tests/k8s/validate_sarif.py '" + schema + "'";
  for (const auto& l : logs) cmd += " '" + l + "'";
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(SarifSchema, OutputValidatesAgainstTheOfficialSchema) {
  std::string schema = SchemaPath();
  if (schema.empty()) {
    GTEST_SKIP() << "no SARIF 2.1.0 schema: set FABCHECK_SARIF_SCHEMA or install it into .peer/sarif "
                    "(docs/k8s-sarif.md)";
  }
  fs::path dir = fs::temp_directory_path() / ("fabcheck-sarif-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> logs;
  // Findings of every kind: errors with columns, file-level YAML issues,
  // suppressed ones, an empty run, and paths that need percent-encoding.
  std::vector<std::vector<std::string>> inputs = {
      {kSource + "/tests/k8s/manifests/realistic/broken"},
      {kSource + "/tests/k8s/manifests/realistic/clean"},
      {kSource + "/tests/k8s/manifests/public"},
      {kSource + "/deploy/kubernetes"},
      {kSource + "/tests/k8s/manifests/yaml.syntax/positive.yaml",
       kSource + "/tests/k8s/manifests/yaml.duplicate-key/positive.yaml",
       kSource + "/tests/k8s/manifests/schema.invalid/positive.yaml"}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto r = LintPaths(inputs[i], LintConfig{}, *FindProfile("generic"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::string path = (dir / ("log" + std::to_string(i) + ".sarif")).string();
    std::ofstream(path) << FormatSarif(*r).dump(2);
    logs.push_back(path);
  }
  {
    auto r = testing::LintText(testing::ReadFile(kSource + "/tests/k8s/manifests/k8s.privileged/positive.yaml"),
                               "generic", LintConfig{}, "<stdin>");
    std::string path = (dir / "stdin.sarif").string();
    std::ofstream(path) << FormatSarif(r).dump(2);
    logs.push_back(path);
  }
  ValidatorRun run = Validate(schema, logs);
  if (run.code == 77) {
    fs::remove_all(dir);
    GTEST_SKIP() << "no validator: " << run.out << " (apt-get install python3-jsonschema)";
  }
  EXPECT_EQ(run.code, 0) << run.out;
  // The check itself can fail: a level outside the schema's enum is rejected.
  json bad = json::parse(testing::ReadFile(logs[0]));
  bad["runs"][0]["results"][0]["level"] = "fatal";
  std::string bad_path = (dir / "bad.sarif").string();
  std::ofstream(bad_path) << bad.dump();
  ValidatorRun rejected = Validate(schema, {bad_path});
  EXPECT_EQ(rejected.code, 1) << rejected.out;
  EXPECT_NE(rejected.out.find("fatal"), std::string::npos) << rejected.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabcheck::k8s
