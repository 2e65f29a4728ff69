#include "coll/launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
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

// The file actions that send one rank's stdout/stderr where the spec says.
class RankOutput {
 public:
  RankOutput() { ::posix_spawn_file_actions_init(&actions_); }
  ~RankOutput() { ::posix_spawn_file_actions_destroy(&actions_); }
  RankOutput(const RankOutput&) = delete;
  RankOutput& operator=(const RankOutput&) = delete;
  void Redirect(int fd, const std::string& pattern, int rank) {
    if (pattern.empty()) return;
    std::string path = pattern;
    if (auto at = path.find("{rank}"); at != std::string::npos) path.replace(at, 6, std::to_string(rank));
    paths_.push_back(std::move(path));
    ::posix_spawn_file_actions_addopen(&actions_, fd, paths_.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
  std::deque<std::string> paths_;  // addopen keeps the pointer: the strings must not move
};

}  // namespace

Result<LaunchOutcome> RunLocalRanks(const LaunchSpec& spec) {
  if (spec.nprocs < 1) return InvalidArgumentError("--nprocs must be at least 1");
  const int world = spec.world > 0 ? spec.world : spec.nprocs;
  if (spec.first_rank < 0 || spec.first_rank + spec.nprocs > world) {
    return InvalidArgumentError(fmt::format("ranks {}..{} do not fit in a world of {}", spec.first_rank,
                                            spec.first_rank + spec.nprocs - 1, world));
  }
  const std::string exe = spec.executable.empty() ? SelfExe() : spec.executable;
  std::vector<pid_t> pids;
  for (int local = 0; local < spec.nprocs; ++local) {
    const int rank = spec.first_rank + local;
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
    env_strings.push_back(fmt::format("FABCHECK_WORLD_SIZE={}", world));
    env_strings.push_back(fmt::format("FABCHECK_LOCAL_RANK={}", local));
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = spec.argv;
    if (args.empty()) args.push_back(exe);
    args[0] = exe;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    RankOutput output;
    output.Redirect(STDOUT_FILENO, spec.stdout_pattern, rank);
    output.Redirect(STDERR_FILENO, spec.stderr_pattern, rank);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, exe.c_str(), output.actions(), nullptr, argv.data(), envp.data());
    if (rc != 0) {
      // The ranks started so far wait for one that never comes: end them
      // outright (a blocking wait on a rank that ignores SIGTERM never returns).
      KillAll(pids, SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      return UnavailableError(fmt::format("cannot start rank {} ({}): {}", rank, exe, std::strerror(rc)));
    }
    pids.push_back(pid);
  }

  LaunchOutcome outcome;
  outcome.exit_codes.assign(spec.nprocs, kExitError);
  outcome.signalled.assign(spec.nprocs, false);
  int remaining = spec.nprocs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(spec.timeout_seconds);
  bool killed = false, hard_killed = false;
  auto hard_kill_at = deadline;  // moved earlier when SIGTERM goes out
  while (remaining > 0) {
    bool reaped = false;
    for (size_t local = 0; local < pids.size(); ++local) {
      if (pids[local] <= 0) continue;
      int status = 0;
      if (::waitpid(pids[local], &status, WNOHANG) != pids[local]) continue;
      reaped = true;
      pids[local] = -1;
      --remaining;
      const int rank = spec.first_rank + static_cast<int>(local);
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitError;
      if (!WIFEXITED(status)) {
        outcome.signalled[local] = true;
        // SIGTERM after another rank failed is expected, not news.
        if (!killed || WTERMSIG(status) != SIGTERM) LOG_ERROR("coll", "rank {} ended by signal {}", rank, WTERMSIG(status));
      }
      outcome.exit_codes[local] = code;
      outcome.worst = std::max(outcome.worst, code);
      // A rank that could not run leaves the others waiting: stop them.
      if (code >= kExitError && remaining > 0 && !killed) {
        LOG_ERROR("coll", "rank {} failed (exit {}); stopping the other ranks", rank, code);
        KillAll(pids, SIGTERM);
        killed = true;
        hard_kill_at =
            std::min(deadline, std::chrono::steady_clock::now() + std::chrono::duration<double>(spec.term_grace_seconds));
      }
    }
    if (reaped) continue;
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline && !hard_killed) {
      LOG_ERROR("coll", "the ranks ran past {:.0f} s; stopping them", spec.timeout_seconds);
      KillAll(pids, SIGKILL);
      killed = hard_killed = true;
      outcome.timed_out = true;
      outcome.worst = std::max(outcome.worst, kExitError);
    } else if (killed && now > hard_kill_at && !hard_killed) {
      LOG_ERROR("coll", "{} rank(s) still running {:.0f} s after SIGTERM; killing them", remaining,
                spec.term_grace_seconds);
      KillAll(pids, SIGKILL);
      hard_killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return outcome;
}

Result<int> LaunchLocalRanks(const LaunchSpec& spec) {
  ASSIGN_OR_RETURN(LaunchOutcome outcome, RunLocalRanks(spec));
  return outcome.worst;
}

}  // namespace fabcheck::coll
