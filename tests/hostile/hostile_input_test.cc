// Inputs that must not hurt: endless files and streams, FIFOs, binary,
// non-UTF-8 bytes under --json, YAML bombs and deep nesting. Each run must end
// by itself within its time, with bounded memory, a clear message and an exit
// code a script can use; never a crash, a hang or an "internal error".
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_fixture.h"
#include "run.h"

namespace fabcheck::hostile {
namespace {

namespace fs = std::filesystem;

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-hostile-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string Fifo(const std::string& name) {
    std::string path = (dir_ / name).string();
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  fs::path dir_;
};

// Ended by itself, no crash, no internal error, in time and memory.
void ExpectContained(const RunResult& r, double max_seconds, long max_rss_mib) {
  EXPECT_FALSE(r.timed_out) << Describe(r);
  EXPECT_EQ(r.signal, 0) << Describe(r);
  EXPECT_GE(r.code, 0) << Describe(r);
  EXPECT_LT(r.seconds, max_seconds * test_support::kSanitizerTimeFactor) << Describe(r);
  EXPECT_LT(r.max_rss_mib, max_rss_mib * test_support::kSanitizerMemoryFactor) << Describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << Describe(r);
}

TEST_F(HostileInputTest, EndlessFilesGivenAsPathsStopAtACap) {
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  std::string yaml = Write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n");
  const std::vector<std::vector<std::string>> runs = {
      {"nccl-log", "/dev/zero"},
      {"nccl-log", "/dev/urandom"},
      {"doctor", "--sysroot", node.root(), "--no-process-env", "--env-file", "/dev/zero"},
      {"doctor", "--sysroot", node.root(), "--no-process-env", "--profile", "/dev/zero"},
      {"doctor", "--sysroot", node.root(), "--no-process-env", "--profile", "/dev/urandom"},
      {"k8s", "lint", "--config", "/dev/zero", yaml},
      {"k8s", "lint", "/dev/zero"},
      {"k8s", "render", "--profile", "/dev/zero"},
  };
  for (const auto& args : runs) {
    SCOPED_TRACE(args[0] + " " + args[1] + " " + args.back());
    RunResult r = RunFabcheck(args);
    ExpectContained(r, 60, 1024);
    EXPECT_EQ(r.code, 3) << Describe(r);
    EXPECT_NE(r.err.find("larger than"), std::string::npos) << Describe(r);
  }
}

TEST_F(HostileInputTest, EndlessStdinStopsAtTheFileCap) {
  RunResult r = RunFabcheck({"k8s", "lint", "-"}, {.stdin_path = "/dev/zero"});
  ExpectContained(r, 60, 512);
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_NE(r.err.find("stdin"), std::string::npos) << Describe(r);
}

TEST_F(HostileInputTest, AFifoWithoutWriterNeverBlocks) {
  std::string fifo = Fifo("log.fifo");
  RunResult log = RunFabcheck({"nccl-log", fifo}, {.timeout_s = 30});
  ExpectContained(log, 10, 256);
  RunResult lint = RunFabcheck({"k8s", "lint", fifo}, {.timeout_s = 30});
  ExpectContained(lint, 10, 256);
}

TEST_F(HostileInputTest, BinaryInputIsAClearErrorOrFinding) {
  std::string junk;
  for (int i = 0; i < 200000; ++i) junk.push_back(static_cast<char>((i * 7919) & 0xff));
  std::string bin = Write("junk.yaml", junk);
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"nccl-log", bin},
           {"k8s", "lint", bin},
           {"k8s", "lint", "--config", bin, bin},
           {"doctor", "--sysroot", node.root(), "--no-process-env", "--profile", bin},
           {"doctor", "--sysroot", node.root(), "--no-process-env", "--env-file", bin}}) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    RunResult r = RunFabcheck(args);
    ExpectContained(r, 30, 512);
  }
}

bool ValidJson(const std::string& text) { return nlohmann::json::parse(text, nullptr, false).is_discarded() == false; }

TEST_F(HostileInputTest, JsonOutputSurvivesBytesThatAreNotUtf8) {
  const std::string bad = "\xff\xfe\xc3(\x80";
  std::string log = Write("bad.log", "node-" + bad + ":4101:4101 [0] NCCL INFO Bootstrap : Using ib0" + bad +
                                         ":192.168.10.1<0>\nnode-a:4101:4190 [0] NCCL WARN Call to " + bad +
                                         " failed\nnode-a:4101:4190 [0] NCCL INFO Using network " + bad + "\n");
  RunResult nccl = RunFabcheck({"nccl-log", "--json", log});
  ExpectContained(nccl, 30, 512);
  EXPECT_NE(nccl.code, 3) << Describe(nccl);
  ASSERT_TRUE(ValidJson(nccl.out)) << Describe(nccl);
  EXPECT_NE(nccl.out.find("\xef\xbf\xbd"), std::string::npos) << "invalid bytes become U+FFFD";

  std::string yaml = Write("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p" + bad +
                                           "\nspec:\n  containers:\n  - name: c" + bad + "\n    image: x" + bad + "\n");
  for (const char* format : {"json", "sarif"}) {
    RunResult lint = RunFabcheck({"k8s", "lint", "--format", format, yaml});
    ExpectContained(lint, 30, 512);
    EXPECT_NE(lint.code, 3) << Describe(lint);
    EXPECT_TRUE(ValidJson(lint.out)) << format << ": " << Describe(lint);
  }

  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  node.Write("proc/sys/kernel/hostname", "gpu-" + bad + "\n");
  node.Write(node.PortDir(0) + "/rate", "400 Gb/sec (4X " + bad + ")\n");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"inventory", "--json", "--sysroot", node.root()},
           {"doctor", "--json", "--no-process-env", "--sysroot", node.root()}}) {
    RunResult r = RunFabcheck(args);
    ExpectContained(r, 30, 512);
    EXPECT_NE(r.code, 3) << Describe(r);
    EXPECT_TRUE(ValidJson(r.out)) << args[0] << ": " << Describe(r);
    EXPECT_NE(r.out.find("gpu-\xef\xbf\xbd"), std::string::npos) << args[0] << ": " << r.out.substr(0, 400);
  }
}

std::string BillionLaughs(int levels) {
  std::string y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a0: &a0 [\"lol\",\"lol\",\"lol\"]\n";
  for (int i = 1; i < levels; ++i) {
    y += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) y += std::string(k ? "," : "") + "*a" + std::to_string(i - 1);
    y += "]\n";
  }
  return y;
}

TEST_F(HostileInputTest, YamlBombsAndDeepNestingAreBounded) {
  std::string laughs = Write("laughs.yaml", BillionLaughs(12));  // 3 * 9^11 nodes if expanded
  std::string deep_seq = Write("deep-seq.yaml", std::string(100000, '[') + std::string(100000, ']') + "\n");
  std::string deep_map;
  for (int i = 0; i < 100000; ++i) deep_map += "{a: ";
  deep_map += "1" + std::string(100000, '}') + "\n";
  std::string deep_map_path = Write("deep-map.yaml", deep_map);
  std::string indented;
  for (int i = 0; i < 5000; ++i) indented += std::string(i, ' ') + "- \n";
  std::string indented_path = Write("indented.yaml", indented);
  std::string many_docs;
  for (int i = 0; i < 200000; ++i) many_docs += "---\n";
  std::string many_docs_path = Write("docs.yaml", many_docs);

  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  for (const std::string& file : {laughs, deep_seq, deep_map_path, indented_path, many_docs_path}) {
    SCOPED_TRACE(file);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"k8s", "lint", file},
             {"k8s", "lint", "--format", "json", file},
             {"k8s", "lint", "--config", file, laughs},
             {"k8s", "render", "--profile", file},
             {"doctor", "--sysroot", node.root(), "--no-process-env", "--only", "L1", "--profile", file}}) {
      RunResult r = RunFabcheck(args, {.timeout_s = 120});
      ExpectContained(r, 60, 1024);
    }
  }
}

// Lists whose items are aliases of lists: every reader walks an alias as if
// written out, so these ~700 bytes are ten million Pods (the probe's 10.8 KB
// file took 2.3 GB).
std::string ListBomb(int levels) {
  std::string y = "apiVersion: v1\nkind: List\nitems:\n- &l0 {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: "
                  "{containers: [{name: c, image: \"x:1\"}]}}\n";
  for (int i = 1; i <= levels; ++i) {
    y += "- &l" + std::to_string(i) + " {apiVersion: v1, kind: List, items: [";
    for (int k = 0; k < 10; ++k) y += std::string(k ? "," : "") + "*l" + std::to_string(i - 1);
    y += "]}\n";
  }
  return y;
}

// Each map merges the one before it: n maps hold n^2/2 entries (the probe's
// 429 KB file of merge keys took 115 s; this one is ~440 KB).
std::string MergeChain(int n) {
  std::string y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chain}\nchain:\n  m0: &m0 {k0: v}\n";
  for (int i = 1; i < n; ++i) {
    y += "  m" + std::to_string(i) + ": &m" + std::to_string(i) + " {<<: *m" + std::to_string(i - 1) + ", k" +
         std::to_string(i) + ": v}\n";
  }
  return y;
}

// One map merging 400 anchored maps of 50 keys each: 20,000 merged keys, a
// large but honest use of merge keys that must be linted (within the budget).
std::string WideMerge() {
  std::string y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: wide}\nparts:\n";
  for (int i = 0; i < 400; ++i) {
    y += "  - &p" + std::to_string(i) + " {";
    for (int k = 0; k < 50; ++k) y += std::string(k ? ", " : "") + "key" + std::to_string(i) + "_" + std::to_string(k) + ": v";
    y += "}\n";
  }
  y += "data:\n  <<: [";
  for (int i = 0; i < 400; ++i) y += std::string(i ? ", " : "") + "*p" + std::to_string(i);
  y += "]\n";
  return y;
}

// Under a pod-like memory limit (RLIMIT_AS 1 GiB) and a generous time limit,
// the bombs stop at the expansion budget with an error naming the file and
// the budget; the honest wide merge is linted.
TEST_F(HostileInputTest, YamlAliasAndMergeBombsStopAtTheExpansionBudget) {
  const RunOptions limited{.timeout_s = 120, .address_space_mib = 1024};
  std::string list_bomb = Write("list-bomb.yaml", ListBomb(7));
  std::string merge_chain = Write("merge-chain.yaml", MergeChain(13000));
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  for (const std::string& file : {list_bomb, merge_chain}) {
    SCOPED_TRACE(file);
    RunResult lint = RunFabcheck({"k8s", "lint", file}, limited);
    ExpectContained(lint, 60, 512);
    EXPECT_EQ(lint.code, 2) << Describe(lint);
    EXPECT_NE(lint.out.find(file), std::string::npos) << Describe(lint);
    EXPECT_NE(lint.out.find("beyond the"), std::string::npos) << Describe(lint);
    EXPECT_NE(lint.out.find("100000 nodes"), std::string::npos) << Describe(lint);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"k8s", "lint", "--format", "json", file},
             {"k8s", "lint", "--config", file, list_bomb},
             {"k8s", "render", "--profile", file},
             {"doctor", "--sysroot", node.root(), "--no-process-env", "--only", "L1", "--profile", file}}) {
      RunResult r = RunFabcheck(args, limited);
      ExpectContained(r, 60, 512);
    }
    RunResult config = RunFabcheck({"k8s", "lint", "--config", file, list_bomb}, limited);
    EXPECT_EQ(config.code, 3) << Describe(config);
    EXPECT_NE(config.err.find(file), std::string::npos) << Describe(config);
    EXPECT_NE(config.err.find("100000 nodes"), std::string::npos) << Describe(config);
  }
  RunResult wide = RunFabcheck({"k8s", "lint", Write("wide-merge.yaml", WideMerge())}, limited);
  ExpectContained(wide, 60, 512);
  EXPECT_NE(wide.code, 3) << Describe(wide);
  EXPECT_EQ(wide.out.find("100000 nodes"), std::string::npos) << Describe(wide);
}


bool HasControlBytes(const std::string& text) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) return true;
  }
  return text.find("\xc2\x9b") != std::string::npos;
}

// Text outputs quote what came from outside: NCCL log lines, manifest values.
// An ESC sequence among them would reach the terminal of whoever reads the
// output; JSON outputs stay valid.
TEST_F(HostileInputTest, TextOutputsCarryNoControlSequences) {
  const std::string esc = "\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m";
  std::string log = Write("esc.log", "node-a:4101:4101 [0] NCCL INFO Bootstrap : Using ib0" + esc +
                                         ":192.168.10.1<0>\nnode-a:4101:4190 [0] NCCL WARN Call to " + esc +
                                         " failed\n");
  std::string yaml = Write("esc.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"p" + std::string("\\e[2J") +
                                           "\"\nspec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: x\n");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"nccl-log", log}, {"diagnose", log}, {"k8s", "lint", yaml}}) {
    SCOPED_TRACE(args[0]);
    RunResult r = RunFabcheck(args);
    ExpectContained(r, 30, 512);
    EXPECT_NE(r.code, 3) << Describe(r);
    EXPECT_FALSE(r.out.empty()) << Describe(r);
    EXPECT_FALSE(HasControlBytes(r.out)) << Describe(r);
    EXPECT_FALSE(HasControlBytes(r.err)) << Describe(r);
  }
  RunResult json = RunFabcheck({"nccl-log", "--json", log});
  EXPECT_TRUE(ValidJson(json.out)) << Describe(json);
  EXPECT_FALSE(HasControlBytes(json.out)) << Describe(json);
}

}  // namespace
}  // namespace fabcheck::hostile
