// One exit-code table for every command (README, src/base/exit_codes.h):
//   0 pass, 1 warnings, 2 a check or test failed, 3 could not run (bad or
//   unreadable input, nothing to judge, a library or device unavailable),
//   64 the command line was wrong.
// Every command `fabcheck --help` lists (and every subcommand of those that
// have them) runs here on pass, warn, fail, empty and unreadable inputs and a
// bad command line; a kind that cannot apply to a command says why. Each case
// runs twice: as people run it, and with --json, where stdout must hold one
// JSON document with a "schema" whatever the outcome, errors included.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

Outcome Fabcheck(const std::string& args, const std::string& dir) {
  Outcome r;
  const std::string err_file = dir + "/stderr.txt";
  std::string command = std::string(FABCHECK_BINARY) + " " + args + " 2>" + err_file + " </dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  return r;
}

// The kinds of input every command is tried on.
const std::vector<std::string> kKinds = {"pass", "warn", "fail", "empty", "unreadable", "usage"};

struct Case {
  std::string kind;  // one of kKinds
  std::string args;  // after the command; @D is the scratch folder, @T the test data, @S the source tree
  int code;
};

struct CommandTable {
  std::vector<Case> cases;
  std::map<std::string, std::string> not_applicable;  // kind -> why
};

// The table. Expected codes are the README's; where a command could not
// show a kind (a server has no "fail"), the reason is written down.
std::map<std::string, CommandTable> Table() {
  const std::string kDgx = "--sysroot @T/captures/dgx-h100-example.tar.gz";
  const std::string kH200 = "--sysroot @T/captures/h200-1gpu.tar.gz";
  const std::string kRender = "--profile @S/deploy/kubernetes/render-examples/sriov-roce/profile.yaml";
  const std::string kDigest = "@sha256:" + std::string(64, 'a');
  return {
      {"inventory",
       {{{"pass", kDgx, 0}, {"empty", "--sysroot @D/empty-dir", 3}, {"unreadable", "--sysroot @D/missing", 3},
         {"usage", "--sysroot ''", 64}},
        {{"warn", "inventory reports what it read; a file it could not read is a warning no bundled capture has"},
         {"fail", "inventory judges nothing: doctor does"}}}},
      {"snapshot",
       {{{"pass", kH200 + " -o @D/snap.tar.gz", 0}, {"unreadable", kH200 + " -o @D/missing/snap.tar.gz", 3},
         {"empty", "--sysroot @D/empty-dir -o @D/snap2.tar.gz", 3}, {"usage", "", 64}},
        {{"warn", "a capture records; it judges nothing"}, {"fail", "a capture records; it judges nothing"}}}},
      {"doctor",
       {{{"pass", kDgx + " --only nccl.ib-disabled", 0},
         {"fail", kDgx + " --profile @S/profiles/roce-8gpu.yaml", 2},
         {"empty", "--sysroot @D/empty-dir", 3},
         {"unreadable", "--sysroot @D/missing", 3},
         {"usage", kDgx + " --only L7", 64}},
        {{"warn", "no bundled capture has warnings only; checks_test covers the warning checks"}}}},
      {"perf serve",
       {{{"unreadable", "--port 0 --token-file @D/missing", 3}, {"usage", "--port 70000", 64}},
        {{"pass", "a server runs until stopped (tests/perf serve it end to end)"},
         {"warn", "a server judges nothing"}, {"fail", "a server judges nothing"},
         {"empty", "a server reads no input"}}}},
      {"perf run",
       {{{"unreadable", "127.0.0.1 --port 1 --timeout 2", 3}, {"usage", "127.0.0.1 --iters 0", 64}},
        {{"pass", "needs a perf server (tests/perf, tests/netns run it end to end)"},
         {"warn", "needs a perf server"}, {"fail", "needs a perf server"},
         {"empty", "reads no input file"}}}},
      {"gpu",
       {{{"unreadable", "--size 1M", 3}, {"usage", "--size 0", 64}},
        {{"pass", "needs a GPU (the gpu tests run it on one)"}, {"warn", "needs a GPU"}, {"fail", "needs a GPU"},
         {"empty", "reads no input file"}}}},
      {"coll",
       {{{"unreadable", "--sizes 1M --op all_reduce", 3}, {"usage", "--op bogus", 64}},
        {{"pass", "needs GPUs and NCCL (the gpu tests run it)"}, {"warn", "needs GPUs and NCCL"},
         {"fail", "needs GPUs and NCCL"}, {"empty", "reads no input file"}}}},
      {"nccl-log",
       {{{"pass", "@T/nccl-logs/nccl-2.18-ib-gdr.log", 0},
         {"warn", "@T/nccl-logs/nccl-2.26-p2p-disabled.log", 1},
         {"fail", "@T/nccl-logs/nccl-2.23-socket-fallback.log", 2},
         {"empty", "@D/empty.log", 3},
         {"unreadable", "@D/missing.log", 3},
         {"usage", "", 64}},
        {}}},
      {"kv models", {{{"pass", "", 0}, {"usage", "--bogus", 64}},
                     {{"warn", "a list of presets"}, {"fail", "a list of presets"}, {"empty", "reads no input"},
                      {"unreadable", "reads no input"}}}},
      {"kv size",
       {{{"pass", "--model Llama-3-70B", 0},
         {"empty", "--model @D/empty.json", 3},
         {"unreadable", "--model @D/missing.json", 3},
         {"usage", "--model Llama-3-70B --tokens 0", 64}},
        {{"warn", "sizing judges nothing"}, {"fail", "sizing judges nothing"}}}},
      {"kv run",
       {{{"unreadable", "127.0.0.1:1 --model Llama-3-8B --tokens 256 --timeout 2", 3},
         {"usage", "127.0.0.1:1 --model Llama-3-8B --tokens 0", 64}},
        {{"pass", "needs a perf server (tests/kv run it end to end)"}, {"warn", "needs a perf server"},
         {"fail", "needs a perf server"}, {"empty", "reads no input file"}}}},
      {"ladder",
       {{{"unreadable", "--agents-file @D/missing --out @D/b.tar.gz", 3},
         {"empty", "--agents-file @D/empty.log --out @D/b.tar.gz", 3},
         {"usage", "--out @D/b.tar.gz", 64}},
        {{"pass", "needs agents (tests/ladder runs it between network namespaces)"}, {"warn", "needs agents"},
         {"fail", "needs agents"}}}},
      {"sweep",
       {{{"unreadable", "--agents-file @D/missing", 3},
         {"empty", "--agents-file @D/empty.log", 3},
         {"usage", "--pattern bogus", 64}},
        {{"pass", "needs agents (tests/sweep runs it between network namespaces)"}, {"warn", "needs agents"},
         {"fail", "needs agents"}}}},
      {"agent",
       {{{"unreadable", "--listen 127.0.0.1:0 --token-file @D/missing", 3}, {"usage", "--perf-port 70000", 64}},
        {{"pass", "a server runs until stopped (tests/sweep serve it)"}, {"warn", "a server judges nothing"},
         {"fail", "a server judges nothing"}, {"empty", "a server reads no input"}}}},
      {"fabric",
       {{{"pass", "--from k8s @T/fabric/k8s-nodes.json", 0},
         {"empty", "--from k8s @D/empty.json", 3},
         {"unreadable", "--from k8s @D/missing.json", 3},
         {"usage", "--from bogus @T/fabric/k8s-nodes.json", 64}},
        {{"warn", "an import has no verdict; fabric --check-file is covered in tests/fabric"},
         {"fail", "an import has no verdict"}}}},
      {"sim",
       {{{"pass", "--nodes 16 --rails 1 --nodes-per-leaf 4 --spines 2 --strategy pairwise --faults @D/slow-node.json "
                  "--quiet",
          0},
         {"empty", "--nodes 16 --rails 1 --nodes-per-leaf 4 --spines 2 --faults @D/empty.json --quiet", 3},
         {"unreadable", "--nodes 16 --rails 1 --faults @D/missing.json --quiet", 3},
         {"usage", "--strategy bogus", 64}},
        {{"warn", "depends on the localiser's false findings at a seed; sim_test covers the scoring"},
         {"fail", "depends on the localiser missing a fault; sim_test covers the scoring"}}}},
      {"report",
       {{{"fail", "@T/bundles/example-8", 2},
         {"empty", "@D/empty-dir", 3},
         {"unreadable", "@D/missing", 3},
         {"usage", "@T/bundles/example-8 --format bogus", 64}},
        {{"pass", "no bundled bundle passes go-live (report_test builds passing ones)"},
         {"warn", "no bundled bundle is warnings-only"}}}},
      {"diagnose",
       {{{"pass", "@T/nccl-logs/nccl-2.18-ib-gdr.log", 0},
         {"warn", "@T/nccl-logs/nccl-2.26-p2p-disabled.log", 1},
         {"fail", "@T/nccl-logs/nccl-2.23-socket-fallback.log", 2},
         {"empty", "@D/empty.log", 3},
         {"unreadable", "@D/missing.log", 3},
         {"usage", "", 64}},
        {}}},
      {"exporter",
       {{{"pass", kDgx + " --once", 0},
         {"unreadable", "--sysroot @D/missing --once", 3},
         {"usage", "--listen bogus:port:9", 64}},
        {{"warn", "metrics have no verdict"}, {"fail", "metrics have no verdict"},
         {"empty", "an empty tree exports nothing, which is what it read"}}}},
      {"k8s lint",
       {{{"pass", "@S/tests/k8s/manifests/realistic/clean", 0},
         {"warn", "@S/tests/k8s/manifests/k8s.env.shell-syntax/positive.yaml", 1},
         {"fail", "@S/tests/k8s/manifests/k8s.rdma.no-ipc-lock/positive.yaml", 2},
         {"empty", "@D/empty-dir", 3},
         {"unreadable", "@D/missing.yaml", 3},
         {"usage", "@D/empty-dir --profile azure", 64}},
        {}}},
      {"k8s render",
       {{{"pass", kRender + " --image localhost/fabcheck:1" + kDigest, 0},
         {"warn", kRender, 1},
         {"unreadable", "--profile @D/missing.yaml", 3},
         {"usage", kRender + " --image 'not an image'", 64}},
        {{"fail", "rendering has no failure: a bad profile cannot render"},
         {"empty", "an empty profile is refused like a bad one (render_test)"}}}},
      {"k8s rules", {{{"pass", "", 0}, {"usage", "--bogus", 64}},
                     {{"warn", "a catalog"}, {"fail", "a catalog"}, {"empty", "reads no input"},
                      {"unreadable", "reads no input"}}}},
      {"tunables", {{{"pass", "", 0}, {"usage", "--bogus", 64}},
                    {{"warn", "a catalog"}, {"fail", "a catalog"}, {"empty", "reads no input"},
                     {"unreadable", "reads no input"}}}},
      {"explain", {{{"pass", "port.down", 0}, {"usage", "no.such.finding", 64}},
                   {{"warn", "a catalog"}, {"fail", "a catalog"}, {"empty", "reads no input"},
                    {"unreadable", "reads no input"}}}},
      {"version", {{{"pass", "", 0}, {"usage", "--bogus", 64}},
                   {{"warn", "prints the version"}, {"fail", "prints the version"}, {"empty", "reads no input"},
                    {"unreadable", "reads no input"}}}},
  };
}

std::string Expand(std::string args, const std::string& dir) {
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at = args.find(from); at != std::string::npos; at = args.find(from, at + to.size())) {
      args.replace(at, from.size(), to);
    }
  };
  replace("@D", dir);
  replace("@T", FABCHECK_TESTDATA_DIR);
  replace("@S", FABCHECK_SOURCE_DIR);
  return args;
}

// The commands `fabcheck --help` lists (and `fabcheck X --help` for those
// with subcommands): the table must cover exactly these.
std::vector<std::string> ListedCommands(const std::string& dir) {
  auto names_in = [&](const std::string& help) {
    std::vector<std::string> names;
    std::istringstream in(help);
    std::string line;
    bool in_list = false;
    while (std::getline(in, line)) {
      if (line.rfind("SUBCOMMANDS", 0) == 0 || line.rfind("Subcommands", 0) == 0) {
        in_list = true;
        continue;
      }
      if (!in_list) continue;
      if (line.empty() || line[0] != ' ') {
        if (!names.empty()) break;
        continue;
      }
      // A name starts after two spaces; deeper lines continue a description.
      if (line.size() < 3 || line[1] != ' ' || line[2] == ' ') continue;
      std::istringstream words(line);
      std::string name;
      words >> name;
      if (!name.empty()) names.push_back(name);
    }
    return names;
  };
  std::vector<std::string> leaves;
  for (const auto& name : names_in(Fabcheck("--help", dir).out)) {
    auto subs = names_in(Fabcheck(name + " --help", dir).out);
    if (subs.empty()) {
      leaves.push_back(name);
    } else {
      for (const auto& sub : subs) leaves.push_back(name + " " + sub);
    }
  }
  return leaves;
}

class ExitCodes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/fc-exit-codes-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/empty-dir");
    std::ofstream(dir_ + "/empty.log").flush();
    std::ofstream(dir_ + "/empty.json").flush();
    std::ofstream(dir_ + "/slow-node.json") << R"([{"kind": "node_slow", "element": "n0005", "factor": 0.3}])";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ExitCodes, TheTableCoversEveryListedCommandAndEveryKind) {
  auto table = Table();
  std::vector<std::string> listed = ListedCommands(dir_);
  ASSERT_GE(listed.size(), 20u) << "could not read the command list from fabcheck --help";
  std::set<std::string> seen;
  for (const auto& command : listed) {
    seen.insert(command);
    auto it = table.find(command);
    ASSERT_NE(it, table.end()) << "'" << command << "' is listed by fabcheck --help but has no exit-code cases here";
    for (const auto& kind : kKinds) {
      bool has_case = false;
      for (const auto& c : it->second.cases) has_case |= c.kind == kind;
      bool excused = it->second.not_applicable.count(kind) > 0;
      EXPECT_TRUE(has_case != excused) << command << " " << kind
                                       << ": give exactly one of a case or a reason it cannot apply";
    }
  }
  for (const auto& [command, unused] : table) {
    EXPECT_TRUE(seen.count(command)) << "'" << command << "' is in the table but not in fabcheck --help";
  }
}

TEST_F(ExitCodes, EveryCaseExitsAsTheTableSaysAndJsonIsOneDocumentWithASchema) {
  const bool has_gpu = fs::exists("/dev/nvidia0") || fs::exists("/dev/nvidiactl");
  for (const auto& [command, table] : Table()) {
    for (const auto& c : table.cases) {
      if ((command == "gpu" || command == "coll") && c.kind == "unreadable" && has_gpu) continue;  // it can run here
      const std::string args = command + " " + Expand(c.args, dir_);
      Outcome text = Fabcheck(args, dir_);
      EXPECT_EQ(text.code, c.code) << "fabcheck " << args << " (" << c.kind << ")\nstdout:\n"
                                   << text.out.substr(0, 2000) << "\nstderr:\n" << text.err.substr(0, 2000);
      // Every command takes --json, and stdout then holds one JSON document.
      Outcome json = Fabcheck(args + " --json", dir_);
      EXPECT_EQ(json.code, c.code) << "fabcheck " << args << " --json (" << c.kind << ")\nstdout:\n"
                                   << json.out.substr(0, 2000) << "\nstderr:\n" << json.err.substr(0, 2000);
      auto doc = nlohmann::json::parse(json.out, nullptr, false);
      ASSERT_FALSE(doc.is_discarded()) << "fabcheck " << args << " --json: stdout is not one JSON document:\n"
                                       << json.out.substr(0, 2000) << "\nstderr:\n" << json.err.substr(0, 1000);
      ASSERT_TRUE(doc.is_object() && doc.contains("schema") && doc["schema"].is_string())
          << "fabcheck " << args << " --json: no \"schema\":\n" << json.out.substr(0, 2000);
      if (c.code == 3 || c.code == 64) {
        // Could not run or a bad command line: either the command's own
        // document, or fabcheck.error/v1 naming the command and the error.
        if (doc["schema"] == "fabcheck.error/v1") {
          EXPECT_EQ(doc.value("exit_code", -1), c.code) << json.out;
          EXPECT_EQ(doc.value("command", ""), command) << json.out;
          EXPECT_FALSE(doc.value("errors", nlohmann::json::array()).empty()) << json.out;
        }
      }
    }
  }
}

TEST_F(ExitCodes, AnUnknownCommandWithJsonIsAUsageErrorDocument) {
  Outcome r = Fabcheck("bogus --json", dir_);
  EXPECT_EQ(r.code, 64);
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc.value("schema", ""), "fabcheck.error/v1");
  EXPECT_EQ(doc.value("outcome", ""), "usage");
}

}  // namespace
