#include "inventory/probes.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/log.h"
#include "dl/nvml.h"

namespace fabcheck::inventory {
namespace {

std::string MetaPath(std::string_view name) { return std::string(sys::kCaptureMetaDir) + "/" + std::string(name); }

model::VerbsProbe QueryVerbs() {
  model::VerbsProbe probe;
  probe.probed = true;
  int count = 0;
  errno = 0;
  struct ibv_device** list = ::ibv_get_device_list(&count);
  if (list == nullptr) {
    probe.error_number = errno;
    probe.message = "ibv_get_device_list failed: " + std::string(ErrnoName(errno)) + " (" + std::strerror(errno) + ")";
    if (errno == ENOSYS) {
      probe.message += ": this kernel has no RDMA (uverbs) support; GPUs, NICs, PCIe and NUMA are still shown";
    }
    return probe;
  }
  probe.ok = true;
  probe.device_count = count;
  probe.message = count == 0 ? "ibv_get_device_list: no RDMA device (is an RDMA driver such as mlx5_ib loaded?)"
                             : "ibv_get_device_list: " + std::to_string(count) + " device(s)";
  ::ibv_free_device_list(list);
  return probe;
}

}  // namespace

model::VerbsProbe ProbeVerbs(Reader& reader, bool query_live) {
  const auto& root = reader.root();
  if (root.live()) {
    if (!query_live) return {};
    model::VerbsProbe probe = QueryVerbs();
    root.RecordMeta(kVerbsMeta, ToJsonText(nlohmann::json(probe), 1) + "\n");
    return probe;
  }
  auto text = root.ReadMeta(kVerbsMeta);
  if (!text.ok()) return {};  // not recorded (a directory copy of sysfs): not probed
  try {
    return nlohmann::json::parse(*text).get<model::VerbsProbe>();
  } catch (const nlohmann::json::exception& e) {
    reader.Warn(MetaPath(kVerbsMeta), std::string("unparsable: ") + e.what());
    return {};
  }
}

std::string NameGpus(Reader& reader, bool query_live, std::vector<model::Gpu>* gpus) {
  const auto& root = reader.root();
  nlohmann::json record;
  if (root.live()) {
    if (!query_live || gpus->empty()) return "";
    std::vector<std::string> bus_ids;
    for (const auto& g : *gpus) bus_ids.push_back(g.pci.bdf);
    auto report = dl::QueryNvmlGpus(bus_ids);
    if (!report.ok()) {
      // No NVML is normal on CPU-only builders: names stay unknown.
      LOG_INFO("inventory", "GPU names unknown: {}", report.status().message());
      record = {{"available", false}, {"message", report.status().message()}};
    } else {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& g : report->gpus) list.push_back({{"bus_id", g.bus_id}, {"name", g.name}, {"uuid", g.uuid}});
      record = {{"available", true}, {"driver_version", report->driver_version}, {"gpus", list}};
    }
    root.RecordMeta(kNvmlMeta, ToJsonText(record, 1) + "\n");
  } else {
    auto text = root.ReadMeta(kNvmlMeta);
    if (!text.ok()) return "";
    try {
      record = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception& e) {
      reader.Warn(MetaPath(kNvmlMeta), std::string("unparsable: ") + e.what());
      return "";
    }
  }
  if (!record.is_object() || !record.value("available", false)) return "";
  for (const auto& entry : record.value("gpus", nlohmann::json::array())) {
    if (!entry.is_object()) continue;
    std::string bus_id = entry.value("bus_id", "");
    for (auto& g : *gpus) {
      if (g.pci.bdf == bus_id) {
        g.name = entry.value("name", "");
        g.uuid = entry.value("uuid", "");
      }
    }
  }
  return record.value("driver_version", "");
}

}  // namespace fabcheck::inventory
