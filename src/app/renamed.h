// Options renamed so that one name means one thing everywhere (the table is
// in tunables.cc, beside the options themselves; docs/tunables.md lists it).
#pragma once

#include <string>
#include <vector>

namespace fabcheck::app {

// An option spelled differently in the previous release. The old spelling
// still works for one release: the command line is rewritten to the new one
// before parsing, with a deprecation line on stderr.
struct RenamedOption {
  std::string command;           // "ladder", "k8s lint"
  std::string old_name;          // "--out"
  std::vector<std::string> now;  // {"--output"}; a flag may become an option and its value: {"--direction", "fan-out"}
  std::string why;               // the name it collided with, for the table
};
const std::vector<RenamedOption>& RenamedOptions();
// `args` are the arguments after the command words of `command`. Old
// spellings ("--out x", "--out=x") are replaced; each replacement adds a line
// to *notes ("fabcheck ladder: --out is deprecated; use --output").
std::vector<std::string> RewriteRenamedOptions(const std::string& command, const std::vector<std::string>& args,
                                               std::string* notes);

}  // namespace fabcheck::app
