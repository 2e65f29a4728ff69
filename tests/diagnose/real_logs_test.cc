// diagnose over every real log of tests/data/nccl-logs/real/index.tsv (logs
// from public threads, as users pasted them): each is read as a log, and the
// cause the thread established is named by the rule (and text) the index gives.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "base/strings.h"
#include "diagnose/engine.h"
#include "diagnose/inputs.h"

namespace fabcheck::diagnose {
namespace {

struct Entry {
  std::string file, source, klass, cause, expect;
};

std::vector<Entry> ReadIndex() {
  std::ifstream in(std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/real/index.tsv");
  std::vector<Entry> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = Split(line, '\t');
    if (cols.size() < 5) {
      ADD_FAILURE() << "index line with fewer than 5 columns: " << line;
      continue;
    }
    out.push_back({cols[0], cols[1], cols[2], cols[3], cols[4]});
  }
  return out;
}

bool Contains(const model::Diagnosis& d, const std::string& text) {
  if (d.message.find(text) != std::string::npos || d.fix.find(text) != std::string::npos) return true;
  for (const auto& c : d.causes) {
    if (c.find(text) != std::string::npos) return true;
  }
  for (const auto& e : d.evidence) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

// "rule", "rule~text", "rule@warn": whether a diagnosis matches.
bool Named(const model::DiagnoseReport& r, const std::string& expect) {
  std::string rule = expect, text;
  bool at_least_warn = false;
  if (size_t at = rule.find('@'); at != std::string::npos) {
    at_least_warn = rule.substr(at + 1) == "warn";
    rule = rule.substr(0, at);
  }
  if (size_t at = rule.find('~'); at != std::string::npos) {
    text = rule.substr(at + 1);
    rule = rule.substr(0, at);
  }
  for (const auto& d : r.findings) {
    if (d.rule != rule) continue;
    if (!text.empty() && !Contains(d, text)) continue;
    if (at_least_warn && d.severity != model::Severity::kWarn && d.severity != model::Severity::kFail) continue;
    return true;
  }
  return false;
}

TEST(RealLogs, EveryIndexedLogIsReadAndItsCauseNamed) {
  auto index = ReadIndex();
  ASSERT_GE(index.size(), 17u);
  std::map<std::string, std::pair<int, int>> by_class;  // class -> named, total
  for (const auto& e : index) {
    SCOPED_TRACE(e.file + " (" + e.source + ")");
    auto ev = LoadEvidence({std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/real/" + e.file}, {});
    ASSERT_TRUE(ev.ok());
    ASSERT_EQ(ev->inputs.size(), 1u);
    EXPECT_EQ(ev->inputs[0].kind, "log");
    EXPECT_EQ(ev->inputs[0].status, "read");
    auto report = Diagnose(*ev);
    bool named = Named(report, e.expect);
    auto& [n, total] = by_class[e.klass];
    ++total;
    if (named) {
      ++n;
    } else {
      std::string got;
      for (const auto& d : report.findings) got += "\n  " + d.rule + ": " + d.message;
      ADD_FAILURE() << "expected " << e.expect << " for: " << e.cause << "\ngot:" << got;
    }
  }
  for (const auto& [klass, counts] : by_class) {
    std::printf("real logs, class %-10s named %d of %d\n", klass.c_str(), counts.first, counts.second);
  }
}

}  // namespace
}  // namespace fabcheck::diagnose

namespace fabcheck::diagnose {
namespace {

// A RAS report names the dead process's node; with the cluster's members
// known (a bundle), the finding names the member.
TEST(RasInput, DeadProcessJoinedToItsMember) {
  std::string path = std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/ras/ncclras-2.30-dead-process.txt";
  auto ev = LoadEvidence({path}, {});
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->inputs.size(), 1u);
  EXPECT_EQ(ev->inputs[0].kind, "nccl-ras");
  ASSERT_EQ(ev->ras.size(), 1u);
  ev->members.push_back({"node-b", {"10.10.1.12"}, {}});
  auto r = Diagnose(*ev);
  const model::Diagnosis* d = nullptr;
  for (const auto& f : r.findings) {
    if (f.rule == "nccl.ras.unreachable") d = &f;
  }
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, model::Severity::kFail);
  EXPECT_NE(d->message.find("member node-b"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("GPU 5"), std::string::npos) << d->message;
  EXPECT_NE(d->next.find("node-b"), std::string::npos) << d->next;
}

}  // namespace
}  // namespace fabcheck::diagnose

namespace fabcheck::diagnose {
namespace {

// Inspector output (NCCL 2.28.3+ profiler plugin, format v4): rank 3 runs its
// AllReduce at 40% of the others' bus bandwidth; with members known it is named
// by its member.
TEST(InspectorInput, SlowRankNamedWithItsMember) {
  std::string path = std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/inspector/inspector-v4-slow-rank.jsonl";
  auto ev = LoadEvidence({path}, {});
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->inputs.size(), 1u);
  EXPECT_EQ(ev->inputs[0].kind, "nccl-inspector");
  EXPECT_EQ(ev->inputs[0].status, "read");
  ASSERT_EQ(ev->inspector.size(), 1u);
  EXPECT_EQ(ev->inspector[0].file.records.size(), 12u);
  ev->members.push_back({"member-b", {"node-b"}, {}});
  auto r = Diagnose(*ev);
  std::vector<const model::Diagnosis*> slow;
  for (const auto& f : r.findings) {
    if (f.rule == "nccl.inspector.slow-rank") slow.push_back(&f);
  }
  ASSERT_EQ(slow.size(), 1u);  // only rank 3; healthy ranks within a few percent are not named
  EXPECT_NE(slow[0]->message.find("rank 3 on member-b"), std::string::npos) << slow[0]->message;
  EXPECT_NE(slow[0]->message.find("pid 62002"), std::string::npos) << slow[0]->message;
}

}  // namespace
}  // namespace fabcheck::diagnose
