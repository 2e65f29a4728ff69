#include "coll/rendezvous.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "base/json_text.h"
#include "base/strings.h"
#include "coll/tcp_rendezvous.h"
#include "control/api.h"

namespace fabcheck::coll {
namespace {

std::string ResultPath(const std::string& path, int rank) { return fmt::format("{}.rank{}.json", path, rank); }

// Write then rename, so a reader never sees half a file.
Status WriteAtomically(const std::string& path, std::string_view data) {
  std::string temp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) {
      return UnavailableError(fmt::format("cannot write {}: {} (choose a writable --rendezvous file:PATH)", temp,
                                          std::strerror(errno)));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return UnavailableError(fmt::format("cannot rename {} to {}: {}", temp, path, std::strerror(errno)));
  }
  return Status::Ok();
}

class FileRankExchange : public RankExchange {
 public:
  FileRankExchange(std::string path, const RankExchangeConfig& config) : path_(std::move(path)), config_(config) {}

  Result<Meeting> Exchange(int rank, const std::string&, const dl::ncclUniqueId& id) override {
    Meeting meeting;
    if (rank == 0) {
      // Results of an earlier run on the same path must not count as this one's.
      for (int r = 1; r < config_.world_size; ++r) std::remove(ResultPath(path_, r).c_str());
      RETURN_IF_ERROR(WriteAtomically(path_, std::string_view(id.internal, sizeof(id.internal))));
      meeting.id = id;
      return meeting;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(config_.timeout_seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(path_, std::ios::binary);
      if (in && in.read(meeting.id.internal, sizeof(meeting.id.internal)) &&
          in.gcount() == sizeof(meeting.id.internal)) {
        return meeting;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return DeadlineExceededError(fmt::format(
        "rank {} waited {:.0f} s for rank 0's NCCL id in {} (did rank 0 start? is the path shared by all ranks?)",
        rank, config_.timeout_seconds, path_));
  }

  Status Report(const RankOutcome& outcome) override {
    return WriteAtomically(ResultPath(path_, outcome.rank), ToJsonText(OutcomeToJson(outcome)));
  }

  Result<std::vector<RankOutcome>> Gather(const RankOutcome& own) override {
    std::vector<RankOutcome> out(static_cast<size_t>(config_.world_size));
    std::vector<bool> have(out.size(), false);
    out[0] = own;
    have[0] = true;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(config_.timeout_seconds);
    size_t count = 1;
    while (count < out.size() && std::chrono::steady_clock::now() < deadline) {
      for (int r = 1; r < config_.world_size; ++r) {
        if (have[r]) continue;
        std::ifstream in(ResultPath(path_, r));
        if (!in) continue;
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto o = OutcomeFromJson(nlohmann::json::parse(text, nullptr, false));
        if (!o.ok() || o->rank != r) {
          out[r].rank = r;
          out[r].error = fmt::format("{} is malformed: {}", ResultPath(path_, r),
                                     o.ok() ? "it names another rank" : o.status().message());
        } else {
          out[r] = *o;
        }
        have[r] = true;
        ++count;
      }
      if (count < out.size()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int r = 0; r < config_.world_size; ++r) {
      if (have[r]) continue;
      out[r].rank = r;
      out[r].error = fmt::format("rank {} never wrote {} within {:.0f} s (it failed or hung: see its own output)", r,
                                 ResultPath(path_, r), config_.timeout_seconds);
    }
    return out;
  }

  std::string Describe() const override { return "file:" + path_; }

 private:
  std::string path_;
  RankExchangeConfig config_;
};

}  // namespace

Result<std::unique_ptr<RankExchange>> MakeRankExchange(const std::string& spec, const RankExchangeConfig& config) {
  if (StartsWith(spec, "file:") && spec.size() > 5) {
    if (config.tls) {
      return InvalidArgumentError("--tls-* secures the tcp rendezvous (--coordinator); a file: rendezvous has no "
                                  "connection to secure");
    }
    return std::unique_ptr<RankExchange>(new FileRankExchange(spec.substr(5), config));
  }
  for (const char* scheme : {"tcp:", "join:"}) {
    if (!StartsWith(spec, scheme)) continue;
    auto hp = control::ParseHostPort(std::string_view(spec).substr(std::string_view(scheme).size()),
                                     kDefaultRendezvousPort);
    if (!hp.ok()) return InvalidArgumentError(fmt::format("--rendezvous {}: {}", spec, hp.status().message()));
    bool serve = std::string_view(scheme) == "tcp:" && config.rank == 0;
    ASSIGN_OR_RETURN(auto tcp, TcpRankExchange::Create(hp->host, hp->port, config, serve));
    return std::unique_ptr<RankExchange>(std::move(tcp));
  }
  return InvalidArgumentError(fmt::format(
      "unknown --rendezvous '{}' (use tcp:HOST:PORT with rank 0's address, or file:/shared/path/nccl-id that every "
      "rank sees)",
      spec));
}

}  // namespace fabcheck::coll
