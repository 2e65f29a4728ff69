// Test helpers: run a command, start a background server on loopback, fetch
// a URL, find a tool. Only processes these helpers start are ever stopped.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace fabcheck::telemetry::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};
// Runs `command` with /bin/sh; stdin from `input_file` when not empty.
CommandResult RunCommand(const std::string& command);

// The full path of `name` in PATH or /usr/bin, /usr/sbin; "" when absent.
std::string FindTool(const std::string& name);

// A free TCP port on 127.0.0.1 (bound then released).
int FreePort();

class BackgroundProcess {
 public:
  BackgroundProcess() = default;
  ~BackgroundProcess() { Stop(); }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  // argv[0] is the program path; output goes to `log_path`.
  bool Start(const std::vector<std::string>& argv, const std::string& log_path);
  void Stop();
  bool running() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// GET http://127.0.0.1:<port><path>; retries until `timeout_s`. Returns the body
// of a 200 answer, or "" on timeout.
std::string HttpGet(int port, const std::string& path, double timeout_s);

// Prometheus text: name{labels} -> value, one entry per sample line.
struct ParsedSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  std::string Label(const std::string& key) const;
};
std::vector<ParsedSample> ParsePrometheusText(const std::string& text);

}  // namespace fabcheck::telemetry::testing
