#include <fmt/format.h>

#include "base/strings.h"
#include "fabric/importers.h"

namespace fabcheck::fabric {

const std::vector<LeafLabel>& KnownLeafLabels() {
  static const std::vector<LeafLabel> kLabels = {
      {"network.topology.nvidia.com/block", "NVIDIA Topograph (switches cabled to the node)"},
      {"fabric.topograph.run/tier-0", "Topograph fabric tiers (tier-0: leaf)"},
      {"cloud.google.com/gce-topology-subblock", "GKE compact placement (sub-block)"},
      {"topology.k8s.aws/network-node-layer-3", "EKS instance topology (layer 3: nearest the instance)"},
      {"topology.k8s.io/rack", "rack label (GDC bare metal, hand-labelled clusters)"},
  };
  return kLabels;
}

Result<Imported> ImportK8sNodes(std::string_view text, const K8sOptions& o) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgumentError("kubernetes nodes: not a JSON object; give the output of `kubectl get nodes -o json`");
  }
  std::vector<nlohmann::json> nodes;
  if (doc.contains("items") && doc["items"].is_array()) {
    for (const auto& n : doc["items"]) nodes.push_back(n);
  } else if (doc.value("kind", "") == "Node") {
    nodes.push_back(doc);
  } else {
    return InvalidArgumentError("kubernetes nodes: neither a List with items nor a Node; give the output of "
                                "`kubectl get nodes -o json`");
  }
  if (o.rails < 1 || o.rails > 64) return InvalidArgumentError("kubernetes nodes: rails must be 1..64");
  auto labels_of = [](const nlohmann::json& n) -> const nlohmann::json* {
    auto m = n.find("metadata");
    if (m == n.end() || !m->is_object()) return nullptr;
    auto l = m->find("labels");
    return l != m->end() && l->is_object() ? &*l : nullptr;
  };
  std::string label = o.leaf_label;
  if (label.empty()) {
    for (const LeafLabel& known : KnownLeafLabels()) {
      for (const auto& n : nodes) {
        const auto* l = labels_of(n);
        if (l && l->contains(known.label)) {
          label = known.label;
          break;
        }
      }
      if (!label.empty()) break;
    }
    if (label.empty()) {
      std::vector<std::string> names;
      for (const LeafLabel& k : KnownLeafLabels()) names.emplace_back(k.label);
      return NotFoundError(fmt::format("kubernetes nodes: no node carries a leaf label ({}); name yours with "
                                       "--leaf-label (e.g. the rack label your cluster uses)", Join(names, ", ")));
    }
  }
  Imported out;
  out.fabric.rails = o.rails;
  out.fabric.source = fmt::format("kubernetes node label {}", label);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    std::string name;
    if (n.contains("metadata") && n["metadata"].is_object() && n["metadata"].contains("name") &&
        n["metadata"]["name"].is_string()) {
      name = n["metadata"]["name"].get<std::string>();
    }
    if (name.empty()) return InvalidArgumentError(fmt::format("kubernetes nodes: items[{}] has no metadata.name", i));
    const auto* l = labels_of(n);
    if (!l || !l->contains(label) || !(*l)[label].is_string() || (*l)[label].get<std::string>().empty()) {
      out.notes.push_back(fmt::format("{}: no {} label, left out (label it or write it in the fabric file)", name, label));
      continue;
    }
    Member m;
    m.name = name;
    if (n.contains("status") && n["status"].is_object() && n["status"].contains("addresses") &&
        n["status"]["addresses"].is_array()) {
      for (const auto& a : n["status"]["addresses"]) {
        if (a.is_object() && a.value("type", "") == "InternalIP" && a.contains("address") && a["address"].is_string()) {
          m.address = a["address"].get<std::string>();
          break;
        }
      }
    }
    const std::string leaf = (*l)[label].get<std::string>();
    for (int r = 0; r < o.rails; ++r) m.leaves.push_back(o.rails == 1 ? leaf : fmt::format("{}/r{}", leaf, r));
    out.fabric.members.push_back(std::move(m));
  }
  if (out.fabric.members.empty()) {
    return NotFoundError(fmt::format("kubernetes nodes: none of {} nodes carries {}", nodes.size(), label));
  }
  RETURN_IF_ERROR(ValidateFabric(out.fabric));
  return out;
}

}  // namespace fabcheck::fabric
