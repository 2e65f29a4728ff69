// One rank of a `fabcheck coll` rendezvous without CUDA or NCCL, for the
// multi-process tests: finds its rank as `fabcheck coll` does (fabcheck's own
// variables and torchrun, then sweep's launcher detection), meets the others
// through --rendezvous, and hands rank 0 its outcome. Prints one line per
// fact so the test can compare the ranks:
//   rank R of N id HEX local L/S
//   result R HOST DEVICE ERROR          (rank 0, one per rank)
//   error MESSAGE                       (and exit 3)
//
// rendezvous_peer --rendezvous SPEC [--host NAME] [--world N] [--token T]
//                 [--timeout S] [--fail MESSAGE]
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "coll/rendezvous.h"
#include "coll/tcp_rendezvous.h"
#include "net/rank.h"

namespace {

int Error(const fabcheck::Status& status) {
  std::cout << "error " << status.message() << std::endl;
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fabcheck;
  std::string spec, host = "peer-host", fail;
  int world = 0;
  coll::RankExchangeConfig config;
  config.timeout_seconds = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--rendezvous") spec = value;
    else if (flag == "--host") host = value;
    else if (flag == "--world") world = std::atoi(value.c_str());
    else if (flag == "--token") config.token = value;
    else if (flag == "--timeout") config.timeout_seconds = std::atof(value.c_str());
    else if (flag == "--fail") fail = value;
  }
  auto detected = net::DetectLaunchRank(net::ProcessEnv(), world);
  if (!detected.ok()) return Error(detected.status());
  if (!*detected) return Error(InvalidArgumentError("no rank variables set"));
  const net::LaunchRank* env = &**detected;
  config.rank = env->rank;
  config.world_size = env->size;
  auto rendezvous = coll::MakeRankExchange(spec, config);
  if (!rendezvous.ok()) return Error(rendezvous.status());
  coll::RankOutcome outcome;
  outcome.rank = env->rank;
  outcome.host = host;
  if (!fail.empty()) {
    outcome.error = fail;
    Status s = (*rendezvous)->Report(outcome);
    return Error(s.ok() ? InternalError("failed as asked: " + fail) : s);
  }
  dl::ncclUniqueId id{};
  if (env->rank == 0) {
    // Distinct per run, so a rank that read a stale id would show.
    for (size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>((::getpid() * 31 + i) & 0xff);
  }
  auto meeting = (*rendezvous)->Exchange(env->rank, host, id);
  if (!meeting.ok()) {
    outcome.error = meeting.status().message();
    (void)(*rendezvous)->Report(outcome);
    return Error(meeting.status());
  }
  std::cout << "rank " << env->rank << " of " << env->size << " id " << coll::UniqueIdToHex(meeting->id)
            << " local " << meeting->local_rank << "/" << meeting->local_size << std::endl;
  outcome.cuda_device = 100 + env->rank;
  outcome.name = "peer";
  if (env->rank != 0) {
    Status s = (*rendezvous)->Report(outcome);
    return s.ok() ? 0 : Error(s);
  }
  auto all = (*rendezvous)->Gather(outcome);
  if (!all.ok()) return Error(all.status());
  int failed = 0;
  for (const auto& o : *all) {
    std::cout << "result " << o.rank << " " << (o.host.empty() ? "-" : o.host) << " " << o.cuda_device << " "
              << (o.error.empty() ? "ok" : o.error) << std::endl;
    failed += o.error.empty() ? 0 : 1;
  }
  return failed ? 2 : 0;
}
