// The one judgement catalog: every judging module's IDs are in it once, each
// entry documents itself, and docs/catalog.md is what the catalog generates.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "checks/registry.h"
#include "checks/runner.h"
#include "diagnose/registry.h"
#include "k8s/registry.h"
#include "ladder/catalog.h"
#include "report/checklist.h"
#include "verdict/catalog.h"

namespace fabcheck::verdict {
namespace {

TEST(Catalog, IdsAreUniqueAndDocumented) {
  std::set<std::string> ids;
  for (const auto& e : Catalog()) {
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate ID " << e.id;
    EXPECT_FALSE(e.source.empty()) << e.id;
    EXPECT_FALSE(e.group.empty()) << e.id;
    EXPECT_FALSE(e.title.empty()) << e.id;
    EXPECT_FALSE(e.why.empty()) << e.id;
    EXPECT_FALSE(e.fix.empty()) << e.id;
  }
}

TEST(Catalog, HoldsEveryJudgingModulesIds) {
  auto expect_all = [](const std::vector<model::CatalogEntry>& part, const char* source) {
    ASSERT_FALSE(part.empty()) << source;
    for (const auto& e : part) {
      const model::CatalogEntry* found = FindEntry(e.id);
      ASSERT_NE(found, nullptr) << e.id;
      EXPECT_EQ(found->source, source) << e.id;
    }
  };
  expect_all(checks::CatalogEntries(), "doctor");
  expect_all(ladder::CatalogEntries(), "ladder");
  expect_all(diagnose::CatalogEntries(), "diagnose");
  expect_all(report::checklist::CatalogEntries(), "report");
  expect_all(k8s::CatalogEntries(), "k8s");
  EXPECT_EQ(Catalog().size(), checks::AllChecks().size() + ladder::CatalogEntries().size() +
                                  diagnose::AllRules().size() + 10 + k8s::AllRules().size());
  ASSERT_NE(FindEntry("rdma.none"), nullptr);
  EXPECT_EQ(FindEntry("rdma.none")->group, "L1");
  EXPECT_EQ(FindEntry("no.such.id"), nullptr);
}

TEST(Catalog, ExplainAndJson) {
  const model::CatalogEntry* e = FindEntry("ladder.perf.fail");
  ASSERT_NE(e, nullptr);
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("ladder.perf.fail"), std::string::npos);
  EXPECT_NE(text.find("How to fix:"), std::string::npos);
  nlohmann::json j = CatalogJson();
  EXPECT_EQ(j["schema"], "fabcheck.catalog/v1");
  EXPECT_EQ(j["entries"].size(), Catalog().size());
  EXPECT_EQ(EntriesWithPrefix("golive.").size(), 10u);
}

TEST(Catalog, DocsAreGeneratedFromIt) {
  std::ifstream in(std::string(FABCHECK_SOURCE_DIR) + "/docs/catalog.md");
  ASSERT_TRUE(in) << "docs/catalog.md is missing: fabcheck explain --markdown > docs/catalog.md";
  std::stringstream docs;
  docs << in.rdbuf();
  EXPECT_EQ(docs.str(), CatalogMarkdown())
      << "docs/catalog.md is out of date: regenerate it with `fabcheck explain --markdown > docs/catalog.md`";
}

model::Finding Unknown(const std::string& id, const std::string& object, const std::string& message) {
  model::Finding f;
  f.id = id;
  f.severity = model::Severity::kUnknown;
  f.object = object;
  f.message = message;
  return f;
}

TEST(UnknownPolicy, UnknownsOfOneCheckAreOneLine) {
  std::vector<model::Finding> in = {Unknown("iommu.translating", "mlx5_0", "IOMMU mode unknown"),
                                    Unknown("iommu.translating", "mlx5_1", "IOMMU mode unknown"),
                                    Unknown("cpu.frequency", "node", "governors unknown"),
                                    Unknown("iommu.translating", "GPU0", "IOMMU group unreadable")};
  model::Finding pass;
  pass.id = "port.down";
  pass.severity = model::Severity::kPass;
  in.insert(in.begin() + 1, pass);
  auto out = checks::GroupUnknowns(in);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].id, "iommu.translating");
  EXPECT_EQ(out[0].object, "3 objects: mlx5_0, mlx5_1, GPU0");
  EXPECT_EQ(out[0].message, "IOMMU mode unknown (and others: see the evidence)");
  EXPECT_EQ(out[0].evidence.size(), 3u);
  EXPECT_EQ(out[1].id, "port.down");
  EXPECT_EQ(out[2].id, "cpu.frequency");
  EXPECT_EQ(out[2].object, "node");
}

TEST(UnknownPolicy, StrictMakesAnUnknownExitOne) {
  std::vector<model::Finding> f = {Unknown("cpu.frequency", "node", "governors unknown")};
  EXPECT_EQ(model::ExitCodeOf(f, /*strict=*/false), 0);
  EXPECT_EQ(model::ExitCodeOf(f, /*strict=*/true), 1);
  f.back().severity = model::Severity::kFail;
  EXPECT_EQ(model::ExitCodeOf(f, /*strict=*/true), 2);
  EXPECT_TRUE(checks::FromOlderCapture(Unknown("x", "node", "state unknown: capture a.tar.gz was taken without "
                                                               "the doctor's evidence")));
  EXPECT_FALSE(checks::FromOlderCapture(Unknown("x", "node", "cannot read it: EACCES")));
}

}  // namespace
}  // namespace fabcheck::verdict
