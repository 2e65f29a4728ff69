#include "k8s/network.h"

#include <fnmatch.h>

#include <regex>

#include "base/strings.h"

namespace fabcheck::k8s {
namespace {

using nlohmann::json;

std::optional<long long> JsonInt(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const json& v = j.at(key);
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_string()) {
    if (auto parsed = ParseInt(v.get<std::string>())) return parsed;
  }
  return std::nullopt;
}

std::string JsonStr(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_string()) return "";
  return j.at(key).get<std::string>();
}

}  // namespace

std::string ResourceShortName(std::string_view resource) {
  auto slash = resource.rfind('/');
  return std::string(slash == std::string_view::npos ? resource : resource.substr(slash + 1));
}

NetIndex::NetIndex(const ManifestSet& set, const Profile& profile, const std::vector<std::string>& extra)
    : profile_(profile) {
  rdma_patterns_ = {"rdma/*", "*rdma*", "nvidia.com/hostdev*", "nvidia.com/*sriov*", "mellanox.com/*",
                    "*/hca_shared*"};
  for (const auto& p : profile.rdma_resource_patterns) rdma_patterns_.push_back(p);
  for (const auto& p : extra) rdma_patterns_.push_back(p);

  for (const auto& obj : set.objects) {
    const YNode& spec = obj.Spec();
    if (obj.kind == "NetworkAttachmentDefinition") {
      AddNad(obj);
    } else if (obj.kind == "SriovNetwork" || obj.kind == "SriovIBNetwork") {
      std::string ns = spec.Get("networkNamespace").Str();
      AddGenerated(obj, obj.kind == "SriovNetwork" ? "sriov" : "ib-sriov", ns.empty() ? obj.ns : ns,
                   spec.Get("resourceName").Str(), true, spec.Get("ipam"));
      Nad& nad = nads_.back();
      if (auto vlan = spec.Get("vlan").AsInt()) nad.vlan = vlan;
      if (obj.kind == "SriovNetwork" && !nad.vlan) nad.vlan = 0;
    } else if (obj.kind == "MacvlanNetwork" || obj.kind == "IPoIBNetwork") {
      std::string ns = spec.Get("networkNamespace").Str();
      AddGenerated(obj, obj.kind == "MacvlanNetwork" ? "macvlan" : "ipoib", ns.empty() ? "default" : ns, "", false,
                   spec.Get("ipam"));
      Nad& nad = nads_.back();
      nad.master = spec.Get("master").Str();
      if (auto mtu = spec.Get("mtu").AsInt(); mtu && *mtu > 0) nad.mtu = mtu;
    } else if (obj.kind == "HostDeviceNetwork") {
      std::string ns = spec.Get("networkNamespace").Str();
      std::string resource = spec.Get("resourceName").Str();
      AddGenerated(obj, "host-device", ns.empty() ? "default" : ns,
                   resource.empty() ? "" : (resource.find('/') == std::string::npos ? "nvidia.com/" + resource : resource),
                   false, spec.Get("ipam"));
    } else if (obj.kind == "NicClusterPolicy") {
      const YNode& shared = spec.Get("rdmaSharedDevicePlugin").Get("config");
      if (shared.IsScalar()) AddSharedConfig(obj, shared.Str(), shared.line);
      const YNode& sriov = spec.Get("sriovDevicePlugin").Get("config");
      if (sriov.IsScalar()) AddSriovDpConfig(obj, sriov.Str(), sriov.line);
    } else if (obj.kind == "ConfigMap") {
      for (const auto& [k, v] : obj.Root().Get("data").entries) {
        if (!v->IsScalar()) continue;
        const std::string& text = v->value;
        if (text.find("\"configList\"") != std::string::npos) AddSharedConfig(obj, text, v->line);
        if (text.find("\"resourceList\"") != std::string::npos) AddSriovDpConfig(obj, text, v->line);
      }
    } else if (obj.kind == "SriovNetworkNodePolicy") {
      SriovPolicy p;
      p.source = &obj;
      p.resource_name = spec.Get("resourceName").Str();
      if (auto rdma = spec.Get("isRdma").AsBool()) {
        p.is_rdma = *rdma;
        p.is_rdma_set = true;
      }
      p.link_type = ToLower(spec.Get("linkType").Str());
      p.device_type = spec.Get("deviceType").Str();
      if (p.device_type.empty()) p.device_type = "netdevice";
      p.mtu = spec.Get("mtu").AsInt();
      p.num_vfs = spec.Get("numVfs").AsInt();
      policies_.push_back(p);
    } else if (obj.kind == "KubeletConfiguration") {
      KubeletConfig k;
      k.source = &obj;
      const YNode& r = obj.Root();
      k.topology_policy = r.Get("topologyManagerPolicy").Str();
      k.topology_scope = r.Get("topologyManagerScope").Str();
      k.cpu_manager_policy = r.Get("cpuManagerPolicy").Str();
      k.memory_manager_policy = r.Get("memoryManagerPolicy").Str();
      const YNode& reserved = r.Get("reservedMemory");
      k.has_reserved_memory = reserved.IsSeq() && !reserved.items.empty();
      kubelets_.push_back(k);
    }
  }
}

void NetIndex::ParseCniConfig(Nad& nad, const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded()) {
    nad.config_error = "spec.config is not valid JSON";
    return;
  }
  if (!parsed.is_object()) {
    nad.config_error = "spec.config is JSON but not an object";
    return;
  }
  json main = parsed;
  if (parsed.contains("plugins")) {
    if (!parsed["plugins"].is_array() || parsed["plugins"].empty() || !parsed["plugins"][0].is_object()) {
      nad.config_error = "spec.config has \"plugins\" but it is not a non-empty list of plugin objects";
      return;
    }
    main = parsed["plugins"][0];
    for (const auto& p : parsed["plugins"]) nad.plugin_types.push_back(JsonStr(p, "type"));
  } else {
    nad.plugin_types.push_back(JsonStr(parsed, "type"));
  }
  nad.cni_type = JsonStr(main, "type");
  if (nad.cni_type.empty()) {
    nad.config_error = "spec.config has no \"type\" (the CNI plugin to run)";
    return;
  }
  nad.config = main;
  if (main.contains("ipam")) nad.ipam = main["ipam"];
  nad.mtu = JsonInt(main, "mtu");
  nad.vlan = JsonInt(main, "vlan");
  nad.master = JsonStr(main, "master");
  nad.pkey = JsonStr(main, "pkey");
}

void NetIndex::AddNad(const Object& obj) {
  Nad nad;
  nad.source = &obj;
  nad.ns = obj.ns;
  nad.name = obj.name;
  nad.resource_name = obj.Metadata().Get("annotations").Get("k8s.v1.cni.cncf.io/resourceName").Str();
  const YNode& config = obj.Spec().Get("config");
  nad.config_line = config.LineOr(obj.line);
  nad.ipam_line = nad.config_line;
  if (config.IsScalar() && !config.value.empty()) {
    nad.has_config = true;
    ParseCniConfig(nad, config.value);
  }
  nads_.push_back(std::move(nad));
}

void NetIndex::AddGenerated(const Object& obj, std::string cni_type, std::string ns, std::string resource,
                            bool suffix, const YNode& ipam_node) {
  Nad nad;
  nad.source = &obj;
  nad.ns = std::move(ns);
  nad.name = obj.name;
  nad.resource_name = std::move(resource);
  nad.resource_is_suffix = suffix;
  nad.cni_type = cni_type;
  nad.plugin_types = {cni_type};
  nad.has_config = true;
  nad.config_line = obj.line;
  nad.config = json{{"type", cni_type}};
  nad.ipam_line = ipam_node.LineOr(obj.line);
  if (ipam_node.IsScalar() && !ipam_node.value.empty()) {
    json ipam = json::parse(ipam_node.value, nullptr, false);
    if (ipam.is_discarded() || !ipam.is_object()) {
      nad.config_error = "spec.ipam is not a JSON object";
    } else {
      nad.ipam = ipam;
      nad.config["ipam"] = ipam;
    }
  }
  nads_.push_back(std::move(nad));
}

void NetIndex::AddSharedConfig(const Object& obj, const std::string& text, int line) {
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("configList") ||
      !parsed["configList"].is_array()) {
    problems_.push_back({&obj, line, "the RDMA shared device plugin config is not JSON with a \"configList\" list"});
    return;
  }
  for (const auto& entry : parsed["configList"]) {
    if (!entry.is_object()) {
      problems_.push_back({&obj, line, "a configList entry of the RDMA shared device plugin is not an object"});
      continue;
    }
    SharedRdmaResource r;
    r.source = &obj;
    r.line = line;
    r.short_name = JsonStr(entry, "resourceName");
    std::string prefix = JsonStr(entry, "resourcePrefix");
    r.resource_name = (prefix.empty() ? "rdma" : prefix) + "/" + r.short_name;
    r.entry = entry;
    shared_.push_back(std::move(r));
  }
}

void NetIndex::AddSriovDpConfig(const Object& obj, const std::string& text, int line) {
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed["resourceList"].is_array()) {
    problems_.push_back({&obj, line, "the SR-IOV device plugin config is not JSON with a \"resourceList\" list"});
    return;
  }
  for (const auto& entry : parsed["resourceList"]) {
    if (!entry.is_object()) continue;
    SriovDpResource r;
    r.source = &obj;
    r.line = line;
    r.short_name = JsonStr(entry, "resourceName");
    std::string prefix = JsonStr(entry, "resourcePrefix");
    r.resource_name = (prefix.empty() ? "intel.com" : prefix) + "/" + r.short_name;
    // selectors: an object or a list of objects (the list is preferred).
    json selectors = entry.contains("selectors") ? entry["selectors"] : json::array();
    if (selectors.is_object()) selectors = json::array({selectors});
    for (const auto& s : selectors) {
      if (!s.is_object()) continue;
      if (s.contains("isRdma") && s["isRdma"].is_boolean() && s["isRdma"].get<bool>()) r.is_rdma = true;
      if (s.contains("linkTypes") && s["linkTypes"].is_array()) {
        for (const auto& l : s["linkTypes"]) {
          if (l.is_string()) r.link_types.push_back(ToLower(l.get<std::string>()));
        }
      }
    }
    sriov_dp_.push_back(std::move(r));
  }
}

const Nad* NetIndex::FindNad(std::string_view ns, std::string_view name) const {
  for (const auto& nad : nads_) {
    if (nad.ns == ns && nad.name == name) return &nad;
  }
  return nullptr;
}

std::vector<const Nad*> NetIndex::FindNadAnyNamespace(std::string_view name) const {
  std::vector<const Nad*> out;
  for (const auto& nad : nads_) {
    if (nad.name == name) out.push_back(&nad);
  }
  return out;
}

bool NetIndex::ResourceMatches(const Nad& nad, std::string_view resource) {
  if (nad.resource_name.empty()) return false;
  if (nad.resource_is_suffix || nad.resource_name.find('/') == std::string::npos) {
    return ResourceShortName(resource) == nad.resource_name;
  }
  return resource == nad.resource_name;
}

const SharedRdmaResource* NetIndex::FindShared(std::string_view resource) const {
  for (const auto& s : shared_) {
    if (s.resource_name == resource) return &s;
  }
  return nullptr;
}

bool NetIndex::IsPerDeviceResource(std::string_view resource) const {
  if (FindShared(resource) || StartsWith(resource, "rdma/")) return false;
  std::string short_name = ResourceShortName(resource);
  for (const auto& p : policies_) {
    if (p.resource_name == short_name) return true;
  }
  for (const auto& r : sriov_dp_) {
    if (r.resource_name == resource) return true;
  }
  for (const auto& nad : nads_) {
    if (ResourceMatches(nad, resource) &&
        (nad.cni_type == "sriov" || nad.cni_type == "ib-sriov" || nad.cni_type == "host-device")) {
      return true;
    }
  }
  return IsRdmaResource(resource) && !StartsWith(resource, "networking.gke.io");
}

bool NetIndex::IsRdmaResource(std::string_view resource) const {
  bool inferred = false;
  return RdmaEvidence(resource, inferred);
}

bool NetIndex::RdmaIsInferred(std::string_view resource) const {
  bool inferred = false;
  return RdmaEvidence(resource, inferred) && inferred;
}

bool NetIndex::RdmaEvidence(std::string_view resource, bool& inferred) const {
  inferred = false;
  if (resource == "nvidia.com/gpu" || StartsWith(resource, "nvidia.com/mig-") || resource == "amd.com/gpu") {
    return false;
  }
  if (FindShared(resource)) return true;
  std::string short_name = ResourceShortName(resource);
  // A policy or device plugin config in the set decides; without one, a
  // resource that backs an SR-IOV/host-device/IB network is taken as RDMA
  // (cluster.sriov.not-rdma checks the policy when it is there).
  bool has_policy = false;
  for (const auto& p : policies_) {
    if (p.resource_name != short_name) continue;
    if (p.is_rdma || p.link_type == "ib") return true;
    has_policy = true;
  }
  for (const auto& r : sriov_dp_) {
    if (r.resource_name != resource) continue;
    if (r.is_rdma) return true;
    has_policy = true;
  }
  bool backs_vf_network = false;
  for (const auto& nad : nads_) {
    if (!ResourceMatches(nad, resource)) continue;
    if (nad.cni_type == "ib-sriov" || nad.cni_type == "ipoib") return true;
    if (!has_policy && (nad.cni_type == "sriov" || nad.cni_type == "host-device")) backs_vf_network = true;
  }
  std::string r(resource);
  for (const auto& pattern : rdma_patterns_) {
    if (fnmatch(pattern.c_str(), r.c_str(), 0) == 0) return true;
  }
  // Only an SR-IOV/host-device network says so: most such VFs in GPU
  // clusters are ConnectX VFs with RDMA, but an Intel or other Ethernet VF
  // may have none, so rules say "probably" and warn instead of failing.
  inferred = backs_vf_network;
  return backs_vf_network;
}

std::string NetIndex::LinkTypeOf(std::string_view resource) const {
  if (const auto* s = FindShared(resource)) {
    const json& selectors = s->entry.contains("selectors") ? s->entry["selectors"] : json();
    if (selectors.is_object() && selectors.contains("linkTypes") && selectors["linkTypes"].is_array()) {
      bool ib = false, eth = false;
      for (const auto& l : selectors["linkTypes"]) {
        std::string t = l.is_string() ? ToLower(l.get<std::string>()) : "";
        if (t == "infiniband" || t == "ib") ib = true;
        if (t == "ether" || t == "ethernet" || t == "eth" || t == "roce") eth = true;
      }
      if (ib && !eth) return "ib";
      if (eth && !ib) return "eth";
    }
    // Interface names decide when linkTypes is absent: the kernel names IPoIB
    // netdevs ib0, ib1... and systemd's PCI-path names for InfiniBand start
    // with "ibp" (ibp12s0). Other "ib" names are not proof: some clouds name
    // Ethernet RoCE ports ibs0p0 and put macvlan on them.
    static const std::regex kIpoibName("^(ib[0-9]+|ibp[0-9]+s[0-9]+.*)$");
    std::vector<std::string> names;
    for (const json* list : {s->entry.contains("devices") ? &s->entry["devices"] : nullptr,
                             selectors.is_object() && selectors.contains("ifNames") ? &selectors["ifNames"] : nullptr}) {
      if (!list || !list->is_array()) continue;
      for (const auto& n : *list) names.push_back(n.is_string() ? n.get<std::string>() : "");
    }
    bool all_ib = !names.empty();
    for (const auto& n : names) all_ib = all_ib && std::regex_match(n, kIpoibName);
    return all_ib ? "ib" : "";
  }
  std::string short_name = ResourceShortName(resource);
  for (const auto& p : policies_) {
    if (p.resource_name == short_name) return p.link_type == "ib" ? "ib" : "eth";
  }
  for (const auto& nad : nads_) {
    if (ResourceMatches(nad, resource) && (nad.cni_type == "ib-sriov" || nad.cni_type == "ipoib")) return "ib";
  }
  if (profile_.name == "coreweave" || profile_.name == "aks") return "ib";
  return "";
}

}  // namespace fabcheck::k8s
