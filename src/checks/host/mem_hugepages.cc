// mem.hugepages: HugePages per size and NUMA node, transparent hugepages and
// NUMA balancing, reported as facts; a warning only where the profile's
// memory: section says what the node must have.
#include <fmt/format.h>

#include <map>

#include "base/units.h"
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/memory.h"

namespace fabcheck::checks {
namespace {

constexpr const char* kOldCapture =
    "this capture was taken before fabcheck recorded the memory settings (take it again with `fabcheck snapshot`)";

std::string Count(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "?"; }

std::string ProfileLabel(const Context& ctx) {
  return ctx.profile && !ctx.profile->name.empty() ? "profile " + ctx.profile->name : "the profile";
}

void HugePages(const Context& ctx, Reporter& out) {
  auto pools = sys::ReadHugePages(*ctx.root);
  std::map<uint64_t, uint64_t> want;
  if (ctx.profile) want = ctx.profile->min_hugepages;
  if (!pools.ok()) {
    if (pools.status().code() == StatusCode::kNotFound && ctx.host_evidence_complete) {
      out.Info("hugepages", pools.status().message());
    } else {
      out.Unknown("hugepages", "HugePages unknown: " + (ctx.host_evidence_complete ? pools.status().message()
                                                                                   : std::string(kOldCapture)));
    }
    for (const auto& [kb, n] : want) {
      out.Unknown("hugepages-" + std::to_string(kb) + "kB",
                  fmt::format("{} asks for {} pages of {}, but the pools could not be read", ProfileLabel(ctx), n,
                              FormatSize(kb * 1024)));
    }
    return;
  }
  std::map<uint64_t, const sys::HugePagePool*> total;
  std::map<uint64_t, std::vector<std::string>> per_node;
  for (const auto& p : *pools) {
    if (p.node < 0) {
      total[p.page_kb] = &p;
    } else {
      per_node[p.page_kb].push_back(fmt::format("node{} {}/{}", p.node, Count(p.total), Count(p.free)));
    }
  }
  for (const auto& [kb, pool] : total) {
    std::string object = "hugepages-" + std::to_string(kb) + "kB";
    std::vector<std::string> ev = {Evidence(pool->dir + "/nr_hugepages", Count(pool->total)),
                                   Evidence(pool->dir + "/free_hugepages", Count(pool->free))};
    if (!per_node[kb].empty()) ev.push_back("per NUMA node (total/free): " + Join(per_node[kb], ", "));
    std::string facts = fmt::format("{} pages: {} total, {} free", FormatSize(kb * 1024), Count(pool->total),
                                    Count(pool->free));
    auto it = want.find(kb);
    if (it == want.end()) {
      out.Info(object, facts, ev);
      continue;
    }
    if (!pool->total) {
      out.Unknown(object, facts + "; the count is unreadable, so " + ProfileLabel(ctx) + "'s minimum cannot be checked",
                  ev);
    } else if (*pool->total < it->second) {
      out.Add(model::Severity::kWarn, object,
              fmt::format("{}, below the {} this machine type needs ({} memory.hugepages)", facts, it->second,
                          ProfileLabel(ctx)),
              ev,
              fmt::format("reserve them at boot (kernel parameters hugepagesz={} hugepages={}), or now: echo {} > "
                          "{}/nr_hugepages (may fall short once memory is fragmented)",
                          kb >= 1048576 ? "1G" : "2M", it->second, it->second, pool->dir));
    } else {
      out.Pass(object, fmt::format("{} (the profile asks for at least {})", facts, it->second), ev);
    }
  }
  for (const auto& [kb, n] : want) {
    if (total.count(kb)) continue;
    out.Add(model::Severity::kWarn, "hugepages-" + std::to_string(kb) + "kB",
            fmt::format("{} asks for {} pages of {}, but the kernel offers no such pool", ProfileLabel(ctx), n,
                        FormatSize(kb * 1024)),
            {std::string(sys::kHugePagesDir) + " has no hugepages-" + std::to_string(kb) + "kB"},
            "check the CPU supports that page size (1 GiB: pdpe1gb) and boot with hugepagesz=<size>");
  }
}

void Thp(const Context& ctx, Reporter& out) {
  auto mode = sys::ReadThpMode(*ctx.root);
  std::optional<std::string> want;
  if (ctx.profile) want = ctx.profile->thp;
  if (!mode.ok()) {
    bool absent = mode.status().code() == StatusCode::kNotFound && ctx.host_evidence_complete;
    std::string msg = absent ? "transparent hugepages are not available (no " + std::string(sys::kThpEnabled) + ")"
                             : "transparent hugepages mode unknown: " +
                                   (ctx.host_evidence_complete ? mode.status().message() : std::string(kOldCapture));
    if (absent && !want) {
      out.Info("thp", msg);
    } else {
      out.Unknown("thp", msg);
    }
    return;
  }
  std::vector<std::string> ev = {Evidence(sys::kThpEnabled, *mode)};
  if (!want) {
    out.Info("thp", "transparent hugepages: " + *mode, ev);
  } else if (*want != *mode) {
    out.Add(model::Severity::kWarn, "thp",
            "transparent hugepages are '" + *mode + "', " + ProfileLabel(ctx) + " expects '" + *want + "'", ev,
            "echo " + *want + " > " + std::string(sys::kThpEnabled) +
                " (persistently: kernel parameter transparent_hugepage=" + *want + ")");
  } else {
    out.Pass("thp", "transparent hugepages: " + *mode + ", as the profile expects", ev);
  }
}

void NumaBalancing(const Context& ctx, Reporter& out) {
  auto value = sys::ReadNumaBalancing(*ctx.root);
  std::optional<bool> want;
  if (ctx.profile) want = ctx.profile->numa_balancing;
  if (!value.ok()) {
    bool absent = value.status().code() == StatusCode::kNotFound && ctx.host_evidence_complete;
    std::string msg = absent ? "automatic NUMA balancing is not built into this kernel (no " +
                                   std::string(sys::kNumaBalancing) + ")"
                             : "NUMA balancing unknown: " +
                                   (ctx.host_evidence_complete ? value.status().message() : std::string(kOldCapture));
    if (absent && !want.value_or(false)) {
      out.Info("numa-balancing", msg);
    } else {
      out.Unknown("numa-balancing", msg);
    }
    return;
  }
  bool on = *value != 0;
  std::vector<std::string> ev = {Evidence(sys::kNumaBalancing, std::to_string(*value))};
  std::string facts = std::string("automatic NUMA balancing is ") + (on ? "on" : "off");
  if (!want) {
    out.Info("numa-balancing",
             facts + (on ? " (it migrates pages towards the CPUs touching them; registered RDMA buffers are pinned and "
                           "stay, but the scans cost page faults)"
                         : ""),
             ev);
  } else if (*want != on) {
    out.Add(model::Severity::kWarn, "numa-balancing",
            facts + ", " + ProfileLabel(ctx) + " expects it " + (*want ? "on" : "off"), ev,
            std::string("sysctl -w kernel.numa_balancing=") + (*want ? "1" : "0") +
                " (persistently in /etc/sysctl.d/)");
  } else {
    out.Pass("numa-balancing", facts + ", as the profile expects", ev);
  }
}

void Run(const Context& ctx, Reporter& out) {
  HugePages(ctx, out);
  Thp(ctx, out);
  NumaBalancing(ctx, out);
}

}  // namespace

extern const Check kMemHugepages = {
    "mem.hugepages", Rung::kHost,
    "HugePages, transparent hugepages or NUMA balancing differ from what the profile says the node must have",
    "Jobs and data-plane stacks that allocate their buffers from HugePages (DPDK, some inference engines, large "
    "registered pools) fail or fall back to small pages when the pool is short; small pages mean more registration "
    "entries and IOTLB misses. Transparent hugepages and NUMA balancing change latency behind the job's back. "
    "Without a profile these are reported as facts (info).",
    "State what the machine type needs in the profile's memory: section (hugepages: {2M: <pages>, 1G: <pages>}, thp: "
    "always|madvise|never, numa_balancing: true|false); read from /sys/kernel/mm/hugepages, "
    "/sys/devices/system/node/node<n>/hugepages, /sys/kernel/mm/transparent_hugepage/enabled and "
    "/proc/sys/kernel/numa_balancing.",
    &Run};

}  // namespace fabcheck::checks
