// `fabcheck agent` and `fabcheck sweep`, reduced to the options
// tests/sweep/netns_clos.sh passes and linked against the sweep module only,
// so bench/sweep/clos_rates.sh can measure the localiser on real packets
// from a partial build. Same LocalAgent, same RunSweep, same JSON.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "base/units.h"
#include "control/netif.h"
#include "fabric/fabric.h"
#include "net/auth.h"
#include "agent/local_agent.h"
#include "agent/members.h"
#include "sweep/runner.h"
#include "sys/sysroot.h"

using namespace fabcheck;

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const std::string mode = argv[1];
  std::map<std::string, std::string> o;
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--quiet") continue;
    if (i + 1 < argc) o[k] = argv[++i];
  }
  auto token = net::ReadTokenFile(o["--token-file"]);
  if (!token.ok()) {
    std::cerr << token.status().message() << "\n";
    return 3;
  }
  if (mode == "agent") {
    auto listen = control::ParseHostPort(o["--listen"], 18521);
    if (!listen.ok()) return 64;
    agent::AgentConfig c;
    c.bind = listen->host;
    c.control_port = listen->port;
    c.token = *token;
    c.name = o["--name"];
    c.root = sys::SysRoot::Live();
    auto rail = control::RailFromInterface(o["--data-iface"]);
    if (!rail.ok()) return 3;
    c.rails.push_back(*rail);
    auto agent = agent::LocalAgent::Start(c);
    if (!agent.ok()) {
      std::cerr << agent.status().message() << "\n";
      return 3;
    }
    std::cerr << "serving\n";
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  auto fabric = fabric::LoadFabric(o["--topology"]);
  auto agents = agent::ParseAgentList(o["--agents"], 18521);
  auto bw_size = ParseSize(o["--bw-size"]);
  auto duration = ParseDurationSeconds(o["--duration"]);
  auto lat = ParseDurationSeconds(o["--lat-duration"]);
  if (!fabric.ok() || !agents.ok() || !bw_size.ok() || !duration.ok() || !lat.ok()) return 64;
  sweep::SweepOptions so;
  so.pattern = sweep::Pattern::kAdaptive;
  so.token = *token;
  so.test.bw_size = *bw_size;
  so.test.bw_duration_s = *duration;
  so.test.lat_duration_s = *lat;
  so.max_parallel_pairs = std::stoi(o["--parallel"]);
  so.fabric = &*fabric;
  auto result = sweep::RunSweep(*agents, so);
  if (!result.ok()) {
    std::cerr << result.status().message() << "\n";
    return 3;
  }
  nlohmann::json j = *result;
  std::ofstream(o["--output"]) << j.dump(2) << "\n";
  for (const auto& f : result->verdict.findings) std::cout << f.id << " " << f.object << ": " << f.message << "\n";
  switch (result->verdict.severity) {
    case model::Severity::kPass:
    case model::Severity::kInfo: return 0;
    case model::Severity::kWarn: return 1;
    case model::Severity::kFail: return 2;
    default: return 3;
  }
}
