// Helpers of the namespace end-to-end tests (sweep, ladder): shell commands,
// spawning the real binary with its output in a log, waiting for a log line.
// The cluster itself is tests/sweep/netns_cluster.sh.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fabcheck::netns_test {

// Runs `command` quietly; its exit code (-1 when it did not exit).
inline int Sh(const std::string& command) {
  int rc = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Spawns `args` with stdout/stderr to `log` (or stderr to a pipe when
// err_pipe is given). Returns the pid.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& log, int* err_pipe = nullptr) {
  int fds[2] = {-1, -1};
  if (err_pipe && ::pipe(fds) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(err_pipe ? fds[1] : fd, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  if (err_pipe) {
    ::close(fds[1]);
    *err_pipe = fds[0];
  }
  return pid;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits up to `timeout` for `needle` to appear in the file at `path`.
inline bool WaitForText(const std::string& path, const std::string& needle, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (ReadFile(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Waits up to `timeout` for `pid`; its exit code, or -1 (killed then).
inline int WaitExit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace fabcheck::netns_test
