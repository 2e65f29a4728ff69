#include "checks/profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "base/input.h"
#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::checks {

bool Profile::IsComputeNic(std::string_view device) const {
  return nic_devices.empty() || std::find(nic_devices.begin(), nic_devices.end(), device) != nic_devices.end();
}

namespace {

constexpr uint64_t kMaxProfileBytes = 4 << 20;  // a profile is a page of YAML

// Collects the first error; every accessor names the full key ("nics.rate_gbps").
class Reader {
 public:
  explicit Reader(std::string label) : label_(std::move(label)) {}

  Status status() const { return status_; }

  void Fail(const std::string& key, const std::string& what) {
    if (status_.ok()) status_ = InvalidArgumentError("profile " + label_ + ": " + key + ": " + what);
  }

  // Rejects keys the schema does not know (a misspelt key would silently
  // disable its check otherwise).
  void OnlyKeys(const YAML::Node& map, const std::string& prefix, std::initializer_list<std::string_view> allowed) {
    if (!map.IsMap()) {
      Fail(prefix.empty() ? "(top level)" : prefix, "expected a mapping of keys");
      return;
    }
    for (const auto& kv : map) {
      std::string key = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string valid;
        for (auto a : allowed) valid += (valid.empty() ? "" : ", ") + std::string(a);
        Fail(prefix.empty() ? key : prefix + "." + key, "unknown key (valid here: " + valid + ")");
      }
    }
  }

  std::optional<long long> Int(const YAML::Node& node, const std::string& key, long long lo, long long hi) {
    if (!node) return std::nullopt;
    auto v = node.IsScalar() ? ParseInt(node.Scalar()) : std::nullopt;
    if (!v || *v < lo || *v > hi) {
      Fail(key, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
                    (node.IsScalar() ? node.Scalar() : std::string("(not a scalar)")) + "'");
      return std::nullopt;
    }
    return v;
  }

  std::optional<double> Number(const YAML::Node& node, const std::string& key, double lo, double hi) {
    if (!node) return std::nullopt;
    auto v = node.IsScalar() ? ParseDouble(node.Scalar()) : std::nullopt;
    if (!v || *v < lo || *v > hi) {
      Fail(key, "expected a number from " + fmt(lo) + " to " + fmt(hi) + ", got '" +
                    (node.IsScalar() ? node.Scalar() : std::string("(not a scalar)")) + "'");
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::string> OneOf(const YAML::Node& node, const std::string& key,
                                   std::initializer_list<std::string_view> values) {
    if (!node) return std::nullopt;
    std::string got = node.IsScalar() ? node.Scalar() : "(not a scalar)";
    for (auto v : values) {
      if (ToLower(got) == ToLower(v)) return std::string(v);
    }
    std::string valid;
    for (auto v : values) valid += (valid.empty() ? "" : ", ") + std::string(v);
    Fail(key, "expected one of " + valid + ", got '" + got + "'");
    return std::nullopt;
  }

  std::optional<bool> Bool(const YAML::Node& node, const std::string& key) {
    if (!node) return std::nullopt;
    std::string got = node.IsScalar() ? ToLower(node.Scalar()) : "(not a scalar)";
    if (got == "true" || got == "yes" || got == "on") return true;
    if (got == "false" || got == "no" || got == "off") return false;
    Fail(key, "expected true or false, got '" + got + "'");
    return std::nullopt;
  }

  // A PCIe transfer size: a power of two from 128 to 4096 bytes.
  std::optional<int> PcieSize(const YAML::Node& node, const std::string& key) {
    if (!node) return std::nullopt;
    auto size = node.IsScalar() ? ParseSize(node.Scalar()) : Result<uint64_t>(InvalidArgumentError(""));
    for (int v = 128; v <= 4096; v *= 2) {
      if (size.ok() && *size == static_cast<uint64_t>(v)) return v;
    }
    Fail(key, "expected a PCIe size of 128, 256, 512, 1024, 2048 or 4096 bytes, got '" +
                  (node.IsScalar() ? node.Scalar() : std::string("(not a scalar)")) + "'");
    return std::nullopt;
  }

  std::optional<std::string> String(const YAML::Node& node, const std::string& key) {
    if (!node) return std::nullopt;
    if (!node.IsScalar()) {
      Fail(key, "expected a string");
      return std::nullopt;
    }
    return node.Scalar();
  }

 private:
  static std::string fmt(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  }
  std::string label_;
  Status status_;
};

}  // namespace

namespace {

Result<Profile> ParseProfileTree(std::string_view yaml_text, std::string_view label) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("profile " + std::string(label) + " is not valid YAML: " + e.what());
  }
  Profile p;
  p.source = std::string(label);
  Reader r{std::string(label)};
  if (!root || root.IsNull()) return InvalidArgumentError("profile " + std::string(label) + " is empty");
  r.OnlyKeys(root, "", {"schema", "name", "description", "gpus", "nics", "network", "roce", "system", "memory", "perf",
                    "transport"});
  RETURN_IF_ERROR(r.status());
  if (auto schema = r.String(root["schema"], "schema"); schema && *schema != "fabcheck.profile/v1") {
    r.Fail("schema", "expected fabcheck.profile/v1, got '" + *schema + "'");
  }
  p.name = r.String(root["name"], "name").value_or("");
  p.description = r.String(root["description"], "description").value_or("");
  p.transport = r.OneOf(root["transport"], "transport", {"rdma", "tcp"});

  if (auto g = root["gpus"]) {
    r.OnlyKeys(g, "gpus", {"count", "pcie_gen", "pcie_width"});
    if (auto v = r.Int(g["count"], "gpus.count", 0, 64)) p.gpu_count = static_cast<int>(*v);
    if (auto v = r.Int(g["pcie_gen"], "gpus.pcie_gen", 1, 6)) p.gpu_pcie_gen = static_cast<int>(*v);
    if (auto v = r.Int(g["pcie_width"], "gpus.pcie_width", 1, 32)) p.gpu_pcie_width = static_cast<int>(*v);
  }
  if (auto n = root["nics"]) {
    r.OnlyKeys(n, "nics", {"count", "devices", "link_layer", "rate_gbps", "pcie_gen", "pcie_width", "max_payload",
                           "max_read_request", "relaxed_ordering"});
    if (auto v = r.Int(n["count"], "nics.count", 0, 64)) p.nic_count = static_cast<int>(*v);
    if (auto d = n["devices"]) {
      if (!d.IsSequence()) {
        r.Fail("nics.devices", "expected a list of RDMA device names, e.g. [mlx5_0, mlx5_1]");
      } else {
        for (const auto& item : d) {
          if (!item.IsScalar() || item.Scalar().empty()) {
            r.Fail("nics.devices", "expected device names such as mlx5_0");
          } else {
            p.nic_devices.push_back(item.Scalar());
          }
        }
      }
    }
    p.link_layer = r.OneOf(n["link_layer"], "nics.link_layer", {"InfiniBand", "Ethernet"});
    p.rate_gbps = r.Number(n["rate_gbps"], "nics.rate_gbps", 1, 3200);
    if (auto v = r.Int(n["pcie_gen"], "nics.pcie_gen", 1, 6)) p.nic_pcie_gen = static_cast<int>(*v);
    if (auto v = r.Int(n["pcie_width"], "nics.pcie_width", 1, 32)) p.nic_pcie_width = static_cast<int>(*v);
    p.nic_max_payload = r.PcieSize(n["max_payload"], "nics.max_payload");
    p.nic_max_read_request = r.PcieSize(n["max_read_request"], "nics.max_read_request");
    p.nic_relaxed_ordering = r.Bool(n["relaxed_ordering"], "nics.relaxed_ordering");
  }
  if (auto n = root["network"]) {
    r.OnlyKeys(n, "network", {"mtu"});
    if (auto v = r.Int(n["mtu"], "network.mtu", 576, 65536)) p.mtu = static_cast<int>(*v);
  }
  if (auto n = root["roce"]) {
    r.OnlyKeys(n, "roce", {"pfc_priority", "trust"});
    if (auto v = r.Int(n["pfc_priority"], "roce.pfc_priority", 0, 7)) p.pfc_priority = static_cast<int>(*v);
    p.trust = r.OneOf(n["trust"], "roce.trust", {"dscp", "pcp"});
  }
  if (auto n = root["system"]) {
    r.OnlyKeys(n, "system", {"min_memlock"});
    if (auto m = n["min_memlock"]) {
      std::string text = m.IsScalar() ? m.Scalar() : "";
      if (ToLower(text) == "unlimited") {
        p.min_memlock_bytes = kUnlimited;
      } else if (auto size = ParseSize(text); size.ok()) {
        p.min_memlock_bytes = *size;
      } else {
        r.Fail("system.min_memlock", "expected a size such as 64M or 'unlimited', got '" + text + "'");
      }
    }
  }
  if (auto n = root["memory"]) {
    r.OnlyKeys(n, "memory", {"hugepages", "thp", "numa_balancing"});
    if (auto h = n["hugepages"]) {
      if (!h.IsMap()) {
        r.Fail("memory.hugepages", "expected a map of page size to minimum page count, e.g. {2M: 1024, 1G: 16}");
      } else {
        for (const auto& kv : h) {
          std::string size_text = kv.first.Scalar();
          std::string key = "memory.hugepages." + size_text;
          auto size = ParseSize(size_text);
          if (!size.ok() || *size < 4096 || *size % 1024 != 0) {
            r.Fail(key, "expected a page size such as 2M or 1G");
            continue;
          }
          if (auto count = r.Int(kv.second, key, 0, 1ll << 40)) p.min_hugepages[*size / 1024] = *count;
        }
      }
    }
    p.thp = r.OneOf(n["thp"], "memory.thp", {"always", "madvise", "never"});
    p.numa_balancing = r.Bool(n["numa_balancing"], "memory.numa_balancing");
  }
  if (auto n = root["perf"]) {
    r.OnlyKeys(n, "perf", {"pass_fraction"});
    p.perf_pass_fraction = r.Number(n["pass_fraction"], "perf.pass_fraction", 0.05, 1.0);
  }
  RETURN_IF_ERROR(r.status());
  return p;
}

}  // namespace

Result<Profile> ParseProfile(std::string_view yaml_text, std::string_view label) {
  // yaml-cpp throws when a document has another shape than expected (a
  // scalar where a section map belongs: `gpus: 8` then gpus["count"]).
  try {
    return ParseProfileTree(yaml_text, label);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("profile " + std::string(label) + ": " + e.what() +
                                " (each section is a map, e.g. gpus: {count: 8}; see profiles/)");
  }
}

Result<Profile> LoadProfile(const std::string& path) {
  auto text = ReadFileBounded(path, kMaxProfileBytes);
  if (!text.ok()) {
    return Status(text.status().code(),
                  "cannot read profile: " + text.status().message() +
                      " (give a YAML profile file; shipped ones are in profiles/ of the source tree)");
  }
  return ParseProfile(*text, path);
}

}  // namespace fabcheck::checks
