// kubelet.memory-manager.no-reserved: memoryManagerPolicy Static without reservedMemory.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& k : ctx.index.kubelets()) {
    if (k.memory_manager_policy != "Static" || k.has_reserved_memory) continue;
    out.Add(ObjectReport(*k.source, k.source->Root().Get("memoryManagerPolicy").line,
                         "memoryManagerPolicy is Static but reservedMemory is empty: the kubelet refuses to start "
                         "(the reserved memory per NUMA node must equal kubeReserved + systemReserved + the "
                         "eviction threshold)",
                         {"memoryManagerPolicy: Static", "reservedMemory: (not set)"}));
  }
}

}  // namespace

const Rule& RuleMemoryManagerNoReserved() {
  static const Rule kRule{
      {"kubelet.memory-manager.no-reserved", Level::kError, "node", "Static memory manager without reservedMemory",
       "The Static memory manager pins Guaranteed pods' memory to NUMA nodes, which GPU/NIC alignment needs. It "
       "requires reservedMemory entries whose sum equals the node's reserved memory; without them the kubelet "
       "fails its start-up validation and the node goes NotReady.",
       "Add reservedMemory: [{numaNode: 0, limits: {memory: <n>}}, ...] summing to kubeReserved + systemReserved + "
       "evictionHard memory.",
       "Kubernetes docs: Utilizing the NUMA-aware Memory Manager (reserved memory flag)", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
