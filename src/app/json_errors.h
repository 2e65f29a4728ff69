// `--json` promises one JSON document on stdout, errors included. Commands
// print their own document when they ran; when one could not run (exit 3) or
// its command line was wrong (exit 64) it has nothing of its own to print, so
// main prints a fabcheck.error/v1 document instead, made from the command's
// own error lines. That keeps the promise for every command in one place.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace fabcheck::app {

inline constexpr const char* kErrorSchema = "fabcheck.error/v1";

// What an exit code means (base/exit_codes.h): "pass", "warnings", "failed",
// "could-not-run", "usage", "unknown" for anything else.
const char* ExitMeaning(int code);

// The fabcheck.error/v1 document: schema, command, exit_code, outcome (the
// meaning above) and errors (the command's error lines, "fabcheck CMD: ..."
// prefixes kept, so they read as they do on stderr).
nlohmann::json ErrorDocument(const std::string& command, int exit_code, const std::vector<std::string>& errors);

// Whether the command line asks for JSON output: --json, or --format json
// (k8s lint, report). Looked up in argv, so it also works when CLI11 refused
// the command line.
bool WantsJson(const std::vector<std::string>& argv);

// The subcommand path that was run ("k8s lint"), from the parsed app.
std::string CommandPath(const CLI::App& root);

// While alive: counts what goes to std::cout, and copies what goes to
// std::cerr and the error log (still written there) so the command's error
// lines can become the error document's errors.
class OutputWatch {
 public:
  OutputWatch();
  ~OutputWatch();
  OutputWatch(const OutputWatch&) = delete;
  OutputWatch& operator=(const OutputWatch&) = delete;

  bool WroteStdout() const;
  // Error-level log lines, then lines written to std::cerr that start with
  // "fabcheck" (the commands' error lines; progress is left out), at most 20.
  std::vector<std::string> ErrorLines() const;

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace fabcheck::app
