#include "ladder/consistency.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"

namespace fabcheck::ladder {
namespace {

// {"400", "400", "200"} -> "1 x 200, 2 x 400"; one distinct value -> "2 x 400".
std::string Multiset(const std::vector<std::string>& values) {
  std::map<std::string, int> counts;
  for (const auto& v : values) {
    if (!v.empty()) ++counts[v];
  }
  std::vector<std::string> parts;
  for (const auto& [v, n] : counts) parts.push_back(fmt::format("{} x {}", n, v));
  return Join(parts, ", ");
}

std::string Number(double v) { return v == static_cast<int64_t>(v) ? std::to_string(static_cast<int64_t>(v)) : fmt::format("{}", v); }

}  // namespace

const std::vector<SettingSpec>& Settings() {
  static const std::vector<SettingSpec> kSettings = {
      {"link_layer", true, "the RDMA link layer", "IB and RoCE nodes do not talk RDMA to each other: check the port type "
                                                  "(mlxconfig LINK_TYPE_P1) and the cabling"},
      {"port_rate", true, "the RDMA port rates", "a port trained below its rate: reseat or replace the cable/optic, check "
                                                 "the switch port speed setting"},
      {"port_width", true, "the RDMA port widths", "a lane failed: reseat or replace the cable, check the switch port"},
      {"netdev_mtu", true, "the data-plane MTU", "set the same MTU on every data-plane interface (and the switch path): "
                                                 "ip link set dev IFACE mtu 9000"},
      {"gid_type", true, "the RoCE GID type NCCL picks", "enable RoCE v2 on every node (cma_roce_mode / "
                                                          "configure the GID table) so every node speaks the same RoCE"},
      {"nccl_gid_index", true, "the GID index NCCL picks", "give every node the same IPv4 on the RoCE netdev, or pin "
                                                            "NCCL_IB_GID_INDEX cluster-wide to an index that means the "
                                                            "same everywhere"},
      {"pfc_priorities", true, "the PFC priorities", "enable PFC on the same priority everywhere (mlnx_qos -i IFACE --pfc "
                                                     "0,0,0,1,0,0,0,0) and on the switches"},
      {"trust_mode", true, "the QoS trust mode", "use one trust mode everywhere: mlnx_qos -i IFACE --trust dscp"},
      {"firmware", false, "the NIC firmware", "upgrade the outliers to the cluster's firmware (mlxfwmanager)"},
      {"driver", false, "the NIC driver", "install the cluster's driver version (MLNX_OFED / DOCA or the kernel's)"},
      {"gpu_driver", false, "the GPU driver", "install the cluster's NVIDIA driver version"},
      {"nccl_version", false, "the NCCL library", "ship one NCCL version in every image"},
      {"cuda_version", false, "the CUDA runtime", "ship one CUDA runtime in every image"},
      {"kernel", false, "the kernel", "boot the cluster's kernel on the outliers"},
  };
  return kSettings;
}

MemberSettings ExtractSettings(const std::string& member, const model::Inventory& inv, const nlohmann::json& facts,
                               const std::vector<control::RailInfo>& rails) {
  MemberSettings s;
  s.member = member;
  std::vector<std::string> layers, rates, widths, gid_types, gid_indexes, firmware, mtus;
  for (const auto& dev : inv.rdma_devices) {
    if (!dev.fw_ver.empty()) firmware.push_back(dev.fw_ver);
    for (const auto& port : dev.ports) {
      layers.push_back(port.link_layer);
      if (port.rate_gbps) rates.push_back(Number(*port.rate_gbps) + " Gb/s");
      if (port.width) widths.push_back(std::to_string(*port.width) + "X");
      if (port.link_layer == "Ethernet") {
        if (port.nccl_gid_index) {
          gid_indexes.push_back(std::to_string(*port.nccl_gid_index));
          for (const auto& g : port.gids) {
            if (g.index == *port.nccl_gid_index) gid_types.push_back(g.type);
          }
        } else {
          gid_indexes.push_back("none");
        }
      }
      if (rails.empty() && !port.netdev.empty()) {
        const auto* nd = inv.FindNetDevice(port.netdev);
        if (nd && nd->mtu) mtus.push_back(std::to_string(*nd->mtu));
      }
    }
  }
  // The agent's rails are the data plane as the operator declared it.
  for (const auto& r : rails) {
    int mtu = r.mtu;
    if (mtu == 0 && !r.interface.empty()) {
      const auto* nd = inv.FindNetDevice(r.interface);
      if (nd && nd->mtu) mtu = *nd->mtu;
    }
    if (mtu > 0) mtus.push_back(std::to_string(mtu));
  }
  auto fact = [&](const char* key) {
    return facts.is_object() && facts.contains(key) && facts[key].is_string() ? facts[key].get<std::string>() : "";
  };
  s.values["link_layer"] = Multiset(layers);
  s.values["port_rate"] = Multiset(rates);
  s.values["port_width"] = Multiset(widths);
  s.values["netdev_mtu"] = Multiset(mtus);
  s.values["gid_type"] = Multiset(gid_types);
  s.values["nccl_gid_index"] = Multiset(gid_indexes);
  s.values["pfc_priorities"] = fact("pfc_priorities");
  s.values["trust_mode"] = fact("trust_mode");
  s.values["firmware"] = Multiset(firmware);
  s.values["driver"] = fact("driver");
  s.values["gpu_driver"] = inv.host.nvidia_driver;
  s.values["nccl_version"] = fact("nccl_version");
  s.values["cuda_version"] = fact("cuda_version");
  s.values["kernel"] = inv.host.kernel;
  return s;
}

std::vector<model::ConsistencyCheck> CompareSettings(const std::vector<MemberSettings>& members) {
  std::vector<model::ConsistencyCheck> out;
  for (const auto& spec : Settings()) {
    model::ConsistencyCheck c;
    c.setting = spec.name;
    std::map<std::string, int> counts;
    for (const auto& m : members) {
      auto it = m.values.find(spec.name);
      std::string v = it == m.values.end() ? "" : it->second;
      c.values[m.member] = v;
      if (!v.empty()) ++counts[v];
    }
    if (counts.empty()) {
      c.verdict = model::RungVerdict::kNotRun;
      out.push_back(std::move(c));
      continue;
    }
    int best = 0, at_best = 0;
    for (const auto& [v, n] : counts) {
      if (n > best) {
        best = n;
        at_best = 1;
        c.majority = v;
      } else if (n == best) {
        ++at_best;
      }
    }
    if (at_best > 1) c.majority.clear();  // a tie: nobody can say which side is right
    for (const auto& m : members) {
      const std::string& v = c.values[m.member];
      if (!v.empty() && (c.majority.empty() || v != c.majority)) c.outliers.push_back(m.member);
    }
    c.verdict = c.outliers.empty() ? model::RungVerdict::kPass
                                   : (spec.fail ? model::RungVerdict::kFail : model::RungVerdict::kWarn);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<model::Finding> ConsistencyFindings(const std::vector<model::ConsistencyCheck>& checks) {
  std::vector<model::Finding> out;
  for (const auto& c : checks) {
    if (c.outliers.empty()) continue;
    const auto spec = std::find_if(Settings().begin(), Settings().end(), [&](const auto& s) { return s.name == c.setting; });
    std::map<std::string, std::vector<std::string>> by_value;
    for (const auto& [m, v] : c.values) {
      if (!v.empty()) by_value[v].push_back(m);
    }
    std::vector<std::string> spread;
    for (const auto& [v, ms] : by_value) spread.push_back(fmt::format("{}: {}", v, Join(ms, " ")));
    for (const auto& member : c.outliers) {
      model::Finding f;
      f.id = "ladder.cluster." + c.setting;
      f.severity = c.verdict == model::RungVerdict::kFail ? model::Severity::kFail : model::Severity::kWarn;
      f.group = "L1L2.cluster";
      f.object = member;
      f.member = member;
      f.subject = "setting";
      f.message = c.majority.empty()
                      ? fmt::format("{} disagree and no value has a majority ({} here)", spec->what, c.values.at(member))
                      : fmt::format("{} is {} here, {} on most members", spec->what, c.values.at(member), c.majority);
      f.evidence = spread;
      f.remedy = spec->fix;
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace fabcheck::ladder
