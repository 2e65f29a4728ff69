// Runs the fabcheck binary as a hostile user would: arguments passed as bytes
// (no shell), stdin from any path (/dev/zero, a FIFO), a wall-clock limit
// after which it is killed, and its peak memory from wait4().
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../sanitizer_allowance.h"

namespace fabcheck::hostile {

struct RunResult {
  int code = -1;        // exit status; -1 when killed or signalled
  int signal = 0;       // the signal that ended it, if any
  bool timed_out = false;
  double seconds = 0;
  long max_rss_mib = 0;
  std::string out;      // stdout
  std::string err;      // stderr
};

struct RunOptions {
  std::string stdin_path = "/dev/null";
  double timeout_s = 60;
  std::vector<std::string> env;  // "NAME=value", added to the environment
  // Called with the child's pid once it runs (to signal it mid-way).
  std::function<void(pid_t)> while_running;
  // RLIMIT_AS for the child, as `prlimit --as` or a pod's memory limit would
  // set (0: none). Not under AddressSanitizer, which reserves terabytes of
  // address space for its shadow memory.
  long address_space_mib = 0;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline RunResult RunFabcheck(const std::vector<std::string>& args, const RunOptions& options = {}) {
  RunResult run;
  char out_name[] = "/tmp/fabcheck-hostile-out-XXXXXX";
  char err_name[] = "/tmp/fabcheck-hostile-err-XXXXXX";
  int out_fd = ::mkstemp(out_name);
  int err_fd = ::mkstemp(err_name);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int in_fd = ::open(options.stdin_path.c_str(), O_RDONLY);
    if (in_fd < 0) ::_exit(120);
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    for (const auto& e : options.env) ::putenv(const_cast<char*>(e.c_str()));
#if !defined(__SANITIZE_ADDRESS__)
    if (options.address_space_mib > 0) {
      struct rlimit limit {};
      limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(options.address_space_mib) << 20;
      if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(122);
    }
#endif
    std::vector<char*> argv{const_cast<char*>(FABCHECK_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(FABCHECK_BINARY, argv.data());
    ::_exit(121);
  }
  std::thread watcher;
  if (options.while_running) watcher = std::thread([&] { options.while_running(pid); });
  int status = 0;
  struct rusage usage {};
  while (true) {
    pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start >
        std::chrono::duration<double>(options.timeout_s * test_support::kSanitizerTimeFactor)) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (watcher.joinable()) watcher.join();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.max_rss_mib = usage.ru_maxrss / 1024;
  if (WIFEXITED(status)) run.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  ::close(out_fd);
  ::close(err_fd);
  run.out = Slurp(out_name);
  run.err = Slurp(err_name);
  ::unlink(out_name);
  ::unlink(err_name);
  return run;
}

// What every hostile run must satisfy: it ended by itself, without a crash or
// an internal error, within its time.
inline std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.code) + (r.signal ? " signal " + std::to_string(r.signal) : "") +
         (r.timed_out ? " TIMED OUT" : "") + " in " + std::to_string(r.seconds) + " s, " +
         std::to_string(r.max_rss_mib) + " MiB\nstdout: " + r.out.substr(0, 2000) + "\nstderr: " +
         r.err.substr(0, 2000);
}

}  // namespace fabcheck::hostile
