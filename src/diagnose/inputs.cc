#include "diagnose/inputs.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <ctime>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/input.h"
#include "base/json_budget.h"
#include "base/strings.h"
#include "bundle/bundle.h"
#include "sys/sysroot.h"
#include "fabcheck/model/doctor.h"
#include "fabcheck/model/perf.h"
#include "logs/nccl_log.h"
#include "logs/nccl_inspector.h"
#include "logs/nccl_ras.h"
#include "logs/sniff.h"
#include "sys/infiniband.h"

namespace fabcheck::diagnose {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Loader {
  Evidence ev;
  logs::NcclLogParser parser;
  bool any_log = false;
  // member|object|counter -> index in ev.counters
  std::map<std::string, size_t> series;
  int order = 0;  // input order, for samples without a time

  void Record(const std::string& path, const std::string& kind, const std::string& status) {
    ev.inputs.push_back({path, kind, status});
  }
  void AddPoint(const std::string& member, const std::string& object, const std::string& counter, double time,
                uint64_t value, const std::string& source) {
    std::string key = member + "|" + object + "|" + counter;
    auto [it, inserted] = series.try_emplace(key, ev.counters.size());
    if (inserted) ev.counters.push_back({member, object, counter, {}});
    ev.counters[it->second].points.push_back({time, value, source});
  }
  void AddMember(const std::string& id, const std::vector<std::string>& addresses) {
    if (id.empty()) return;
    for (auto& m : ev.members) {
      if (m.id == id) {
        for (const auto& a : addresses) {
          if (std::find(m.addresses.begin(), m.addresses.end(), a) == m.addresses.end()) m.addresses.push_back(a);
        }
        return;
      }
    }
    ev.members.push_back({id, addresses, {}});
  }

  void Path(const std::string& path, int depth);
  void File(const std::string& path, const std::string& as_source);
  void Json(const std::string& path, const json& j);
  void Bundle(const std::string& dir);
  void Bundle(const std::string& path, const bundle::Bundle& b);
  void Perf(const std::string& path, const json& j);
  void Kv(const std::string& path, const json& j);
  void Sweep(const std::string& path, const json& j);
  void Coll(const std::string& path, const json& j);
  void Sample(const std::string& path, const json& j);
  void LadderRungs(const bundle::Bundle& b);
  void Snapshot(const std::string& path);
};

double MtimeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec / 1e9;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
double Num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

void Loader::Path(const std::string& path, int depth) {
  std::error_code ec;
  if (path != "-" && fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / bundle::kManifestFile, ec)) {
      Bundle(path);
      return;
    }
    // A capture: the sysroot's class directory, relative to the capture's root.
    if (fs::exists(fs::path(path) / std::string(sys::infiniband::kClassDir).substr(1), ec)) {
      Snapshot(path);
      return;
    }
    if (depth > 3) return;
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(path, ec)) entries.push_back(e.path().string());
    if (ec) {
      Record(path, "directory", "cannot list: " + ec.message());
      return;
    }
    std::sort(entries.begin(), entries.end());
    if (entries.size() > 10000) entries.resize(10000);
    for (const auto& e : entries) Path(e, depth + 1);
    return;
  }
  File(path, path);
}

void Loader::File(const std::string& path, const std::string& source) {
  // stdin cannot be read twice: it is a log (what users pipe in).
  if (path == "-") {
    int before = parser.nccl_lines();
    Status s = parser.AddFile(path);
    bool read = s.ok() || parser.nccl_lines() > before;
    any_log |= read;
    Record("stdin", "log", s.ok() ? "read" : read ? "read in part: " + s.message() : s.message());
    return;
  }
  // Sniff the first bytes: JSON, metrics text, gzip, or a log.
  auto head_reader = LineReader::Open(path, {.max_line = 4096, .max_total = 1 << 16});
  if (!head_reader.ok()) {
    Record(path, "unknown", head_reader.status().message());
    return;
  }
  std::string head;
  std::string_view line;
  for (int i = 0; i < 20 && head_reader->Next(&line); ++i) head += std::string(line) + "\n";
  std::string_view trimmed = Trim(head);
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) {
    // A ladder bundle packed as .tar.gz; anything else compressed is not read here.
    if (EndsWith(path, ".tar.gz") || EndsWith(path, ".tgz")) {
      // Read from this one unpacked copy: opening it again would hold a
      // second copy of the whole bundle at the same time.
      auto b = bundle::Bundle::Open(path);
      if (b.ok()) {
        Bundle(path, *b);
        return;
      }
      Snapshot(path);
      return;
    }
    Record(path, "gzip", "compressed, and neither a ladder bundle nor a fabcheck snapshot: decompress it first");
    return;
  }
  // NCCL Inspector output: JSON objects one after another (not one document).
  if (logs::LooksLikeInspectorJson(head)) {
    auto text = ReadFileBounded(path, 1ull << 30);
    if (!text.ok()) {
      Record(path, "nccl-inspector", text.status().message());
      return;
    }
    auto parsed = logs::ParseInspectorJson(*text);
    bool any = !parsed.records.empty();
    ev.inspector.push_back({source, std::move(parsed)});
    Record(source, "nccl-inspector", any ? "read" : "no collective records in it");
    return;
  }
  // By content: NCCL lines behind a leading '[' (launcher prefixes, timestamps) are a log.
  if (logs::SniffText(head) == logs::TextKind::kJson) {
    auto text = ReadFileBounded(path, 256ull << 20);
    if (!text.ok()) {
      Record(path, "json", text.status().message());
      return;
    }
    auto j = ParseJsonWithin(*text, path, kClusterDocumentBudget);
    if (j.ok()) {
      Json(source, *j);
      return;
    }
    if (j.status().code() != StatusCode::kInvalidArgument) {  // over a budget: say which
      Record(path, "json", j.status().message());
      return;
    }
    // An object that does not parse is a broken document; an array start that
    // does not parse is most likely bracketed log lines: read it as a log.
    if (trimmed[0] == '{') {
      Record(path, "json", "not valid JSON (is it a fabcheck --json output?)");
      return;
    }
  }
  if (logs::LooksLikeRasText(head)) {
    auto text = ReadFileBounded(path, 256ull << 20);
    if (!text.ok()) {
      Record(path, "nccl-ras", text.status().message());
      return;
    }
    ev.ras.push_back({source, logs::ParseRasText(*text)});
    Record(source, "nccl-ras", "read");
    return;
  }
  if (LooksLikeMetrics(head) && path != "-") {
    auto text = ReadFileBounded(path, 256ull << 20);
    if (!text.ok()) {
      Record(path, "metrics", text.status().message());
      return;
    }
    double t = MtimeOf(path);
    auto readings = ParseMetricsText(*text, t);
    ++order;
    for (const auto& r : readings) AddPoint(r.member, r.object, r.counter, r.time, r.value, source);
    Record(source, "metrics", readings.empty() ? "no counter fabcheck knows in it" : "read");
    return;
  }
  int before = parser.nccl_lines();
  Status s = parser.AddFile(path);
  // What was read before a limit counts when it held NCCL lines (a huge log);
  // an endless stream of nothing (/dev/zero) or an unopenable file does not.
  bool read = s.ok() || ((s.code() == StatusCode::kResourceExhausted || s.code() == StatusCode::kDeadlineExceeded) &&
                         parser.nccl_lines() > before);
  any_log |= read;
  Record(source, "log", s.ok() ? "read" : read ? "read in part: " + s.message() : s.message());
}

void Loader::Json(const std::string& path, const json& j) {
  if (!j.is_object()) {
    Record(path, "json", "not a fabcheck document (no \"schema\")");
    return;
  }
  std::string schema = Str(j, "schema");
  try {
    if (schema == model::kPerfSchema) {
      Perf(path, j);
    } else if (schema == model::kKvSchema) {
      Kv(path, j);
    } else if (schema == model::kKvFanSchema) {
      // kv run --agents: each transfer's own result, as if given one by one.
      const json& members = j.contains("members") ? j.at("members") : json::array();
      for (size_t i = 0; i < members.size(); ++i) {
        if (members[i].contains("result")) Kv(fmt::format("{} (transfer {})", path, i + 1), members[i].at("result"));
      }
      if (members.empty()) Record(path, "kv", "no transfers in this fan-in/fan-out result");
    } else if (schema == "fabcheck.sweep/v1") {
      Sweep(path, j);
    } else if (schema == "fabcheck.coll/v1") {
      Coll(path, j);
    } else if (schema == "fabcheck.doctor/v1") {
      std::string error;
      auto report = model::ParseDoctorJson(j.dump(), &error);
      if (!report) {
        Record(path, "doctor", error);
        return;
      }
      ev.doctors.push_back({path, report->hostname, report->findings});
      Record(path, "doctor", "read");
    } else if (schema == "fabcheck.ladder/v1") {
      Bundle(fs::path(path).parent_path().string());
    } else if (j.contains("values") && j.contains("phase")) {
      Sample(path, j);
    } else {
      Record(path, "json", schema.empty() ? "not a fabcheck document (no \"schema\")" : "schema " + schema + " is not evidence diagnose reads");
    }
  } catch (const std::exception& e) {
    Record(path, schema.empty() ? "json" : schema, std::string("malformed: ") + e.what());
  }
}

void Loader::Perf(const std::string& path, const json& j) {
  model::PerfResult r = j.get<model::PerfResult>();
  PairEvidence p;
  p.source = path;
  p.a = r.client.host;
  p.b = r.server.substr(0, r.server.rfind(':'));
  if (!r.server_side.host.empty()) p.b = r.server_side.host;
  p.transport = r.settings.transport;
  p.device_a = r.client.device;
  p.device_b = r.server_side.device;
  p.gid_a = r.client.gid;
  p.gid_b = r.server_side.gid;
  p.mtu = r.client.mtu;
  p.error = r.error;
  for (const auto& s : r.results) {
    if (!s.error.empty()) {
      p.failed.emplace_back(s.bytes, s.error);
      continue;
    }
    if (s.bw && s.bw->avg_gbps > 0) {
      p.sizes.emplace_back(s.bytes, s.bw->avg_gbps);
      if (s.bytes >= p.bw_bytes) {
        p.bw_bytes = s.bytes;
        p.bw_gbps = s.bw->avg_gbps;
      }
    }
  }
  if (!r.error.empty() && !p.sizes.empty()) p.failed.emplace_back(UINT64_MAX, r.error);
  ev.pairs.push_back(std::move(p));
  Record(path, "perf", "read");
}

void Loader::Kv(const std::string& path, const json& j) {
  model::KvResult r = j.get<model::KvResult>();
  // Its L3 run is a bandwidth test of the pair like any other: the perf rules see it.
  if (r.l3 && r.l3->error.empty() && r.l3->gbps > 0) {
    PairEvidence p;
    p.source = path + " (l3)";
    p.a = r.client.host;
    p.b = !r.server_side.host.empty() ? r.server_side.host : r.server.substr(0, r.server.rfind(':'));
    p.transport = r.transport;
    p.device_a = r.client.device;
    p.device_b = r.server_side.device;
    p.gid_a = r.client.gid;
    p.gid_b = r.server_side.gid;
    p.mtu = r.client.mtu;
    p.bw_gbps = r.l3->gbps;
    p.bw_bytes = r.l3->size;
    p.sizes.emplace_back(r.l3->size, r.l3->gbps);
    ev.pairs.push_back(std::move(p));
  }
  ev.kvs.push_back({path, std::move(r)});
  Record(path, "kv", "read");
}

void Loader::Sweep(const std::string& path, const json& j) {
  std::vector<std::string> names;
  for (const auto& m : j.value("members", json::array())) {
    std::string name = Str(m, "name");
    names.push_back(name);
    std::vector<std::string> addresses;
    for (const auto& a : m.value("data_addresses", json::array())) {
      if (a.is_string()) addresses.push_back(a.get<std::string>());
    }
    AddMember(name, addresses);
  }
  auto name = [&](int i) { return i >= 0 && i < static_cast<int>(names.size()) ? names[i] : std::to_string(i); };
  for (const auto& x : j.value("pairs", json::array())) {
    PairEvidence p;
    p.a = name(x.value("a", 0));
    p.b = name(x.value("b", 0));
    p.source = fmt::format("{} (pair {} -> {} rail {})", path, p.a, p.b, x.value("rail", 0));
    p.transport = Str(x, "transport");
    if (x.contains("bw_gbps") && x["bw_gbps"].is_number()) p.bw_gbps = x["bw_gbps"].get<double>();
    if (x.contains("path_mtu") && x["path_mtu"].is_number()) p.path_mtu = x["path_mtu"].get<int>();
    p.mtu = x.value("local_mtu", 0);
    p.error = Str(x, "error");
    ev.pairs.push_back(std::move(p));
  }
  Record(path, "sweep", "read");
}

void Loader::Coll(const std::string& path, const json& j) {
  std::vector<std::string> hosts;
  for (const auto& r : j.value("ranks", json::array())) {
    std::string h = Str(r, "host");
    if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  double expected = j.contains("expected") ? Num(j["expected"], "busbw_gbps") : 0;
  for (const auto& op : j.value("results", json::array())) {
    CollEvidence c;
    c.source = path;
    c.op = Str(op, "op");
    c.expected_gbps = expected;
    c.nodes = static_cast<int>(hosts.size());
    for (const auto& row : op.value("rows", json::array())) {
      uint64_t bytes = row.value("size", uint64_t{0});  // coll JSON names it "size"
      double bw = row.contains("out_of_place") ? Num(row["out_of_place"], "busbw_gbps") : 0;
      c.sizes.emplace_back(bytes, bw);
      if (bytes >= c.bytes) {
        c.bytes = bytes;
        c.busbw_gbps = bw;
      }
    }
    ev.colls.push_back(std::move(c));
  }
  Record(path, "coll", "read");
}

void Loader::Sample(const std::string& path, const json& j) {
  std::string member = Str(j, "member");
  double t = Num(j, "time_unix");
  if (t <= 0) t = MtimeOf(path);
  int n = 0;
  for (const auto& [object, counters] : j["values"].items()) {
    if (!counters.is_object()) continue;
    for (const auto& [counter, value] : counters.items()) {
      if (!value.is_number_unsigned() && !value.is_number_integer()) continue;
      std::string name = counter;
      if (StartsWith(name, "hw_counters/")) name = name.substr(12);
      if (StartsWith(name, "counters/")) name = name.substr(9);
      AddPoint(member, object, name, t, value.get<uint64_t>(), path);
      ++n;
    }
  }
  Record(path, "counter-sample", n > 0 ? "read" : "no counters in it");
}

void Loader::LadderRungs(const bundle::Bundle& b) {
  const std::string dir = b.path();
  bool samples = false;
  for (const auto& f : b.Files()) samples |= StartsWith(f, "members/") && f.find("/counters/") != std::string::npos;
  for (const auto& rung : b.manifest().rungs) {
    for (const auto& x : rung.pairs) {
      PairEvidence p;
      p.a = x.a;
      p.b = x.b;
      p.source = fmt::format("{} (rung {} pair {} -> {})", b.Describe(), rung.id, x.a, x.b);
      p.transport = x.transport;
      p.device_a = x.device_a;
      p.device_b = x.device_b;
      p.gid_a = x.gid_a;
      p.gid_b = x.gid_b;
      p.mtu = x.local_mtu;
      p.path_mtu = x.path_mtu.value_or(0);
      p.bw_gbps = x.bw_gbps.value_or(0);
      if (x.expected_gbps) {
        // The expectation is a share of the port rate; its basis names the rate ("400 Gb/s port x 90%").
        p.line_basis = x.expected_basis;
        double rate = 0;
        if (auto gb = p.line_basis.find(" Gb/s"); gb != std::string::npos) {
          size_t start = p.line_basis.rfind(' ', gb == 0 ? 0 : gb - 1);
          start = start == std::string::npos ? 0 : start + 1;
          rate = ParseDouble(p.line_basis.substr(start, gb - start)).value_or(0);
        }
        p.line_gbps = rate > 0 ? rate : *x.expected_gbps;
      }
      for (const auto& pt : x.sweep) {
        p.sizes.emplace_back(pt.bytes, pt.bw_gbps);
        if (pt.bytes >= p.bw_bytes) p.bw_bytes = pt.bytes;
      }
      if (x.verdict == model::RungVerdict::kFail && !x.bw_gbps) p.error = x.reason;
      if (p.bw_gbps > 0 || p.path_mtu > 0 || !p.error.empty()) ev.pairs.push_back(std::move(p));
    }
    for (const auto& c : rung.collectives) {
      CollEvidence e;
      e.source = fmt::format("{} (rung {} {})", b.Describe(), rung.id, c.op);
      e.op = c.op;
      e.bytes = c.max_bytes;
      e.busbw_gbps = c.busbw_gbps;
      e.expected_gbps = c.expected_gbps.value_or(0);
      e.nodes = static_cast<int>(rung.members.size());
      for (const auto& pt : c.sweep) e.sizes.emplace_back(pt.bytes, pt.bw_gbps);
      ev.colls.push_back(std::move(e));
    }
    // Deltas the ladder recorded without their samples: two points per rung.
    if (!samples) {
      for (const auto& d : rung.counter_deltas) {
        AddPoint(d.member, d.object, d.counter, rung.start_unix, d.before, b.Describe() + " rung " + rung.id + " before");
        AddPoint(d.member, d.object, d.counter, rung.start_unix + d.interval_s, d.after,
                 b.Describe() + " rung " + rung.id + " after");
      }
    }
    for (const auto& f : rung.evidence_files) {
      // Counter samples and doctor reports were read above, with the members.
      if (StartsWith(f, "members/") && (f.find("/counters/") != std::string::npos || EndsWith(f, "/doctor.json"))) continue;
      // L4's coll report: its collectives are the rung's, read above.
      if (EndsWith(f, "coll.json") && !rung.collectives.empty()) continue;
      auto host = b.HostPath(f);
      if (host.ok()) File(*host, b.Describe() + ": " + f);
    }
  }
}

void Loader::Bundle(const std::string& path) {
  auto opened = bundle::Bundle::Open(path);
  if (!opened.ok()) {
    Record(path, "ladder", opened.status().message());
    return;
  }
  Bundle(path, *opened);
}

void Loader::Bundle(const std::string& path, const bundle::Bundle& b) {
  ev.bundle = path;
  for (const auto& m : b.manifest().members) {
    std::vector<std::string> addresses = m.data_addresses;
    if (!m.control.empty()) addresses.push_back(m.control.substr(0, m.control.rfind(':')));
    if (!m.name.empty()) addresses.push_back(m.name);
    AddMember(m.id, addresses);
    if (!m.doctor_file.empty()) {
      auto doctor = b.ReadDoctor(m);
      if (doctor.ok()) {
        ev.doctors.push_back({b.Describe() + ": " + m.doctor_file, m.id, doctor->findings});
      } else {
        Record(b.Describe() + ": " + m.doctor_file, "doctor", doctor.status().message());
      }
    }
  }
  // Counter samples (members/<id>/counters/<rung>-<phase>.json), merged into series by time.
  for (const auto& f : b.Files()) {
    if (!StartsWith(f, "members/") || f.find("/counters/") == std::string::npos || !EndsWith(f, ".json")) continue;
    auto sample = b.ReadCounterSample(f);
    if (!sample.ok()) {
      Record(b.Describe() + ": " + f, "counter-sample", sample.status().message());
      continue;
    }
    for (const auto& [object, counters] : sample->values) {
      for (const auto& [counter, value] : counters) {
        std::string name = counter;
        if (StartsWith(name, "hw_counters/")) name = name.substr(12);
        if (StartsWith(name, "counters/")) name = name.substr(9);
        AddPoint(sample->member, object, name, sample->time_unix, value, b.Describe() + ": " + f);
      }
    }
  }
  LadderRungs(b);
  Record(path, "ladder", "read");
}

// A `fabcheck snapshot` capture (or a captured sysfs tree): the RDMA port
// counters it holds, at the capture's time. A capture holds what inventory and
// doctor read, so it may have none.
void Loader::Snapshot(const std::string& path) {
  auto root = sys::SysRoot::Open(path);
  if (!root.ok()) {
    Record(path, "snapshot", root.status().message());
    return;
  }
  double t = MtimeOf(path);
  std::string host;
  if (auto info = root->ReadFile(sys::kCaptureInfoFile); info.ok()) {
    auto parsed = ParseJsonWithin(*info, path + ": " + std::string(sys::kCaptureInfoFile), kNodeDocumentBudget);
    const json j = parsed.ok() ? std::move(*parsed) : json();
    if (j.is_object()) {
      host = Str(j, "hostname");
      std::tm tm{};
      std::string taken = Str(j, "taken_at");
      if (::strptime(taken.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr) t = static_cast<double>(::timegm(&tm));
    }
  }
  int n = 0;
  auto devices = sys::infiniband::ListDevices(*root);
  for (const auto& dev : devices.ok() ? *devices : std::vector<std::string>{}) {
    const sys::infiniband::DeviceFiles device = sys::infiniband::Device(dev);
    auto ports = root->ListDir(device.Ports());
    for (const auto& port : ports.ok() ? *ports : std::vector<std::string>{}) {
      const sys::infiniband::PortFiles files = sys::infiniband::PortOf(device, port);
      for (const std::string& dir : {files.Counters(), files.HwCounters()}) {
        auto files = root->ListDir(dir);
        for (const auto& f : files.ok() ? *files : std::vector<std::string>{}) {
          auto text = root->ReadAttribute(dir + "/" + f);
          if (!text.ok()) continue;
          auto v = ParseUint(*text);
          if (!v || f == "lifespan") continue;
          AddPoint(host, dev + "/" + port, f, t, *v, path);
          ++n;
        }
      }
    }
  }
  Record(path, "snapshot", n > 0 ? "read" : "no RDMA port counters in this capture (it holds what inventory and doctor read)");
}

}  // namespace

Result<Evidence> LoadEvidence(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) return InvalidArgumentError("no input given: pass NCCL logs, metrics samples, JSON results or a ladder bundle");
  Loader loader;
  loader.ev.line_gbps = options.line_gbps;
  for (const auto& p : paths) loader.Path(p, 0);
  if (loader.any_log) loader.ev.nccl = loader.parser.Finish();
  // Points in time order; equal times keep the order the files were given.
  for (auto& s : loader.ev.counters) {
    std::stable_sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  }
  return std::move(loader.ev);
}

}  // namespace fabcheck::diagnose
