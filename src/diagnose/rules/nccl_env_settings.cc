// nccl.env.settings: settings NCCL printed ("NCCL_X set by environment to Y")
// that decide an outcome by themselves, and NCCL 2.29-2.30's modes that go on
// without failing: a NIC-count mismatch accepted (NCCL_IGNORE_NET_MISMATCH),
// IB ports failed over and recovered, rail/plane fields in NCCL_IB_HCA, a
// GID index set by hand where NCCL (2.21+) picks one itself.
#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"
#include "logs/nccl_log.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclEnvSettings = {
    "nccl.env.settings", "NCCL",
    "A setting NCCL printed, or a mode NCCL 2.29+ entered without failing, changes what the job uses "
    "(NCCL_SHM_DISABLE, NCCL_NET without NCCL_NET_PLUGIN, NIC-count mismatch accepted, IB port failover, "
    "rail/plane fields in NCCL_IB_HCA, NCCL_IB_GID_INDEX set by hand)",
    "These settings and modes do not fail the job: it runs, slower or on fewer NICs, and nothing says why unless "
    "the setting is connected to the outcome.",
    "Unset the setting unless it is meant; repair the node or port that made NCCL degrade.", &Run};

namespace {

std::string Env(const model::NcclLogSummary& s, const char* name) {
  auto it = s.env.find(name);
  return it == s.env.end() ? "" : it->second;
}

bool Truthy(std::string_view v) { return v == "1" || v == "true" || v == "True" || v == "yes"; }

void Add(std::vector<model::Diagnosis>* out, model::Severity sev, model::Confidence conf, std::string object,
         std::string message, std::vector<std::string> evidence, std::vector<std::string> causes, std::string fix,
         std::string next) {
  auto d = Make(kNcclEnvSettings, sev, conf, std::move(object), std::move(message));
  d.evidence = std::move(evidence);
  d.causes = std::move(causes);
  d.fix = std::move(fix);
  d.next = std::move(next);
  out->push_back(std::move(d));
}

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  int version = 0;
  for (const auto& v : s.nccl_versions) version = std::max(version, logs::NcclVersionCode(v));

  if (std::string v = Env(s, "NCCL_SHM_DISABLE"); Truthy(v)) {
    Add(out, model::Severity::kWarn, model::Confidence::kHigh, "NCCL_SHM_DISABLE",
        "NCCL_SHM_DISABLE=" + v + ": ranks of one node that cannot use P2P go through the network (or fail with no "
        "transport)",
        {"NCCL_SHM_DISABLE set by environment to " + v},
        {"set to work around a small /dev/shm in a container (the fix is a larger /dev/shm)",
         "left over from debugging"},
        "unset NCCL_SHM_DISABLE; give the container a large /dev/shm (--shm-size, emptyDir medium: Memory)",
        "fabcheck doctor --only container,NCCL");
  }
  std::string net = Env(s, "NCCL_NET");
  if (!net.empty() && net != "IB" && net != "Socket" && Env(s, "NCCL_NET_PLUGIN").empty() && s.plugin.empty()) {
    Add(out, model::Severity::kWarn, model::Confidence::kMedium, "NCCL_NET",
        fmt::format("NCCL_NET={} names a plugin's network, but NCCL_NET_PLUGIN is not set and no plugin loaded", net),
        {"NCCL_NET set by environment to " + net},
        {"without NCCL_NET_PLUGIN NCCL only tries libnccl-net.so: a plugin installed as libnccl-net-<name>.so is never "
         "loaded",
         "the plugin's library is not on LD_LIBRARY_PATH inside the image"},
        "set NCCL_NET_PLUGIN to the plugin's name or path (e.g. NCCL_NET_PLUGIN=aws-ofi or libnccl-net-gib.so)",
        "fabcheck doctor --only NCCL --env-file JOB.env");
  }
  for (const auto* e : EventsOf(s, "net-count-mismatch")) {
    if (Field(*e, "ignored") != "1") continue;  // the failing form is the catalogue's init.net-count-mismatch
    std::vector<std::string> evidence = {Cite(*e)};
    for (const auto* r : EventsOf(s, "net-count-rank")) {
      if (evidence.size() < 6) evidence.push_back(Cite(*r));
    }
    Add(out, model::Severity::kWarn, model::Confidence::kHigh, "NIC count",
        fmt::format("nodes have different numbers of NICs (min {}, max {}) and NCCL went on "
                    "(NCCL_IGNORE_NET_MISMATCH, on by default since 2.30): the job runs at the slowest node's NIC count",
                    Field(*e, "min"), Field(*e, "max")),
        evidence,
        {"a NIC or port is down on the nodes with fewer devices", "NCCL_IB_HCA selects a different set per node",
         "a device not passed to one container"},
        "repair the node with fewer NICs; set NCCL_IGNORE_NET_MISMATCH=0 to make NCCL fail instead of degrading",
        "fabcheck ladder --rungs L1 (NIC counts compared across nodes)");
  }
  auto failed = EventsOf(s, "ib-port-failed");
  auto recovered = EventsOf(s, "ib-port-recovered");
  if (!failed.empty()) {
    std::vector<std::string> evidence;
    for (const auto* e : failed) evidence.push_back(Cite(*e));
    for (const auto* e : recovered) evidence.push_back(Cite(*e));
    if (evidence.size() > 6) evidence.resize(6);
    Add(out, recovered.empty() ? model::Severity::kFail : model::Severity::kWarn, model::Confidence::kHigh,
        HostList({failed.front()->host.empty() ? "this host" : failed.front()->host}) + " IB device " +
            Field(*failed.front(), "device"),
        recovered.empty() ? "an IB port failed during the job; NCCL moved its traffic to the remaining ports (it ran "
                            "degraded)"
                          : "an IB port failed during the job and later recovered; NCCL ran degraded meanwhile",
        evidence,
        {"the port's link went down (cable, transceiver, switch port)", "the device hit a fatal error (dmesg, AER)"},
        "find the port (NCCL's device index is its order in the NET/IB line) and check its link and counters",
        "fabcheck doctor --only L1 on the host; fabcheck exporter counters (link_downed) for that port");
  } else if (!recovered.empty()) {
    Add(out, model::Severity::kWarn, model::Confidence::kMedium, "IB port",
        "NCCL marked an IB port as recovered: it had failed earlier (the failure line is not in this log)",
        {Cite(*recovered.front())}, {"the port's link flapped"}, "check the port's link_downed counter",
        "fabcheck doctor --only L1");
  }
  if (std::string hca = Env(s, "NCCL_IB_HCA"); !hca.empty()) {
    bool rail_plane = false;
    for (const auto& item : Split(hca, ',')) {
      if (std::count(item.begin(), item.end(), ':') >= 2) rail_plane = true;
    }
    if (rail_plane) {
      bool supported = version == 0 || version >= 22900;
      Add(out, supported ? model::Severity::kInfo : model::Severity::kWarn, model::Confidence::kHigh, "NCCL_IB_HCA",
          supported ? "NCCL_IB_HCA assigns rails and planes (<hca>:<port>:<rail>:<plane>): NCCL pairs NICs by them, "
                      "so they must match the cabling on every node"
                    : fmt::format("NCCL_IB_HCA has rail/plane fields, which this NCCL ({}) does not read",
                                  s.nccl_versions.empty() ? "?" : s.nccl_versions.front()),
          {"NCCL_IB_HCA set by environment to " + hca},
          {"rail or plane numbers that differ from the fabric's cabling send traffic across rails"},
          "check the rail/plane numbers against the fabric file (fabcheck fabric)", "fabcheck fabric --check-file fabric.yaml");
    }
  }
  if (std::string gid = Env(s, "NCCL_IB_GID_INDEX"); !gid.empty() && (version == 0 || version >= 22100)) {
    Add(out, model::Severity::kInfo, model::Confidence::kMedium, "NCCL_IB_GID_INDEX",
        "NCCL_IB_GID_INDEX=" + gid + " set by hand: since 2.21 NCCL picks the RoCE v2 GID itself, and a fixed index "
        "breaks when the GID table's order changes (an address added, a container's namespace)",
        {"NCCL_IB_GID_INDEX set by environment to " + gid},
        {"copied from an older guide"},
        "unset NCCL_IB_GID_INDEX (use NCCL_IB_ADDR_FAMILY / NCCL_IB_ROCE_VERSION_NUM to steer the choice)",
        "fabcheck doctor --only RoCE (the GID table and the index NCCL would pick)");
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
