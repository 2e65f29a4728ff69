// The rendezvous of `fabcheck coll` between processes: ranks started as a
// launcher would (Slurm, Open MPI, an Indexed Job), found by the same code as
// `coll` uses, meeting over TCP on loopback, and, as root, across two network
// namespaces (two "nodes"). Each rank is rendezvous_peer (no CUDA or NCCL).
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

namespace {

struct Rank {
  pid_t pid = -1;
  std::string log;
  int code = -1;
  std::string out;
};

// Starts the peer with `env` added (launcher variables), stdout and stderr to a log.
Rank Start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
           const std::string& log, const std::string& netns = "") {
  Rank r;
  r.log = log;
  r.pid = ::fork();
  if (r.pid == 0) {
    for (const char* name : {"FABCHECK_RANK", "FABCHECK_WORLD_SIZE", "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                             "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "SLURM_NTASKS",
                             "JOB_COMPLETION_INDEX"}) {
      ::unsetenv(name);
    }
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<std::string> all;
    if (!netns.empty()) all = {"ip", "netns", "exec", netns};
    all.push_back(COLL_RENDEZVOUS_PEER);
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  return r;
}

// Waits for every rank (killing what is left after `seconds`) and reads the logs.
void Finish(std::vector<Rank>& ranks, double seconds = 20) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (auto& r : ranks) {
    int status = 0;
    while (::waitpid(r.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(r.pid, SIGKILL);
        ::waitpid(r.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(r.log);
    std::stringstream ss;
    ss << in.rdbuf();
    r.out = ss.str();
  }
}

// A port that was free a moment ago (rank 0 binds it itself).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string IdOf(const std::string& out) {
  std::smatch m;
  std::regex re("id ([0-9a-f]{256})");
  return std::regex_search(out, m, re) ? m[1].str() : "";
}

std::string Dir() {
  std::string d = ::testing::TempDir() + "/fccoll-rdv-" + std::to_string(::getpid());
  std::system(("mkdir -p " + d).c_str());
  return d;
}

TEST(RendezvousProcesses, SlurmRanksOnTwoHostsMeetAndRankZeroListsAll) {
  const std::string dir = Dir();
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> ranks;
  // Rank 0 last, so the others must retry until it listens.
  for (int r = 3; r >= 0; --r) {
    ranks.push_back(Start({"--rendezvous", spec, "--host", r < 2 ? "nodeA" : "nodeB", "--token", "t0k"},
                          {{"SLURM_PROCID", std::to_string(r)}, {"SLURM_NTASKS", "4"}},
                          dir + "/slurm." + std::to_string(r) + ".log"));
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  Finish(ranks);
  const std::string id = IdOf(ranks[3].out);
  ASSERT_FALSE(id.empty()) << ranks[3].out;
  for (int i = 0; i < 4; ++i) {
    int r = 3 - i;
    EXPECT_EQ(ranks[i].code, 0) << "rank " << r << ": " << ranks[i].out;
    EXPECT_EQ(IdOf(ranks[i].out), id) << "rank " << r;
  }
  // Local ranks from the host names: nodeA holds 0,1 and nodeB 2,3.
  EXPECT_NE(ranks[0].out.find("rank 3 of 4 id " + id + " local 1/2"), std::string::npos) << ranks[0].out;
  EXPECT_NE(ranks[1].out.find("local 0/2"), std::string::npos) << ranks[1].out;
  for (int r = 0; r < 4; ++r) {
    std::string line = "result " + std::to_string(r) + " " + (r < 2 ? "nodeA" : "nodeB") + " " +
                       std::to_string(100 + r) + " ok";
    EXPECT_NE(ranks[3].out.find(line), std::string::npos) << line << "\n" << ranks[3].out;
  }
}

TEST(RendezvousProcesses, OpenMpiAndIndexedJobVariablesWorkToo) {
  const std::string dir = Dir();
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(Start({"--rendezvous", spec},
                          {{"OMPI_COMM_WORLD_RANK", std::to_string(r)}, {"OMPI_COMM_WORLD_SIZE", "2"}},
                          dir + "/ompi." + std::to_string(r) + ".log"));
  }
  Finish(ranks);
  for (auto& r : ranks) EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(IdOf(ranks[0].out), IdOf(ranks[1].out));

  const std::string spec2 = "tcp:127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> job;
  for (int r = 0; r < 3; ++r) {
    job.push_back(Start({"--rendezvous", spec2, "--world", "3"}, {{"JOB_COMPLETION_INDEX", std::to_string(r)}},
                        dir + "/job." + std::to_string(r) + ".log"));
  }
  Finish(job);
  for (auto& r : job) EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(job[0].out.find("result 2 peer-host 102 ok"), std::string::npos) << job[0].out;
}

TEST(RendezvousProcesses, ARankThatNeverComesIsNamed) {
  const std::string dir = Dir();
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> ranks;
  ranks.push_back(Start({"--rendezvous", spec, "--timeout", "1.5"}, {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}},
                        dir + "/miss.0.log"));
  ranks.push_back(Start({"--rendezvous", spec, "--timeout", "15"}, {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "3"}},
                        dir + "/miss.1.log"));
  Finish(ranks);
  EXPECT_EQ(ranks[0].code, 3);
  EXPECT_NE(ranks[0].out.find("2 of 3 ranks arrived"), std::string::npos) << ranks[0].out;
  EXPECT_NE(ranks[0].out.find("missing rank 2"), std::string::npos) << ranks[0].out;
  // Rank 1 learns that rank 0 gave up instead of waiting out its own timeout.
  EXPECT_EQ(ranks[1].code, 3);
  EXPECT_NE(ranks[1].out.find("the run stopped: rank 0 (peer-host) failed before the ranks met"), std::string::npos)
      << ranks[1].out;
}

TEST(RendezvousProcesses, ARankStartedForAnotherWorldSizeStopsTheRun) {
  const std::string dir = Dir();
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.push_back(Start({"--rendezvous", spec, "--timeout", "15"},
                          {{"SLURM_PROCID", std::to_string(r)}, {"SLURM_NTASKS", r == 2 ? "4" : "3"}},
                          dir + "/size." + std::to_string(r) + ".log"));
  }
  auto start = std::chrono::steady_clock::now();
  Finish(ranks);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(12));  // not the 15 s timeout
  const std::string why = "rank 2 (127.0.0.1) was started for a world of 4 ranks, but this rendezvous expects 3";
  for (auto& r : ranks) {
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
  }
}

TEST(RendezvousProcesses, ARankFailingBeforeTheMeetingStopsTheOthers) {
  const std::string dir = Dir();
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> ranks;
  ranks.push_back(Start({"--rendezvous", spec, "--timeout", "30"}, {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}},
                        dir + "/fail.0.log"));
  ranks.push_back(Start({"--rendezvous", spec, "--fail", "cudaSetDevice(1): invalid device ordinal"},
                        {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, dir + "/fail.1.log"));
  auto start = std::chrono::steady_clock::now();
  Finish(ranks);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));  // not rank 0's 30 s
  EXPECT_EQ(ranks[0].code, 3);
  EXPECT_NE(ranks[0].out.find("rank 1 (peer-host) failed before the ranks met: cudaSetDevice(1)"), std::string::npos)
      << ranks[0].out;
}

// The real binary, ranks started as srun would, on a machine without a GPU:
// every rank stops with the reason and exit 3 within seconds; none waits for
// the others at the rendezvous.
TEST(RendezvousProcesses, CollRanksWithoutAGpuStopQuickly) {
  if (::access("/dev/nvidia0", F_OK) == 0) GTEST_SKIP() << "a GPU is present: the real run is tested on the GPU machine";
  const std::string dir = Dir();
  const std::string coordinator = "127.0.0.1:" + std::to_string(FreePort());
  std::vector<Rank> ranks;
  for (int r = 0; r < 2; ++r) {
    Rank k;
    k.log = dir + "/bin." + std::to_string(r) + ".log";
    k.pid = ::fork();
    if (k.pid == 0) {
      ::unsetenv("FABCHECK_RANK");
      ::unsetenv("RANK");
      ::setenv("SLURM_PROCID", std::to_string(r).c_str(), 1);
      ::setenv("SLURM_NTASKS", "2", 1);
      int fd = ::open(k.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execl(FABCHECK_BINARY, FABCHECK_BINARY, "coll", "--coordinator", coordinator.c_str(), "--nccl-log-dir",
              (dir + "/nccl").c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ranks.push_back(k);
  }
  auto start = std::chrono::steady_clock::now();
  Finish(ranks, 60);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ranks[r].code, 3) << ranks[r].out;
    EXPECT_NE(ranks[r].out.find("fabcheck coll: rank " + std::to_string(r) + ": "), std::string::npos) << ranks[r].out;
  }
}

// Two namespaces joined by a veth pair: rank 0 on "nodeA" (10.79.0.1), ranks
// 1 and 2 on "nodeB" (10.79.0.2), as on two machines.
class RendezvousNetns : public ::testing::Test {
 protected:
  static int Sh(const std::string& c) {
    int rc = std::system((c + " >/dev/null 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
    if (Sh("command -v ip") != 0) GTEST_SKIP() << "needs iproute2 (ip)";
    TearDownNamespaces();
    const std::string setup =
        "ip netns add fccoll-a && ip netns add fccoll-b && "
        "ip link add fccoll-va type veth peer name fccoll-vb && "
        "ip link set fccoll-va netns fccoll-a && ip link set fccoll-vb netns fccoll-b && "
        "ip -n fccoll-a addr add 10.79.0.1/24 dev fccoll-va && ip -n fccoll-b addr add 10.79.0.2/24 dev fccoll-vb && "
        "ip -n fccoll-a link set fccoll-va up && ip -n fccoll-b link set fccoll-vb up && "
        "ip -n fccoll-a link set lo up && ip -n fccoll-b link set lo up";
    if (Sh(setup) != 0) {
      TearDownNamespaces();
      GTEST_SKIP() << "cannot create network namespaces here (ip netns add failed)";
    }
    made_ = true;
  }
  void TearDown() override {
    if (made_) TearDownNamespaces();
  }
  static void TearDownNamespaces() {
    Sh("ip netns del fccoll-a");
    Sh("ip netns del fccoll-b");
  }
  bool made_ = false;
};

TEST_F(RendezvousNetns, RanksOnTwoNodesMeetOverTheirLink) {
  const std::string dir = Dir();
  const std::string spec = "tcp:10.79.0.1:18599";
  std::vector<Rank> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.push_back(Start({"--rendezvous", spec, "--host", r == 0 ? "nodeA" : "nodeB", "--token", "netns"},
                          {{"SLURM_PROCID", std::to_string(r)}, {"SLURM_NTASKS", "3"}},
                          dir + "/netns." + std::to_string(r) + ".log", r == 0 ? "fccoll-a" : "fccoll-b"));
  }
  Finish(ranks);
  for (auto& r : ranks) EXPECT_EQ(r.code, 0) << r.out;
  const std::string id = IdOf(ranks[0].out);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(IdOf(ranks[1].out), id);
  EXPECT_EQ(IdOf(ranks[2].out), id);
  EXPECT_NE(ranks[0].out.find("local 0/1"), std::string::npos);
  EXPECT_NE(ranks[2].out.find("local 1/2"), std::string::npos) << ranks[2].out;
  EXPECT_NE(ranks[0].out.find("result 2 nodeB 102 ok"), std::string::npos) << ranks[0].out;

  // Rank 1 without the token: refused, and named by rank 0 when it gives up.
  const std::string spec2 = "tcp:10.79.0.1:18598";
  std::vector<Rank> bad;
  bad.push_back(Start({"--rendezvous", spec2, "--token", "netns", "--timeout", "1.5"},
                      {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}, dir + "/tok.0.log", "fccoll-a"));
  bad.push_back(Start({"--rendezvous", spec2, "--token", "other"}, {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}},
                      dir + "/tok.1.log", "fccoll-b"));
  Finish(bad);
  EXPECT_EQ(bad[1].code, 3);
  EXPECT_NE(bad[1].out.find("refused our token"), std::string::npos) << bad[1].out;
  EXPECT_EQ(bad[0].code, 3);
  EXPECT_NE(bad[0].out.find("missing rank 1"), std::string::npos) << bad[0].out;
  EXPECT_NE(bad[0].out.find("10.79.0.2 sent a request without the right token"), std::string::npos) << bad[0].out;
}

}  // namespace
