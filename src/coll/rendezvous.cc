#include "coll/rendezvous.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "base/strings.h"

namespace fabcheck::coll {
namespace {

struct EnvNames {
  const char* rank;
  const char* size;
  const char* local;
};
constexpr EnvNames kEnvSets[] = {
    {"FABCHECK_RANK", "FABCHECK_WORLD_SIZE", "FABCHECK_LOCAL_RANK"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

Result<int> EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  auto parsed = ParseInt(value);
  if (!parsed || *parsed < 0 || *parsed > 1'000'000) {
    return InvalidArgumentError(fmt::format("{}={} is not a rank number (unset it, or fix the launcher)", name, value));
  }
  return static_cast<int>(*parsed);
}

class FileRendezvous : public Rendezvous {
 public:
  FileRendezvous(std::string path, double timeout) : path_(std::move(path)), timeout_(timeout) {}

  Result<dl::ncclUniqueId> Exchange(int rank, const dl::ncclUniqueId& id) override {
    if (rank == 0) {
      // Write then rename, so a reader never sees half an id.
      std::string temp = fmt::format("{}.tmp.{}", path_, ::getpid());
      {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(id.internal, sizeof(id.internal));
        if (!out) {
          return UnavailableError(fmt::format("cannot write the NCCL unique id to {}: {} (choose a writable "
                                              "--rendezvous file:PATH)",
                                              temp, std::strerror(errno)));
        }
      }
      if (std::rename(temp.c_str(), path_.c_str()) != 0) {
        return UnavailableError(fmt::format("cannot rename {} to {}: {}", temp, path_, std::strerror(errno)));
      }
      return id;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(path_, std::ios::binary);
      dl::ncclUniqueId got{};
      if (in && in.read(got.internal, sizeof(got.internal)) && in.gcount() == sizeof(got.internal)) return got;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return DeadlineExceededError(fmt::format(
        "rank {} waited {:.0f} s for rank 0's NCCL id in {} (did rank 0 start? is the path shared by all ranks?)",
        rank, timeout_, path_));
  }

  std::string Describe() const override { return "file:" + path_; }

 private:
  std::string path_;
  double timeout_;
};

}  // namespace

Result<RankEnv> RankFromEnvironment() {
  for (const auto& names : kEnvSets) {
    if (std::getenv(names.rank) == nullptr || std::getenv(names.size) == nullptr) continue;
    RankEnv env;
    ASSIGN_OR_RETURN(env.rank, EnvInt(names.rank, 0));
    ASSIGN_OR_RETURN(env.world_size, EnvInt(names.size, 1));
    ASSIGN_OR_RETURN(env.local_rank, EnvInt(names.local, env.rank));
    if (env.world_size < 1 || env.rank >= env.world_size) {
      return InvalidArgumentError(fmt::format("{}={} is not below {}={} (fix the launcher's rank variables)",
                                              names.rank, env.rank, names.size, env.world_size));
    }
    env.source = names.rank;
    return env;
  }
  return RankEnv{};
}

Result<std::unique_ptr<Rendezvous>> MakeRendezvous(const std::string& spec, double timeout_seconds) {
  if (StartsWith(spec, "file:") && spec.size() > 5) {
    return std::unique_ptr<Rendezvous>(new FileRendezvous(spec.substr(5), timeout_seconds));
  }
  return InvalidArgumentError(fmt::format(
      "unknown --rendezvous '{}' (use file:/shared/path/nccl-id; every rank must see the same path)", spec));
}

}  // namespace fabcheck::coll
