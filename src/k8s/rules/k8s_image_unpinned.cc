// k8s.image.unpinned: a container image referenced by tag only (no @sha256:
// digest), so nodes may run different builds under one name.
#include "k8s/render.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    // A GPU or RDMA job's stack (NCCL, rdma-core, the verbs provider) comes
    // from its image: a tag that moves changes what a go-live run verified.
    const bool accelerated = pod.Gpus() > 0 || pod.UsesRdma();
    for (const auto& c : pod.containers) {
      if (c.node == nullptr) continue;
      const YNode& image = c.node->Get("image");
      const std::string reference = image.Str();
      if (reference.empty() || ImagePinned(reference)) continue;
      Report r = PodReport(pod, &c, image.LineOr(c.line),
                           "image " + reference + " is not pinned by digest: the tag can move, so nodes may run "
                               "different builds of it" +
                               (accelerated ? " (and a different NCCL, rdma-core or verbs provider than the one "
                                              "that was tested)"
                                            : ""),
                           {"image: " + reference});
      if (!accelerated) r.level = Level::kInfo;
      out.Add(std::move(r));
    }
  }
}

}  // namespace

const Rule& RuleImageUnpinned() {
  static const Rule kRule{
      {"k8s.image.unpinned", Level::kWarning, "workload", "Container image without a pinned digest (@sha256:)",
       "A tag (or no tag: latest) is resolved when each node pulls, so two nodes of one job can run different "
       "builds: another NCCL, rdma-core or verbs provider than the go-live run tested. Pinning the digest makes the "
       "tested combination the deployed one (the go-live checklist's item 4). Info for pods without GPUs or RDMA "
       "devices.",
       "Reference the image by digest: REPOSITORY:TAG@sha256:<64 hex> (crane digest, skopeo inspect, or the .ref "
       "file scripts/build-image.sh writes).",
       "Kubernetes docs, Images: 'image pull policy ... digest'; kubernetes/kubernetes#46787", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
