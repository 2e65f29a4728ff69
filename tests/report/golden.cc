#include "golden.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fabcheck::report::testing {

std::string ReadTestData(const std::string& rel) {
  std::ifstream in(std::string(FABCHECK_TESTDATA_DIR) + "/" + rel, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string CheckGolden(const std::string& rel, const std::string& text) {
  const std::string path = std::string(FABCHECK_TESTDATA_DIR) + "/report/" + rel;
  const char* update = std::getenv("FABCHECK_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return "missing golden " + path + " (run with FABCHECK_UPDATE_GOLDENS=1 to create it)";
  std::stringstream s;
  s << in.rdbuf();
  const std::string want = s.str();
  if (want == text) return "";
  std::istringstream a(want), b(text);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ga = static_cast<bool>(std::getline(a, la));
    bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) return path + ": differs in line endings or trailing bytes";
    if (!ga || !gb || la != lb) {
      return path + ":" + std::to_string(line) + ":\n  golden: " + (ga ? la : "<end>") + "\n  output: " +
             (gb ? lb : "<end>") + "\n(FABCHECK_UPDATE_GOLDENS=1 rewrites the golden after an intended change)";
    }
  }
}

}  // namespace fabcheck::report::testing
