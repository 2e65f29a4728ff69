// nccl.plugin.load-failed, nccl.plugin.net-not-found and nccl.plugin.used: external
// network plugins (IBext / HPC-X, AWS OFI / EFA, gIB) and what NCCL finally used.
#include <fmt/format.h>

#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void RunLoad(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunNotFound(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunUsed(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclPluginLoadFailed = {
    "nccl.plugin.load-failed", "NCCL",
    "A network plugin was found but failed to load or initialise (the loader's message: a missing GLIBC version, "
    "an undefined symbol, a missing dependency such as libfabric)",
    "NCCL then falls back to its internal IB or Socket transport: on AWS (EFA) or GCP (gIB) that is TCP and a "
    "fraction of the bandwidth.",
    "Install the plugin built for this image's glibc and NCCL (or the image that ships it); its dependencies must "
    "be on LD_LIBRARY_PATH.",
    &RunLoad};

extern const Rule kNcclPluginNetNotFound = {
    "nccl.plugin.net-not-found", "NCCL", "NCCL_NET names a network that no loaded plugin provides (\"network X not found\")",
    "NCCL fails init: the requested network (e.g. \"AWS Libfabric\", \"IBext\") is not there.",
    "Install and load the plugin that provides it (NCCL_NET_PLUGIN), or unset NCCL_NET.", &RunNotFound};

extern const Rule kNcclPluginUsed = {
    "nccl.plugin.used", "NCCL", "Which network plugin NCCL loaded and which network it finally used",
    "Plugins decide the transport: IBext (HPC-X), AWS Libfabric (EFA), gIB. A plugin that loaded but is not the "
    "network in use means NCCL fell back.",
    "Nothing to fix when the network in use is the one intended.", &RunUsed};

namespace {

void RunLoad(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  auto events = EventsOf(*ev.nccl, "plugin-load");
  if (events.empty()) return;
  std::set<std::string> networks;
  for (const auto& [host, net] : ev.nccl->network) networks.insert(net);
  std::string used = Join(std::vector<std::string>(networks.begin(), networks.end()), ", ");
  auto d = Make(kNcclPluginLoadFailed, model::Severity::kWarn, model::Confidence::kHigh, "NET plugin",
                fmt::format("a network plugin failed to {}{}", Field(*events.front(), "stage") == "init" ? "initialise" : "load",
                            used.empty() ? "" : fmt::format("; NCCL used network {}", used)));
  if (networks.count("Socket") && NeedsNetwork(*ev.nccl)) d.severity = model::Severity::kFail;
  std::string all;
  for (const auto* e : events) {
    if (d.evidence.size() < 5) d.evidence.push_back(Cite(*e));
    all += Field(*e, "error") + " ";
  }
  if (all.find("GLIBC") != std::string::npos) {
    d.causes.push_back("the plugin was built against a newer glibc than the image has (\"version `GLIBC_2.xx' not "
                       "found\")");
  }
  if (all.find("undefined symbol") != std::string::npos) {
    d.causes.push_back("the plugin was built for another NCCL or library version (undefined symbol)");
  }
  if (all.find("cannot open shared object") != std::string::npos) {
    d.causes.push_back("a library the plugin needs is missing (libfabric, libibverbs, libcudart): "
                       "LD_LIBRARY_PATH or the image");
  }
  d.causes.push_back("the plugin's provider found no device (EFA / RDMA devices not passed to the container)");
  d.fix = kNcclPluginLoadFailed.fix;
  d.next = "ldd on the plugin library named above inside the job's image; then rerun with NCCL_DEBUG=INFO "
           "NCCL_DEBUG_SUBSYS=INIT,NET and fabcheck diagnose the log";
  out->push_back(std::move(d));
}

void RunNotFound(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  for (const auto* e : EventsOf(*ev.nccl, "net-not-found")) {
    auto d = Make(kNcclPluginNetNotFound, model::Severity::kFail, model::Confidence::kHigh, "NCCL_NET",
                  fmt::format("network \"{}\" not found: no loaded plugin provides it", Field(*e, "net")));
    d.evidence.push_back(Cite(*e));
    if (auto n = ev.nccl->env.find("NCCL_NET"); n != ev.nccl->env.end()) {
      d.evidence.push_back("NCCL_NET set by environment to " + n->second);
    }
    for (const auto* p : EventsOf(*ev.nccl, "plugin-load")) d.evidence.push_back(Cite(*p));
    std::string net = Field(*e, "net");
    if (net == "IB") {
      // NCCL's own IB transport: no plugin is involved; it found no usable RDMA device.
      for (const auto* x : EventsOf(*ev.nccl, "ib-no-device")) d.evidence.push_back(Cite(*x));
      for (const auto* x : EventsOf(*ev.nccl, "ib-unavailable")) d.evidence.push_back(Cite(*x));
      d.message = "NCCL_NET=IB, but NCCL's IB transport found no usable RDMA device on this host";
      d.causes = {"no RDMA device here, or /dev/infiniband not passed to the container (RDMA device plugin, SR-IOV "
                  "resource not requested)",
                  "rdma-core (libibverbs.so.1 and its provider) missing from the image",
                  "NCCL_IB_HCA selects devices that do not exist here"};
      d.fix = "give the job the host's RDMA devices, or unset NCCL_NET so NCCL can choose (sockets where no RDMA "
              "device exists)";
      d.next = "fabcheck inventory inside the job's container; fabcheck doctor --only L1,container";
      out->push_back(std::move(d));
      continue;
    }
    d.causes = {"the plugin that provides it did not load (see nccl.plugin.load-failed)",
                "NCCL_NET spelled differently from the plugin's name (names are case-sensitive: \"AWS Libfabric\", "
                "\"IBext\", \"IB\", \"Socket\")"};
    if (!ev.nccl->env.count("NCCL_NET_PLUGIN") && net != "Socket") {
      d.causes.insert(d.causes.begin(), "NCCL_NET_PLUGIN is not set: NCCL looked only for libnccl-net.so, so a plugin "
                                        "installed under another name (libnccl-net-<name>.so) was never tried");
    }
    d.fix = kNcclPluginNetNotFound.fix;
    out->push_back(std::move(d));
  }
}

void RunUsed(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  auto loaded = EventsOf(s, "plugin-loaded");
  if (loaded.empty() && s.plugin.empty()) return;
  std::set<std::string> plugins, networks;
  for (const auto& [host, name] : s.plugin) plugins.insert(name);
  for (const auto& [host, net] : s.network) networks.insert(net);
  std::string p = Join(std::vector<std::string>(plugins.begin(), plugins.end()), ", ");
  std::string n = Join(std::vector<std::string>(networks.begin(), networks.end()), ", ");
  // The plugin's networks ("IBext", "AWS Libfabric", "gIB") against what was used.
  bool fell_back = !networks.empty() && (networks.count("IB") || networks.count("Socket")) &&
                   !plugins.empty() && !networks.count(*plugins.begin());
  bool internal_ok = networks.count("IB") && fell_back;
  auto d = Make(kNcclPluginUsed,
                fell_back && networks.count("Socket") && NeedsNetwork(s) ? model::Severity::kWarn
                                                                       : model::Severity::kInfo,
                model::Confidence::kMedium, "NET plugin",
                fell_back ? fmt::format("plugin {} loaded, but NCCL used network {}{}", p, n,
                                        internal_ok ? " (its internal IB transport)" : "")
                          : fmt::format("network plugin {} loaded; NCCL used network {}", p.empty() ? "?" : p,
                                        n.empty() ? "(not printed)" : n));
  for (const auto* e : loaded) {
    if (d.evidence.size() < 4) d.evidence.push_back(Cite(*e));
  }
  for (const auto& [host, net] : s.network) {
    if (d.evidence.size() < 8) d.evidence.push_back(fmt::format("{}: Using network {}", host, net));
  }
  if (fell_back) {
    d.causes = {"the plugin found no device of its kind and NCCL fell back", "NCCL_NET forces the internal transport"};
    d.fix = "if the plugin's network was intended, check its devices and its own INFO lines";
  }
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
