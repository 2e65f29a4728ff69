#include "k8s/rules/common.h"

#include "base/strings.h"

namespace fabcheck::k8s::rules {

std::string DescribeResources(const ContainerView& c) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : c.resources) parts.push_back(name + "=" + std::to_string(count));
  return parts.empty() ? "(no extended resources)" : Join(parts, ", ");
}

const YNode* FindVolume(const PodView& pod, const std::string& name) {
  for (const auto& v : pod.spec->Get("volumes").items) {
    if (v->Get("name").Str() == name) return v.get();
  }
  return nullptr;
}

std::string DescribeCaps(const ContainerView& c) {
  std::vector<std::string> caps;
  for (const auto& cap : c.node->Get("securityContext").Get("capabilities").Get("add").items) {
    caps.push_back(cap->Str());
  }
  return caps.empty() ? "(none)" : "[" + Join(caps, ", ") + "]";
}

PsaLevel NamespacePsa(const Context& ctx, const std::string& ns) {
  PsaLevel level;
  for (const Object* o : ctx.set.OfKind("Namespace")) {
    if (o->name != ns) continue;
    level.ns = o;
    const YNode& v = o->Metadata().Get("labels").Get("pod-security.kubernetes.io/enforce");
    level.enforce = v.Str();
    level.line = v.LineOr(o->line);
  }
  return level;
}

long long PerDeviceNics(const Context& ctx, const ContainerView& c) {
  long long n = 0;
  for (const auto& r : c.rdma_resources) {
    if (ctx.index.IsPerDeviceResource(r)) n += c.resources.at(r);
  }
  return n;
}

long long KnownNics(const Context& ctx, const ContainerView& c) {
  long long n = 0;
  for (const auto& r : c.rdma_resources) {
    if (ctx.index.IsPerDeviceResource(r)) {
      n += c.resources.at(r);
      continue;
    }
    const SharedRdmaResource* shared = ctx.index.FindShared(r);
    if (!shared) return -1;
    const auto& e = shared->entry;
    size_t count = 0;
    if (e.contains("devices") && e["devices"].is_array()) count = e["devices"].size();
    if (e.contains("selectors") && e["selectors"].is_object() && e["selectors"].contains("ifNames") &&
        e["selectors"]["ifNames"].is_array()) {
      count = e["selectors"]["ifNames"].size();
    }
    if (count == 0) return -1;
    n += static_cast<long long>(count);
  }
  return n;
}

bool IsGuaranteed(const PodView& pod) {
  for (const auto& c : pod.containers) {
    const YNode& limits = c.node->Get("resources").Get("limits");
    const YNode& requests = c.node->Get("resources").Get("requests");
    for (const char* r : {"cpu", "memory"}) {
      const YNode& l = limits.Get(r);
      if (!l.IsScalar()) return false;
      const YNode& q = requests.Get(r);
      if (q.IsScalar() && q.value != l.value) return false;
    }
  }
  return !pod.containers.empty();
}

bool Superseded(const Context& ctx, const Object& obj) {
  if (obj.name.empty()) return false;
  bool after = false;
  for (const auto& o : ctx.set.objects) {
    if (&o == &obj) {
      after = true;
    } else if (after && o.kind == obj.kind && o.name == obj.name && o.ns == obj.ns) {
      return true;
    }
  }
  return false;
}

}  // namespace fabcheck::k8s::rules
