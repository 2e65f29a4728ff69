// nccl.message: WARN lines no specific rule explains, named through the
// catalogue of NCCL's messages (logs/nccl_catalog.h, data/nccl-messages/):
// the family, its subsystem, its causes, the fix and the next command. The
// settings NCCL printed ("NCCL_X set by environment to Y") that bear on a
// family are cited with it.
#include <fmt/format.h>

#include <map>
#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"
#include "logs/nccl_catalog.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclMessage = {
    "nccl.message", "NCCL", "NCCL printed a WARN that its message catalogue names (one diagnosis per family)",
    "Every WARN format of NCCL 2.5 to 2.30 is catalogued by family (data/nccl-messages/): the family says which "
    "part of NCCL failed and what usually causes it.",
    "The family's fix; the first WARN is usually the cause and later ones its consequences.", &Run};

namespace {

// Settings that bear on a subsystem's failures: cited when the log printed them.
const std::map<std::string, std::vector<std::string>>& SettingsBySubsystem() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"socket", {"NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY", "NCCL_COMM_ID", "NCCL_NSOCKS_PERTHREAD", "NCCL_SOCKET_NTHREADS"}},
      {"bootstrap", {"NCCL_SOCKET_IFNAME", "NCCL_OOB_NET_IFNAME", "NCCL_COMM_ID", "NCCL_SOCKET_FAMILY"}},
      {"net/ib", {"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT",
                  "NCCL_NET_GDR_LEVEL", "NCCL_IB_MERGE_NICS", "NCCL_IB_ADAPTIVE_ROUTING"}},
      {"plugin", {"NCCL_NET", "NCCL_NET_PLUGIN", "NCCL_IB_DISABLE"}},
      {"proxy", {"NCCL_SHM_DISABLE", "NCCL_P2P_DISABLE", "NCCL_NET"}},
      {"transport", {"NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_P2P_LEVEL", "NCCL_CUMEM_ENABLE",
                     "NCCL_COLLNET_ENABLE"}},
      {"init", {"NCCL_NET", "NCCL_IGNORE_NET_MISMATCH", "NCCL_MNNVL_ENABLE", "NCCL_COLLNET_ENABLE"}},
      {"cuda", {"NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE"}},
      {"memory", {"NCCL_CUMEM_ENABLE", "NCCL_GDRCOPY_ENABLE"}},
      {"topology", {"NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"}},
  };
  return m;
}

struct Group {
  const logs::NcclMessageFamily* family = nullptr;
  std::vector<const model::NcclEvent*> events;
  std::set<std::string> hosts;
  int count = 0;
};

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& catalog = logs::NcclMessageCatalog::Get();
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const auto* e : EventsOf(*ev.nccl, "warn")) {
    auto match = catalog.Classify(Field(*e, "text"), Field(*e, "source"));
    if (match.family == nullptr) continue;  // nccl.warn reports what the catalogue does not know
    auto [it, inserted] = groups.try_emplace(match.family->id);
    if (inserted) order.push_back(match.family->id);
    it->second.family = match.family;
    it->second.events.push_back(e);
    it->second.count += e->count;
    if (!e->host.empty()) it->second.hosts.insert(e->host);
  }
  bool first = true;
  for (const auto& id : order) {
    const Group& g = groups[id];
    const auto& fam = *g.family;
    std::string hosts = g.hosts.empty() ? "" : HostList(std::vector<std::string>(g.hosts.begin(), g.hosts.end()));
    auto d = Make(kNcclMessage, model::Severity::kFail,
                  fam.specific ? model::Confidence::kMedium : model::Confidence::kLow,
                  fmt::format("NCCL {}{}", fam.subsystem, hosts.empty() ? "" : " on " + hosts),
                  fmt::format("{}{} ({}; {} line(s){})", first ? "" : "then ", fam.title, fam.id, g.count,
                              first ? ", the first WARN family" : ""));
    first = false;
    for (const auto* e : g.events) {
      if (d.evidence.size() >= 3) break;
      std::string source = Field(*e, "source");
      d.evidence.push_back(Cite(*e) + (source.empty() ? "" : " [" + source + "]"));
    }
    if (auto s = SettingsBySubsystem().find(fam.subsystem); s != SettingsBySubsystem().end()) {
      for (const auto& name : s->second) {
        if (auto v = ev.nccl->env.find(name); v != ev.nccl->env.end()) {
          d.evidence.push_back(fmt::format("{} set by environment to {}", name, v->second));
        }
      }
    }
    d.causes = fam.causes;
    d.fix = fam.fix;
    d.next = fam.next;
    if (!hosts.empty() && StartsWith(d.next, "fabcheck") && d.next.find(" on the host") != std::string::npos) {
      d.next.replace(d.next.find(" on the host"), 12, " on " + hosts);
    }
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
