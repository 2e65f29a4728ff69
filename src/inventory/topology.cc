#include "inventory/topology.h"

#include <algorithm>
#include <numeric>

namespace fabcheck::inventory {

model::PathType Classify(const model::PciFunction& a, const model::PciFunction& b) {
  using model::PathType;
  if (a.root_complex.empty() || b.root_complex.empty()) return PathType::kUnknown;
  if (a.root_complex != b.root_complex) {
    // NUMA -1 on both sides (single socket, VMs) is one node; on one side only, unknowable.
    if (a.numa_node.has_value() != b.numa_node.has_value()) return PathType::kUnknown;
    return a.numa_node == b.numa_node ? PathType::kNode : PathType::kSys;
  }
  size_t common = 0;
  while (common < a.path.size() && common < b.path.size() && a.path[common].bdf == b.path[common].bdf) ++common;
  if (common == 0) return PathType::kPhb;
  size_t below_a = a.path.size() - common;
  size_t below_b = b.path.size() - common;
  return below_a <= 1 && below_b <= 1 ? PathType::kPix : PathType::kPxb;
}

model::Topology BuildTopology(const std::vector<model::Gpu>& gpus, const std::vector<model::Nic>& nics) {
  model::Topology t;
  for (const auto& g : gpus) t.gpus.push_back("GPU" + std::to_string(g.index));
  for (const auto& n : nics) t.nics.push_back(n.label);
  for (const auto& g : gpus) {
    std::vector<model::PathType> row;
    for (const auto& n : nics) row.push_back(Classify(g.pci, n.pci));
    t.distance.push_back(std::move(row));
  }
  if (gpus.empty() || nics.empty()) return t;

  std::vector<size_t> candidates;
  for (size_t i = 0; i < nics.size(); ++i) {
    if (!nics[i].rdma_devices.empty()) candidates.push_back(i);
  }
  if (candidates.empty()) {
    candidates.resize(nics.size());
    std::iota(candidates.begin(), candidates.end(), 0);
  }
  // Unknown sorts last; PIX < PXB < PHB < NODE < SYS by enum order.
  auto rank = [](model::PathType p) { return p == model::PathType::kUnknown ? 100 : static_cast<int>(p); };
  std::vector<int> best(gpus.size(), 1000), best_count(gpus.size(), 0);
  for (size_t g = 0; g < gpus.size(); ++g) {
    for (size_t n : candidates) best[g] = std::min(best[g], rank(t.distance[g][n]));
    for (size_t n : candidates) best_count[g] += rank(t.distance[g][n]) == best[g];
  }
  std::vector<size_t> order(gpus.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return best_count[x] < best_count[y]; });

  std::vector<int> load(nics.size(), 0);
  std::vector<size_t> chosen(gpus.size(), 0);
  for (size_t g : order) {
    size_t pick = candidates.front();
    for (size_t n : candidates) {
      auto key = [&](size_t k) { return std::make_tuple(rank(t.distance[g][k]), load[k], k); };
      if (key(n) < key(pick)) pick = n;
    }
    chosen[g] = pick;
    ++load[pick];
  }
  for (size_t g = 0; g < gpus.size(); ++g) {
    t.rails.push_back({gpus[g].index, nics[chosen[g]].label, t.distance[g][chosen[g]], load[chosen[g]] > 1});
  }
  return t;
}

}  // namespace fabcheck::inventory
