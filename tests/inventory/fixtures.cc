#include "fixtures.h"

#include "inventory_nodes.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace fabcheck::inventory::testing {
namespace fs = std::filesystem;

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "fabcheck-inventory-test-XXXXXX").string();
    dir = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~Scratch() {
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
  }
};

Scratch& GetScratch() {
  static Scratch scratch;
  return scratch;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string ScratchDir() { return GetScratch().dir; }

int RunCommand(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output->append(buffer, n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string FixtureDir(const std::string& name) {
  // Written once per test process into its scratch directory.
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::string dir = ScratchDir() + "/fixtures/" + name;
  if (fs::exists(dir)) return dir;
  std::string error = fixtures::WriteInventoryNode(name, dir);
  return error.empty() ? dir : "cannot generate fixture " + name + ": " + error;
}

nlohmann::json Comparable(const model::Inventory& inv) {
  nlohmann::json j = inv;
  j.erase("source");
  return j;
}

std::string CheckGolden(const std::string& name, const nlohmann::json& actual) {
  std::string path = std::string(FABCHECK_TESTDATA_DIR) + "/golden/" + name + ".json";
  const char* update = std::getenv("FABCHECK_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << actual.dump(2) << "\n";
    return "";
  }
  if (!fs::exists(path)) {
    return "no golden " + path + " (create it with FABCHECK_UPDATE_GOLDENS=1 and review it)";
  }
  nlohmann::json expected;
  try {
    expected = nlohmann::json::parse(ReadAll(path));
  } catch (const nlohmann::json::exception& e) {
    return "golden " + path + " is not JSON: " + e.what();
  }
  if (expected == actual) return "";
  nlohmann::json patch = nlohmann::json::diff(expected, actual);
  std::string text = patch.dump(1);
  if (text.size() > 4000) text = text.substr(0, 4000) + "...";
  return "differs from " + path + " (JSON patch from golden to actual; if intended, regenerate with "
         "FABCHECK_UPDATE_GOLDENS=1):\n" + text;
}

}  // namespace fabcheck::inventory::testing
