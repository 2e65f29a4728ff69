#include "net/rank.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "base/strings.h"

namespace fabcheck::net {
namespace {

constexpr int64_t kMaxRanks = 1'000'000;

struct Launcher {
  const char* rank;
  const char* size;        // nullptr: the launcher exports no size
  const char* local_rank;  // nullptr: none beside the rank
  bool needs_size;         // counts only when the size variable is set too
};

constexpr Launcher kLaunchers[] = {
    {"FABCHECK_RANK", "FABCHECK_WORLD_SIZE", "FABCHECK_LOCAL_RANK", true},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", true},  // torchrun
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", false},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", false},
    {"PMIX_RANK", nullptr, nullptr, false},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", false},
    {"JOB_COMPLETION_INDEX", nullptr, nullptr, false},
};

// Local ranks some launchers export without being the rank source (PMIx
// under Slurm or Open MPI).
constexpr const char* kLocalRankFallbacks[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"};

}  // namespace

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

Result<std::optional<LaunchRank>> DetectLaunchRank(const EnvLookup& env, int world) {
  auto number = [&](const char* name) -> Result<std::optional<int>> {
    auto v = env(name);
    if (!v) return std::optional<int>();
    auto n = ParseInt(Trim(*v));
    if (!n || *n < 0 || *n > kMaxRanks) {
      return InvalidArgumentError(
          fmt::format("environment {}='{}' is not a rank/size number (unset it, or fix the launcher)", name, *v));
    }
    return std::optional<int>(static_cast<int>(*n));
  };
  if (world < 0 || world > kMaxRanks) return InvalidArgumentError(fmt::format("--world {} is not a size", world));
  for (const Launcher& l : kLaunchers) {
    if (l.needs_size && (!env(l.rank) || !env(l.size))) continue;
    ASSIGN_OR_RETURN(std::optional<int> rank, number(l.rank));
    if (!rank) continue;
    LaunchRank r;
    r.rank = *rank;
    r.source = l.size ? fmt::format("{}/{}", l.rank, l.size) : std::string(l.rank);
    std::optional<int> size;
    if (l.size) {
      ASSIGN_OR_RETURN(size, number(l.size));
    } else if (std::string_view(l.rank) != "JOB_COMPLETION_INDEX") {
      // PMIx exports no size variable; borrow the launcher's, else --world.
      for (const char* alt : {"SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"}) {
        ASSIGN_OR_RETURN(size, number(alt));
        if (size) {
          r.source += fmt::format(" + {}", alt);
          break;
        }
      }
    }
    if (world > 0) {
      if (size && *size != world) {
        return InvalidArgumentError(
            fmt::format("--world {} disagrees with the launcher's size {} ({})", world, *size, r.source));
      }
      size = world;
    }
    if (!size) {
      return InvalidArgumentError(
          fmt::format("{} gives the rank but not the size: pass --world N (the number of "
                      "ranks, e.g. the Indexed Job's completions)",
                      l.rank));
    }
    r.size = *size;
    if (r.size < 1 || r.rank >= r.size) {
      return InvalidArgumentError(
          fmt::format("rank {} of {} ({}) is impossible: the rank must be below the size "
                      "(fix the launcher's rank variables)",
                      r.rank, r.size, r.source));
    }
    // The local rank is a hint: a garbage one is ignored, not an error.
    auto local_from = [&](const char* name) -> std::optional<int> {
      if (name == nullptr) return std::nullopt;
      auto v = env(name);
      if (!v) return std::nullopt;
      auto n = ParseInt(Trim(*v));
      if (!n || *n < 0 || *n >= 4096) return std::nullopt;
      return static_cast<int>(*n);
    };
    std::optional<int> local = local_from(l.local_rank);
    for (const char* alt : kLocalRankFallbacks) {
      if (local) break;
      local = local_from(alt);
    }
    // fabcheck's own launcher and torchrun start every rank of a node from one
    // process, so without a local rank the rank itself is the local one.
    r.local_rank = local.value_or(l.needs_size ? r.rank : -1);
    return std::optional<LaunchRank>(r);
  }
  return std::optional<LaunchRank>();
}

}  // namespace fabcheck::net
