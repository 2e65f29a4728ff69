// A synthetic cluster for the analysis tests and the benchmark: every
// direction at `base` Gb/s with a little deterministic noise, and faults
// planted on request.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "fabcheck/model/sweep.h"

namespace fabcheck::sweep::synth {

struct Synthetic {
  int n = 8;
  double base_gbps = 9.4;
  double noise = 0.02;  // +-2% uniform
  double base_lat_us = 12;
  int mtu = 9000;
  uint64_t seed = 7;
  std::vector<int> slow_nodes;             // every direction touching them at slow_factor
  double slow_factor = 1.0 / 50;
  std::vector<std::pair<int, int>> slow_links;  // both directions at link_factor
  double link_factor = 0.2;
  std::vector<int> mtu_nodes;              // path MTU 1500 to and from them
  std::vector<std::pair<int, int>> mtu_links;
  std::vector<int> high_lat_nodes;         // latency x10
};

inline model::SweepMatrices MakeSynthetic(const Synthetic& s) {
  model::SweepMatrices m{0, model::PairMatrix(s.n), model::PairMatrix(s.n), model::PairMatrix(s.n),
                         model::PairMatrix(s.n)};
  std::vector<char> slow(s.n, 0), mtu(s.n, 0), lat(s.n, 0);
  for (int i : s.slow_nodes) slow[i] = 1;
  for (int i : s.mtu_nodes) mtu[i] = 1;
  for (int i : s.high_lat_nodes) lat[i] = 1;
  auto in = [](const std::vector<std::pair<int, int>>& v, int a, int b) {
    for (auto [x, y] : v) {
      if ((x == a && y == b) || (x == b && y == a)) return true;
    }
    return false;
  };
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> jitter(1 - s.noise, 1 + s.noise);
  for (int a = 0; a < s.n; ++a) {
    for (int b = 0; b < s.n; ++b) {
      if (a == b) continue;
      double bw = s.base_gbps * jitter(rng);
      if (slow[a] || slow[b]) bw *= s.slow_factor;
      if (in(s.slow_links, a, b)) bw *= s.link_factor;
      m.bw_gbps.set(a, b, bw);
      double l = s.base_lat_us * jitter(rng) * ((lat[a] || lat[b]) ? 10 : 1);
      m.lat_median_us.set(a, b, l);
      m.lat_p99_us.set(a, b, l * 1.5);
      m.path_mtu.set(a, b, (mtu[a] || mtu[b] || in(s.mtu_links, a, b)) ? 1500 : s.mtu);
    }
  }
  return m;
}

}  // namespace fabcheck::sweep::synth
