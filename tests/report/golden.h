// Golden files for the report tests: compare a rendered text with a checked-in
// file; FABCHECK_UPDATE_GOLDENS=1 rewrites the file instead (review the diff).
#pragma once

#include <string>

namespace fabcheck::report::testing {

// "" when `text` equals the file under tests/data/report/<rel>, else a message
// naming the first differing line.
std::string CheckGolden(const std::string& rel, const std::string& text);
std::string ReadTestData(const std::string& rel);  // under tests/data/

}  // namespace fabcheck::report::testing
