// Building a fabric from what a cluster already has, instead of writing it by
// hand: Kubernetes node labels (as topology-aware schedulers use them),
// `ibnetdiscover` (InfiniBand: the subnet as the subnet manager sees it) and
// `lldpcli -f json show neighbors` on each host (Ethernet/RoCE). Each returns
// a validated Fabric; members or ports that cannot be placed are listed in
// `notes` with the reason, never dropped silently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabric/fabric.h"

namespace fabcheck::fabric {

struct Imported {
  Fabric fabric;
  std::vector<std::string> notes;  // what was left out, and why
};

// The leaf labels tried in order when --leaf-label is not given: the label
// each scheduler stack puts on a node for the switch it is cabled to.
struct LeafLabel {
  std::string_view label;
  std::string_view who;
};
const std::vector<LeafLabel>& KnownLeafLabels();

struct K8sOptions {
  std::string leaf_label;  // empty: the first of KnownLeafLabels() present on the nodes
  int rails = 1;           // the labels name one network: the same leaf on every rail
};
// `json` is `kubectl get nodes -o json` (a List or v1 NodeList) or one Node.
Result<Imported> ImportK8sNodes(std::string_view json, const K8sOptions& options);

struct IbnetOptions {
  int rails = 0;  // 0: the port count most hosts have; hosts with fewer are left out (noted)
};
// `text` is the output of ibnetdiscover (its default format). A host is the
// first word of a CA's node description ("node018 HCA-1" -> node018); its
// connected CA ports in natural order are its rails. A leaf is a switch a CA
// is cabled to; spines are the switches the leaves link to that serve no CA.
Result<Imported> ImportIbnetdiscover(std::string_view text, const IbnetOptions& options);

struct LldpHost {
  std::string host;
  std::string json;  // `lldpcli -f json show neighbors` (or -f json0) run on that host
};
// `rail_ifaces`: the data-plane interfaces in rail order; empty: every
// interface with a neighbour, in natural order. The leaf is the neighbour's
// system name (its chassis id when it sends none).
Result<Imported> ImportLldp(const std::vector<LldpHost>& hosts, const std::vector<std::string>& rail_ifaces);

// "mlx5_2" < "mlx5_10", "node9" < "node10".
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace fabcheck::fabric
