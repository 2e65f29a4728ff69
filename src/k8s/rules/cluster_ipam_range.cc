// cluster.ipam.range: gateway or excludes outside the range, overlapping ranges.
#include "base/json_text.h"
#include "base/strings.h"
#include "k8s/ip.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

using nlohmann::json;

struct Pool {
  const Nad* nad;
  IpRange range;
};

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

void CheckPool(const Nad& nad, const json& spec, const char* range_key, const char* start_key, const char* end_key,
               Reporter& out, std::vector<Pool>& pools) {
  auto report = [&](const std::string& message) {
    out.Add(ObjectReport(*nad.source, nad.ipam_line, "network " + nad.ns + "/" + nad.name + ": " + message,
                         {"ipam: " + ToJsonText(spec)}));
  };
  std::string range_text = Str(spec, range_key);
  if (range_text.empty()) return;
  auto range = ParseCidr(range_text);
  if (!range) {
    report(std::string(range_key) + " '" + range_text + "' is not a CIDR (a.b.c.d/n)");
    return;
  }
  pools.push_back({&nad, *range});
  for (const char* key : {start_key, end_key, "gateway"}) {
    std::string text = Str(spec, key);
    if (text.empty()) continue;
    auto ip = ParseIp(text);
    if (!ip) {
      report(std::string(key) + " '" + text + "' is not an IP address");
    } else if (!Contains(*range, *ip)) {
      report(std::string(key) + " " + text + " is outside " + range_key + " " + range_text);
    }
  }
  if (spec.contains("exclude") && spec["exclude"].is_array()) {
    for (const auto& e : spec["exclude"]) {
      std::string text = e.is_string() ? e.get<std::string>() : ToJsonText(e);
      auto ex = ParseCidr(text);
      if (!ex) {
        report("exclude entry '" + text + "' is not a CIDR");
      } else if (!Contains(*range, *ex)) {
        report("exclude " + text + " is outside range " + range_text + (Overlaps(*range, *ex) ? " (partly)" : "") +
               ": it excludes nothing there, so the addresses it was meant to protect are handed out");
      }
    }
  }
}

void Check(const Context& ctx, Reporter& out) {
  std::vector<Pool> pools;
  for (const auto& nad : ctx.index.nads()) {
    const json& ipam = nad.ipam;
    if (!ipam.is_object()) continue;
    std::string type = Str(ipam, "type");
    if (type == "whereabouts") {
      CheckPool(nad, ipam, "range", "range_start", "range_end", out, pools);
      if (ipam.contains("ipRanges") && ipam["ipRanges"].is_array()) {
        for (const auto& r : ipam["ipRanges"]) CheckPool(nad, r, "range", "range_start", "range_end", out, pools);
      }
    } else if (type == "host-local") {
      CheckPool(nad, ipam, "subnet", "rangeStart", "rangeEnd", out, pools);
      if (ipam.contains("ranges") && ipam["ranges"].is_array()) {
        for (const auto& set : ipam["ranges"]) {
          if (!set.is_array()) continue;
          for (const auto& r : set) CheckPool(nad, r, "subnet", "rangeStart", "rangeEnd", out, pools);
        }
      }
    }
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    for (size_t j = i + 1; j < pools.size(); ++j) {
      const Pool& a = pools[i];
      const Pool& b = pools[j];
      if (a.nad == b.nad || !Overlaps(a.range, b.range)) continue;
      if (Superseded(ctx, *a.nad->source) || Superseded(ctx, *b.nad->source)) continue;
      // Identical ranges share one whereabouts pool; only a partial overlap hands out one address twice.
      if (a.range.first == b.range.first && a.range.last == b.range.last) continue;
      Report r = ObjectReport(*b.nad->source, b.nad->ipam_line,
                              "network " + b.nad->ns + "/" + b.nad->name + " range " + b.range.text +
                                  " overlaps " + a.nad->ns + "/" + a.nad->name + " range " + a.range.text +
                                  ": the two pools can hand out the same address",
                              {a.nad->source->file + ": " + a.range.text, b.nad->source->file + ": " + b.range.text});
      r.level = Level::kWarning;
      out.Add(std::move(r));
    }
  }
}

}  // namespace

const Rule& RuleIpamRange() {
  static const Rule kRule{
      {"cluster.ipam.range", Level::kError, "cluster", "IPAM gateway or excludes outside the range, overlapping ranges",
       "whereabouts and host-local hand out addresses from the range minus the excludes. An exclude or gateway "
       "outside the range protects nothing (the address it should keep free is handed to a pod), a rangeStart "
       "outside the subnet fails every allocation, and two partly overlapping pools give two pods one address: "
       "RDMA connections then reach the wrong pod or none.",
       "Keep gateway, rangeStart/rangeEnd and every exclude inside the range; give each network a disjoint range "
       "(or exactly the same range, which whereabouts treats as one pool).",
       "k8snetworkplumbingwg/whereabouts README; containernetworking/plugins host-local", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
