// Helpers the rules share: building a report about a pod or container, and
// describing what was read.
#pragma once

#include <string>
#include <vector>

#include "k8s/rule.h"

namespace fabcheck::k8s::rules {

inline Report PodReport(const PodView& pod, const ContainerView* c, int line, std::string message,
                        std::vector<std::string> evidence = {}) {
  Report r;
  r.object = pod.owner;
  r.pod = &pod;
  r.subject = c ? pod.Describe(*c) : pod.Describe();
  r.line = line > 0 ? line : (c ? c->line : pod.line);
  r.message = std::move(message);
  r.evidence = std::move(evidence);
  return r;
}

inline Report ObjectReport(const Object& obj, int line, std::string message, std::vector<std::string> evidence = {}) {
  Report r;
  r.object = &obj;
  r.line = line > 0 ? line : obj.line;
  r.message = std::move(message);
  r.evidence = std::move(evidence);
  return r;
}

// "rdma/rdma_shared_device_a=1, nvidia.com/gpu=8"
std::string DescribeResources(const ContainerView& c);

// The pod's volume named `name` (nullptr when absent).
const YNode* FindVolume(const PodView& pod, const std::string& name);

// The value of a capability list for evidence: "[NET_RAW, SYS_ADMIN]" or "(none)".
std::string DescribeCaps(const ContainerView& c);

// The Pod Security level a namespace enforces ("" when the set has no such
// namespace or no label), and the label's line.
struct PsaLevel {
  const Object* ns = nullptr;
  std::string enforce;
  int line = 0;
};
PsaLevel NamespacePsa(const Context& ctx, const std::string& ns);

// The per-device RDMA NICs a container gets (SR-IOV VFs, host devices), and
// the NICs a shared resource gives when its config lists them (-1: unknown).
long long PerDeviceNics(const Context& ctx, const ContainerView& c);
long long KnownNics(const Context& ctx, const ContainerView& c);

bool IsGuaranteed(const PodView& pod);

// True when a later object in the set has the same kind, namespace and name:
// two definitions of one object (an example folder holding variants of the
// single NicClusterPolicy, say). `kubectl apply` keeps the last, so rules that
// compare objects with each other skip the earlier ones instead of reporting
// a conflict between an object and itself.
bool Superseded(const Context& ctx, const Object& obj);

}  // namespace fabcheck::k8s::rules
