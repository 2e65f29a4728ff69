// `fabcheck sim --json`, reduced to the options bench/sim/sim_table.py
// passes and linked against the simulator only, so the table can be
// measured from a partial build. Same RunSim, same JSON.
#include <iostream>
#include <map>
#include <string>

#include "sim/sim.h"

using namespace fabcheck;

int main(int argc, char** argv) {
  std::map<std::string, std::string> o;
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--json" || k == "--quiet") continue;
    if (i + 1 < argc) o[k] = argv[++i];
  }
  sim::SimOptions so;
  so.clos.nodes = std::stoi(o["--nodes"]);
  so.clos.rails = std::stoi(o["--rails"]);
  so.clos.nodes_per_leaf = std::stoi(o["--nodes-per-leaf"]);
  so.clos.spines = std::stoi(o["--spines"]);
  auto strategy = sweep::ParsePattern(o["--strategy"]);
  if (!strategy.ok()) return 64;
  so.strategy = *strategy;
  so.seed = std::stoull(o["--seed"]);
  so.realistic_mix = o["--fault-mix"] == "realistic";
  so.harsh_mix = o["--fault-mix"] == "harsh";
  auto r = sim::RunSim(so);
  if (!r.ok()) {
    std::cerr << r.status().message() << "\n";
    return 3;
  }
  std::cout << r->dump() << "\n";
  return 0;
}
