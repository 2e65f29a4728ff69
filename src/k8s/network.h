// The cluster's networking objects, indexed once per lint run: every
// NetworkAttachmentDefinition the set defines or makes (SR-IOV networks and
// the Network Operator's Macvlan/HostDevice/IPoIB networks generate NADs), the
// RDMA shared device plugin's and the SR-IOV device plugin's resource lists,
// SR-IOV node policies and kubelet configurations.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/config.h"
#include "k8s/manifest.h"

namespace fabcheck::k8s {

struct Nad {
  const Object* source = nullptr;  // the NAD, or the SriovNetwork/MacvlanNetwork... that generates it
  std::string ns;
  std::string name;
  std::string resource_name;       // k8s.v1.cni.cncf.io/resourceName, or the generator's resourceName
  bool resource_is_suffix = false; // SriovNetwork: the operator adds its own prefix
  std::string cni_type;            // main plugin type ("macvlan", "sriov", "ib-sriov"...)
  std::vector<std::string> plugin_types;  // every plugin of a conflist
  bool has_config = false;         // spec.config (or generated) present
  std::string config_error;        // why the config is not valid JSON / not a CNI config
  int config_line = 0;
  nlohmann::json config;           // the main plugin's config object
  nlohmann::json ipam;             // its ipam object (may be null)
  int ipam_line = 0;
  std::optional<long long> mtu;
  std::optional<long long> vlan;
  std::string master;
  std::string pkey;
};

// One entry of the RDMA shared device plugin's configList.
struct SharedRdmaResource {
  const Object* source = nullptr;
  int line = 0;
  std::string resource_name;  // "rdma/<resourceName>" (prefix from resourcePrefix)
  std::string short_name;
  nlohmann::json entry;       // the configList entry as written
};

// One resourceList entry of the SR-IOV network device plugin's config.
struct SriovDpResource {
  const Object* source = nullptr;
  int line = 0;
  std::string resource_name;  // "<prefix>/<name>"
  std::string short_name;
  bool is_rdma = false;
  std::vector<std::string> link_types;
};

struct SriovPolicy {
  const Object* source = nullptr;
  std::string resource_name;  // short name, the operator adds the prefix
  bool is_rdma = false;
  bool is_rdma_set = false;
  std::string link_type;      // "eth" or "ib" (lower case; "" when unset = eth)
  std::string device_type;    // "netdevice" (default) or "vfio-pci"
  std::optional<long long> mtu;
  std::optional<long long> num_vfs;
};

struct KubeletConfig {
  const Object* source = nullptr;
  std::string topology_policy;   // "" when unset (= none)
  std::string topology_scope;    // "" when unset (= container)
  std::string cpu_manager_policy;
  std::string memory_manager_policy;
  bool has_reserved_memory = false;
};

// A config string that could not be read (reported as schema.invalid).
struct ConfigProblem {
  const Object* source = nullptr;
  int line = 0;
  std::string message;
};

class NetIndex {
 public:
  NetIndex(const ManifestSet& set, const Profile& profile, const std::vector<std::string>& extra_rdma_patterns);

  const std::vector<Nad>& nads() const { return nads_; }
  const std::vector<SharedRdmaResource>& shared() const { return shared_; }
  const std::vector<SriovDpResource>& sriov_dp() const { return sriov_dp_; }
  const std::vector<SriovPolicy>& policies() const { return policies_; }
  const std::vector<KubeletConfig>& kubelets() const { return kubelets_; }
  const std::vector<ConfigProblem>& problems() const { return problems_; }

  // True when the set defines any NAD or NAD generator, so a missing NAD can
  // be told apart from "the NADs were not given to the linter".
  bool HasNadSources() const { return !nads_.empty(); }
  const Nad* FindNad(std::string_view ns, std::string_view name) const;
  std::vector<const Nad*> FindNadAnyNamespace(std::string_view name) const;

  // Whether a requested extended resource gives the container an RDMA device.
  bool IsRdmaResource(std::string_view resource) const;
  // True when the only sign of RDMA is that the resource backs an SR-IOV or
  // host-device network (no node policy, device plugin config or known name).
  bool RdmaIsInferred(std::string_view resource) const;
  // The resource is an SR-IOV VF (or host device): one NIC per unit requested.
  bool IsPerDeviceResource(std::string_view resource) const;
  // A shared-HCA resource (k8s-rdma-shared-dev-plugin): one unit gives every selected HCA.
  const SharedRdmaResource* FindShared(std::string_view resource) const;
  // "ib", "eth" or "" when the set does not say.
  std::string LinkTypeOf(std::string_view resource) const;
  // Whether the NAD's resource annotation names `resource`.
  static bool ResourceMatches(const Nad& nad, std::string_view resource);

 private:
  void AddNad(const Object& obj);
  void AddGenerated(const Object& obj, std::string cni_type, std::string ns, std::string resource, bool suffix,
                    const YNode& ipam_node);
  void AddSharedConfig(const Object& obj, const std::string& json_text, int line);
  void AddSriovDpConfig(const Object& obj, const std::string& json_text, int line);
  void ParseCniConfig(Nad& nad, const std::string& text);
  bool RdmaEvidence(std::string_view resource, bool& inferred) const;

  const Profile& profile_;
  std::vector<std::string> rdma_patterns_;
  std::vector<Nad> nads_;
  std::vector<SharedRdmaResource> shared_;
  std::vector<SriovDpResource> sriov_dp_;
  std::vector<SriovPolicy> policies_;
  std::vector<KubeletConfig> kubelets_;
  std::vector<ConfigProblem> problems_;
};

// The short name of a resource: "nvidia.com/mlnx_sriov" -> "mlnx_sriov".
std::string ResourceShortName(std::string_view resource);

}  // namespace fabcheck::k8s
