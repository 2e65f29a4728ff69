// The fabcheck binary's command line: every value a user can get wrong is a
// usage error (exit 64) that names the option and what it accepts.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Outcome {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Outcome Fabcheck(const std::string& args) {
  Outcome r;
  std::string command = std::string(FABCHECK_BINARY) + " " + args + " 2>&1 </dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void ExpectUsage(const std::string& args, const std::string& needle) {
  Outcome r = Fabcheck(args);
  EXPECT_EQ(r.code, 64) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << ": expected '" << needle << "' in:\n" << r.out;
}

TEST(Cli, UnknownCommandsAndOptionsSayWhatExists) {
  ExpectUsage("--bogus", "unknown option '--bogus'");
  ExpectUsage("--bogus", "commands: ");
  ExpectUsage("bogus", "unknown command 'bogus'");
  ExpectUsage("invetory", "did you mean 'inventory'?");
  ExpectUsage("", "no command given");
  ExpectUsage("inventory --bogus", "--bogus");
}

TEST(Cli, PortsOutOfRangeAreRefused) {
  // It used to listen on 70000 - 65536 = 4464.
  ExpectUsage("perf serve --port 70000", "--port");
  ExpectUsage("perf serve --port 70000", "0..65535");
  ExpectUsage("perf serve --port -1", "--port");
  ExpectUsage("perf run host --port 0", "1..65535");
}

TEST(Cli, CountsAndTimeoutsAreChecked) {
  // -1 was reported as 18446744073709551615, 0 silently meant the default.
  ExpectUsage("perf run host --iters -1", "--iters");
  ExpectUsage("perf run host --iters 0", "0 is out of range: 1..");
  ExpectUsage("perf run host --iters 12x", "not a whole number");
  for (const char* bad : {"0", "-1", "nan", "inf", "soon"}) {
    ExpectUsage(std::string("perf run host --timeout ") + bad, "--timeout");
    ExpectUsage(std::string("perf serve --timeout ") + bad, "duration > 0");
  }
  ExpectUsage("perf serve --max-clients 0", "--max-clients");
  ExpectUsage("perf run host --streams 0", "--streams");
}

TEST(Cli, EmptyPathsAndDashAreNotSilentlySomethingElse) {
  // An empty --sysroot used to read the live node.
  ExpectUsage("inventory --sysroot ''", "empty path");
  ExpectUsage("doctor --sysroot ''", "empty path");
  ExpectUsage("exporter --sysroot ''", "empty path");
  ExpectUsage("inventory --sysroot -", "'-'");
  ExpectUsage("perf serve --token-file ''", "empty path");
}

TEST(Cli, SnapshotToDashIsStdoutNotAFileNamedDash) {
  // -o - wrote a file named '-'.
  std::string dir = ::testing::TempDir() + "/fc-cli-dash";
  std::string capture = std::string(FABCHECK_TESTDATA_DIR) + "/captures/h200-1gpu.tar.gz";
  std::string command = "mkdir -p " + dir + " && cd " + dir + " && rm -f ./- && " + FABCHECK_BINARY +
                        " snapshot --sysroot " + capture + " -o - 2>/dev/null | head -c 2 | od -An -tx1";
  FILE* p = ::popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[64] = {};
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, p);
  ::pclose(p);
  EXPECT_NE(std::string(buf, n).find("1f 8b"), std::string::npos) << "not a gzip stream on stdout: " << buf;
  std::ifstream dash(dir + "/-");
  EXPECT_FALSE(dash.good()) << "a file named '-' was written";
}

TEST(Cli, TheTunablesTableIsTheDocumentation) {
  Outcome r = Fabcheck("tunables --markdown");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(std::string(FABCHECK_SOURCE_DIR) + "/docs/tunables.md");
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_EQ(doc.str(), r.out) << "docs/tunables.md is stale: run fabcheck tunables --markdown > docs/tunables.md";
  EXPECT_NE(r.out.find("| `--port` | port 0..65535, 0 = any free port | `18520` |"), std::string::npos) << r.out;
}

}  // namespace
