#include "fabcheck/model/coll.h"

namespace fabcheck::model {

void to_json(nlohmann::json& j, const NcclConnection& v) {
  j = {{"host", v.host},           {"from_rank", v.from_rank}, {"to_rank", v.to_rank},
       {"from_device", v.from_device}, {"to_device", v.to_device}, {"direction", v.direction},
       {"transport", v.transport}, {"detail", v.detail},       {"gdr", v.gdr},
       {"channels", v.channels}};
  if (v.net_device >= 0) j["net_device"] = v.net_device;
  if (v.proxy_rank >= 0) j["proxy_rank"] = v.proxy_rank;
}

void to_json(nlohmann::json& j, const NcclNetDevice& v) {
  j = {{"host", v.host}, {"kind", v.kind}, {"index", v.index}, {"name", v.name}};
  if (v.kind == "IB") {
    j["port"] = v.port;
    j["link_layer"] = v.link_layer;
  }
  j["address"] = v.address;
}

void to_json(nlohmann::json& j, const NcclGdrDecision& v) {
  j = {{"host", v.host},         {"gpu", v.gpu},         {"hca", v.hca},
       {"hca_name", v.hca_name}, {"enabled", v.enabled}, {"distance", v.distance},
       {"limit", v.limit},       {"distance_name", v.distance_name}, {"limit_name", v.limit_name}};
}

void to_json(nlohmann::json& j, const NcclGraph& v) {
  j = {{"host", v.host},         {"pattern", v.pattern},       {"channels", v.channels},
       {"bw_intra", v.bw_intra}, {"bw_inter", v.bw_inter},     {"type_intra", v.type_intra},
       {"type_inter", v.type_inter}};
}

void to_json(nlohmann::json& j, const NcclEvent& v) {
  j = {{"kind", v.kind}, {"file", v.file}, {"line", v.line}, {"host", v.host}, {"pid", v.pid},
       {"rank", v.rank}, {"text", v.text}, {"fields", v.fields}, {"count", v.count}};
}

void to_json(nlohmann::json& j, const NcclRankSeen& v) {
  j = {{"rank", v.rank}, {"host", v.host}, {"pid", v.pid}, {"file", v.file}, {"last_line", v.last_line},
       {"last_completed", v.last_completed}, {"last_enqueued", v.last_enqueued}, {"timed_out", v.timed_out}};
}

void to_json(nlohmann::json& j, const NcclLogSummary& v) {
  j = {{"schema", v.schema},
       {"files", v.files},
       {"nccl_versions", v.nccl_versions},
       {"hosts", v.hosts},
       {"ranks", v.ranks},
       {"nodes", v.nodes},
       {"bootstrap", v.bootstrap},
       {"network", v.network},
       {"env", v.env},
       {"net_devices", v.net_devices},
       {"gdr", v.gdr},
       {"graphs", v.graphs},
       {"connections", v.connections},
       {"transport_channels", v.transport_channels},
       {"warnings", v.warnings},
       {"lines_read", v.lines_read},
       {"nccl_lines", v.nccl_lines},
       {"init_complete", v.init_complete},
       {"events", v.events},
       {"events_dropped", v.events_dropped},
       {"ranks_seen", v.ranks_seen},
       {"plugin", v.plugin},
       {"lines_cut", v.lines_cut},
       {"binary_lines", v.binary_lines},
       {"unattributed_lines", v.unattributed_lines},
       {"findings", v.findings}};
}

void to_json(nlohmann::json& j, const CollHalf& v) {
  j = {{"time_us", v.time_us}, {"algbw_gbps", v.algbw_gbps}, {"busbw_gbps", v.busbw_gbps}};
  j["wrong"] = v.wrong ? nlohmann::json(*v.wrong) : nlohmann::json(nullptr);
}

void to_json(nlohmann::json& j, const CollRow& v) {
  j = {{"size", v.size_bytes},   {"count", v.count},       {"type", v.type},
       {"redop", v.redop},       {"root", v.root},         {"out_of_place", v.out_of_place},
       {"in_place", v.in_place}};
}

void to_json(nlohmann::json& j, const CollOpResult& v) {
  j = {{"op", v.op}, {"rows", v.rows}, {"avg_busbw_gbps", v.avg_busbw_gbps}, {"wrong", v.wrong}};
}

void to_json(nlohmann::json& j, const CollRankInfo& v) {
  j = {{"rank", v.rank}, {"host", v.host}, {"cuda_device", v.cuda_device}, {"pci_bus_id", v.pci_bus_id},
       {"name", v.name}};
}

void to_json(nlohmann::json& j, const CollExpectation& v) {
  j = {{"busbw_gbps", v.busbw_gbps}, {"basis", v.basis}};
}

void to_json(nlohmann::json& j, const CollReport& v) {
  j = {{"schema", v.schema},
       {"fabcheck_version", v.fabcheck_version},
       {"start_time", v.start_time},
       {"nccl_version", v.nccl_version},
       {"nccl_library", v.nccl_library},
       {"cuda_runtime_version", v.cuda_runtime_version},
       {"mode", v.mode},
       {"nranks", v.nranks},
       {"ranks", v.ranks},
       {"args", v.args},
       {"env", v.env},
       {"results", v.results},
       {"average_bus_bandwidth_gbps", v.average_bus_bandwidth_gbps},
       {"wrong", v.wrong},
       {"expected", v.expected},
       {"nccl_log_file", v.nccl_log_file},
       {"findings", v.findings}};
  j["nccl_log"] = v.nccl_log ? nlohmann::json(*v.nccl_log) : nlohmann::json(nullptr);
}

void to_json(nlohmann::json& j, const GpuCopyMeasurement& v) {
  j = {{"kind", v.kind},           {"gpu", v.gpu},         {"peer_gpu", v.peer_gpu},
       {"numa_node", v.numa_node}, {"numa_local", v.numa_local}, {"bytes", v.bytes},
       {"iterations", v.iterations}, {"gbps", v.gbps},   {"expected_gbps", v.expected_gbps},
       {"link", v.link}};
}

void to_json(nlohmann::json& j, const GpuInfo& v) {
  j = {{"index", v.index},         {"name", v.name},           {"pci_bus_id", v.pci_bus_id},
       {"numa_node", v.numa_node}, {"pcie_gts", v.pcie_gts},   {"pcie_width", v.pcie_width},
       {"pcie_max_gts", v.pcie_max_gts}, {"pcie_max_width", v.pcie_max_width}};
}

void to_json(nlohmann::json& j, const GpuCopyReport& v) {
  j = {{"schema", v.schema},
       {"fabcheck_version", v.fabcheck_version},
       {"cuda_runtime_version", v.cuda_runtime_version},
       {"cuda_driver_version", v.cuda_driver_version},
       {"gpus", v.gpus},
       {"measurements", v.measurements},
       {"findings", v.findings}};
}

}  // namespace fabcheck::model
