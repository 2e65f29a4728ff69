// SARIF 2.1.0 structure (no SARIF schema ships in a Debian package, so the
// required properties of the schema are checked here one by one), JSON and text.
#include "k8s/output.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "k8s/registry.h"
#include "test_util.h"

namespace fabcheck::k8s {
namespace {

using nlohmann::json;

const char* kYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ai
spec:
  hostNetwork: true
  containers:
    - name: c
      image: busybox
      env:
        - {name: A, value: "$HOME"}
      resources:
        limits:
          nvidia.com/gpu: 2
          rdma/rdma_shared_device_a: 1
)";

// The constraints of sarif-schema-2.1.0.json that apply to what fabcheck writes.
void CheckSarif(const json& log) {
  ASSERT_TRUE(log.is_object());
  EXPECT_EQ(log.at("version"), "2.1.0");
  ASSERT_TRUE(log.at("runs").is_array());
  ASSERT_EQ(log["runs"].size(), 1u);
  const json& run = log["runs"][0];
  const json& driver = run.at("tool").at("driver");
  EXPECT_TRUE(driver.at("name").is_string());
  const json& rules = driver.at("rules");
  ASSERT_TRUE(rules.is_array());
  std::set<std::string> ids;
  for (const auto& r : rules) {
    ASSERT_TRUE(r.at("id").is_string());
    EXPECT_TRUE(ids.insert(r["id"]).second) << "rule ids must be unique";
    EXPECT_TRUE(r.at("shortDescription").at("text").is_string());
    EXPECT_TRUE(r.at("fullDescription").at("text").is_string());
    std::string level = r.at("defaultConfiguration").at("level");
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note" || level == "none");
    EXPECT_FALSE(r.contains("helpUri") && !r["helpUri"].is_string());
  }
  EXPECT_TRUE(run.at("columnKind") == "unicodeCodePoints" || run.at("columnKind") == "utf16CodeUnits");
  for (const auto& inv : run.at("invocations")) EXPECT_TRUE(inv.at("executionSuccessful").is_boolean());
  static const std::regex kUri("^[A-Za-z0-9._~/%:-]+$");
  for (const auto& a : run.at("artifacts")) {
    EXPECT_TRUE(std::regex_match(a.at("location").at("uri").get<std::string>(), kUri));
  }
  ASSERT_TRUE(run.at("results").is_array());
  ASSERT_FALSE(run["results"].empty());
  for (const auto& res : run["results"]) {
    ASSERT_TRUE(res.at("message").at("text").is_string());
    std::string level = res.at("level");
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note" || level == "none");
    int index = res.at("ruleIndex");
    ASSERT_GE(index, 0);
    ASSERT_LT(index, static_cast<int>(rules.size()));
    EXPECT_EQ(rules[index]["id"], res.at("ruleId"));
    for (const auto& loc : res.at("locations")) {
      const json& phys = loc.at("physicalLocation");
      EXPECT_TRUE(std::regex_match(phys.at("artifactLocation").at("uri").get<std::string>(), kUri));
      if (phys.contains("region")) {
        EXPECT_TRUE(phys["region"].at("startLine").is_number_integer());
        EXPECT_GE(phys["region"]["startLine"].get<int>(), 1);
        if (phys["region"].contains("startColumn")) EXPECT_GE(phys["region"]["startColumn"].get<int>(), 1);
      }
      for (const auto& l : loc.value("logicalLocations", json::array())) EXPECT_TRUE(l.at("name").is_string());
    }
    if (res.contains("properties")) EXPECT_TRUE(res["properties"].is_object());
  }
}

TEST(Sarif, HasTheStructureTheSchemaRequires) {
  LintResult r = testing::LintText(kYaml, "generic", {}, "dir with space/pod.yaml");
  json sarif = FormatSarif(r);
  CheckSarif(sarif);
  EXPECT_EQ(sarif["runs"][0]["tool"]["driver"]["rules"].size(), AllRules().size());
  EXPECT_EQ(sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "dir%20with%20space/pod.yaml");
  // Round trip through text, as a consumer reads it.
  CheckSarif(json::parse(sarif.dump()));
}

TEST(Sarif, EmptyResultIsStillValid) {
  LintResult r = testing::LintText("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
  json sarif = FormatSarif(r);
  EXPECT_TRUE(sarif["runs"][0]["results"].empty());
  EXPECT_EQ(sarif["version"], "2.1.0");
}

TEST(Json, VersionedSchemaAndLintVocabulary) {
  LintResult r = testing::LintText(kYaml);
  json j = FormatJson(r);
  EXPECT_EQ(j["schema"], kLintSchema);
  EXPECT_EQ(j["objects"], 1);
  ASSERT_FALSE(j["findings"].empty());
  for (const auto& f : j["findings"]) {
    std::string level = f["level"];
    EXPECT_TRUE(level == "error" || level == "warning" || level == "info");
    EXPECT_TRUE(f["severity"] == "fail" || f["severity"] == "warn" || f["severity"] == "info");
    EXPECT_TRUE(f.contains("location"));
    EXPECT_TRUE(f.contains("why"));
  }
  EXPECT_EQ(j["summary"]["error"].get<int>(), r.Count(Level::kError));
}

TEST(Text, GroupsByFileThenObject) {
  LintResult r = testing::LintText(kYaml, "generic", {}, "pod.yaml");
  std::string text = FormatText(r, true);
  EXPECT_EQ(text.rfind("pod.yaml\n", 0), 0u) << text;
  EXPECT_NE(text.find("  Pod ai/p container c\n"), std::string::npos) << text;
  EXPECT_NE(text.find("error   k8s.rdma.no-ipc-lock  line "), std::string::npos) << text;
  EXPECT_NE(text.find("fix: "), std::string::npos);
  EXPECT_NE(text.find("why: "), std::string::npos);
  EXPECT_NE(text.find(" error(s), "), std::string::npos);
}

TEST(Docs, RuleCatalogIsUpToDate) {
  std::string doc = testing::ReadFile(std::string(FABCHECK_SOURCE_DIR) + "/docs/k8s-rules.md");
  EXPECT_EQ(doc, RulesMarkdown()) << "docs/k8s-rules.md is stale: run 'fabcheck k8s rules --markdown > "
                                     "docs/k8s-rules.md'";
  for (const auto& rule : AllRules()) EXPECT_NE(doc.find("### " + rule.info.id + "\n"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::k8s
