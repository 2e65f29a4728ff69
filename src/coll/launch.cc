#include "coll/launch.h"

#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/exit_codes.h"
#include "base/log.h"

extern char** environ;

namespace fabcheck::coll {
namespace {

std::string SelfExe() {
  // The path this binary was started by (the kernel's AT_EXECFN), so the
  // children are the same build as the parent.
  const char* exec_fn = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
  if (exec_fn == nullptr || *exec_fn == '\0') return "fabcheck";
  char resolved[PATH_MAX];
  if (::realpath(exec_fn, resolved) != nullptr) return resolved;
  return exec_fn;
}

void KillAll(const std::vector<pid_t>& pids, int sig) {
  for (pid_t pid : pids) {
    if (pid > 0) ::kill(pid, sig);
  }
}

}  // namespace

Result<int> LaunchLocalRanks(const LaunchSpec& spec) {
  if (spec.nprocs < 1) return InvalidArgumentError("--nprocs must be at least 1");
  const std::string exe = SelfExe();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < spec.nprocs; ++rank) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string entry(*e);
      std::string name = entry.substr(0, entry.find('='));
      if (name == "FABCHECK_RANK" || name == "FABCHECK_WORLD_SIZE" || name == "FABCHECK_LOCAL_RANK" ||
          spec.env.count(name)) {
        continue;
      }
      env_strings.push_back(std::move(entry));
    }
    for (const auto& [name, value] : spec.env) env_strings.push_back(name + "=" + value);
    env_strings.push_back(fmt::format("FABCHECK_RANK={}", rank));
    env_strings.push_back(fmt::format("FABCHECK_WORLD_SIZE={}", spec.nprocs));
    env_strings.push_back(fmt::format("FABCHECK_LOCAL_RANK={}", rank));
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = spec.argv;
    if (args.empty()) args.push_back(exe);
    args[0] = exe;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), envp.data());
    if (rc != 0) {
      KillAll(pids, SIGTERM);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      return UnavailableError(fmt::format("cannot start rank {} ({}): {}", rank, exe, std::strerror(rc)));
    }
    pids.push_back(pid);
  }

  int worst = kExitOk;
  int remaining = spec.nprocs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(spec.timeout_seconds);
  bool killed = false;
  while (remaining > 0) {
    int status = 0;
    pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      auto it = std::find(pids.begin(), pids.end(), done);
      if (it == pids.end()) continue;
      int rank = static_cast<int>(it - pids.begin());
      *it = -1;
      --remaining;
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitError;
      if (!WIFEXITED(status)) LOG_ERROR("coll", "rank {} ended by signal {}", rank, WTERMSIG(status));
      worst = std::max(worst, code);
      // A rank that could not run leaves the others waiting: stop them.
      if (code >= kExitError && remaining > 0 && !killed) {
        LOG_ERROR("coll", "rank {} failed (exit {}); stopping the other ranks", rank, code);
        KillAll(pids, SIGTERM);
        killed = true;
      }
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline && !killed) {
      LOG_ERROR("coll", "the ranks ran past {:.0f} s; stopping them", spec.timeout_seconds);
      KillAll(pids, SIGKILL);
      killed = true;
      worst = std::max(worst, kExitError);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return worst;
}

}  // namespace fabcheck::coll
