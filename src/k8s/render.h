// `fabcheck k8s render`: the manifests fabcheck itself needs on a cluster,
// from a small profile: namespace, example NetworkAttachmentDefinition,
// the agent/exporter DaemonSet and a sweep as an Indexed Job behind a
// headless Service. Everything rendered passes `fabcheck k8s lint`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabcheck::k8s {

// The image scripts/build-image.sh builds: localhost/fabcheck:<this version>,
// the name `podman load` and `ctr images import` give it. Not pinned: the
// build writes the pinned reference (…@sha256:…) beside the archive.
std::string DefaultImage();

// Checks an image reference: [registry/]repository[:tag][@sha256:<64 hex>].
Status ValidateImageReference(const std::string& image);

// True when the reference carries a digest (…@sha256:…).
bool ImagePinned(const std::string& image);

struct RenderProfile {
  std::string name = "fabcheck";       // prefix of the rendered objects
  std::string ns = "fabcheck";
  std::string image = DefaultImage();  // profile `image:` or --image override it
  std::string nad_name = "rdma-net";
  std::string network_type = "sriov";  // sriov, ib-sriov, host-device, macvlan, ipvlan
  std::string rdma_resource;           // required, e.g. nvidia.com/rdma_vf or rdma/rdma_shared_device_a
  std::string master;                  // macvlan/ipvlan parent interface
  std::string subnet = "192.168.100.0/24";
  int mtu = 0;                         // 0: leave the MTU to the PF
  int vlan = 0;
  int gpus_per_node = 8;
  int nics_per_node = 8;
  int nodes = 2;                       // members of the sweep Job
  int agent_port = 7470;
  int exporter_port = 9470;
  int sweep_port = 7471;
  std::map<std::string, std::string> node_selector;
};

// Parses and validates a profile (YAML: the fields at the top level or under
// spec:, as in deploy/kubernetes/render-examples/*/profile.yaml).
Result<RenderProfile> ParseRenderProfile(const std::string& text, const std::string& file);

struct RenderedFile {
  std::string name;     // "10-networks.yaml"
  std::string content;
};

std::vector<RenderedFile> Render(const RenderProfile& profile);

}  // namespace fabcheck::k8s
