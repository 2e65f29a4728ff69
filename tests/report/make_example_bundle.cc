// Writes the example bundles of tests/data/bundles/ (see example_cluster.h):
//   make_example_bundle DIR            -> DIR/example-8, DIR/example-8-baseline
//   make_example_bundle --members N OUT -> one bundle of N members (benchmarks)
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "example_cluster.h"

int main(int argc, char** argv) {
  using namespace fabcheck::report::example;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "--members") {
    ClusterSpec spec;
    spec.members = std::atoi(args[1].c_str());
    if (spec.members < 2 || spec.members > 100000) {
      std::cerr << "make_example_bundle: --members wants 2 to 100000\n";
      return 64;
    }
    auto e = MakeCluster(spec);
    if (!e.ok()) {
      std::cerr << "make_example_bundle: " << e.status().message() << "\n";
      return 3;
    }
    auto s = WriteBundle(*e, args[2]);
    if (!s.ok()) {
      std::cerr << "make_example_bundle: " << s.message() << "\n";
      return 3;
    }
    return 0;
  }
  if (args.size() != 1) {
    std::cerr << "usage: make_example_bundle DIR | make_example_bundle --members N OUT\n";
    return 64;
  }
  for (bool baseline : {false, true}) {
    ClusterSpec spec;
    spec.baseline = baseline;
    auto e = MakeCluster(spec);
    if (!e.ok()) {
      std::cerr << "make_example_bundle: " << e.status().message() << "\n";
      return 3;
    }
    std::string out = args[0] + (baseline ? "/example-8-baseline" : "/example-8");
    std::filesystem::remove_all(out);
    auto s = WriteBundle(*e, out);
    if (!s.ok()) {
      std::cerr << "make_example_bundle: " << s.message() << "\n";
      return 3;
    }
    std::cout << "wrote " << out << "\n";
  }
  return 0;
}
