// ibnetdiscover's default output, one block per node:
//   switchguid=0x248a0703005abb1e(248a0703005abb1e)
//   Switch  36 "S-248a0703005abb1e"   # "MF0;leaf01:MQM8700/U1" enhanced port 0 lid 1 lmc 0
//   [1]     "H-0002c9030045f120"[1](2c9030045f121)   # "node01 mlx5_0" lid 3 4xHDR
//   [37]    "S-248a0703005abc00"[5]  # "spine01" lid 9 4xHDR
//   caguid=0x0002c9030045f120
//   Ca      1 "H-0002c9030045f120"   # "node01 mlx5_0"
//   [1](2c9030045f121)  "S-248a0703005abb1e"[1]   # lid 3 lmc 0 "leaf01" lid 1 4xHDR
// Links are listed from both ends; either end is enough.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"
#include "fabric/importers.h"

namespace fabcheck::fabric {
namespace {

struct Node {
  char type = 0;      // 'S' switch, 'H' channel adapter, 'R' router
  std::string desc;   // node description
};

// The first double-quoted string at or after `from`; npos when none.
std::string_view Quoted(std::string_view line, size_t from, size_t* end) {
  size_t a = line.find('"', from);
  if (a == std::string_view::npos) return {};
  size_t b = line.find('"', a + 1);
  if (b == std::string_view::npos) return {};
  *end = b + 1;
  return line.substr(a + 1, b - a - 1);
}

int PortOf(std::string_view s) {  // "[12]..." -> 12
  if (s.empty() || s[0] != '[') return -1;
  size_t close = s.find(']');
  if (close == std::string_view::npos) return -1;
  auto v = ParseInt(s.substr(1, close - 1));
  return v ? static_cast<int>(*v) : -1;
}

}  // namespace

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string_view x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

Result<Imported> ImportIbnetdiscover(std::string_view text, const IbnetOptions& o) {
  std::map<std::string, Node> nodes;  // "S-guid" / "H-guid"
  // CA port -> switch it is cabled to, and switch-to-switch links.
  std::map<std::pair<std::string, int>, std::string> ca_port_switch;
  std::set<std::pair<std::string, std::string>> switch_links;
  std::string current;
  size_t line_no = 0, headers = 0;
  for (std::string_view raw : Split(text, '\n')) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (StartsWith(line, "Switch") || StartsWith(line, "Ca") || StartsWith(line, "Rt")) {
      size_t end = 0;
      std::string_view id = Quoted(line, 0, &end);
      if (id.size() < 3 || id[1] != '-') {
        return InvalidArgumentError(fmt::format("ibnetdiscover line {}: a node header without its \"S-guid\" or "
                                                "\"H-guid\" id: '{}'", line_no, line));
      }
      current = std::string(id);
      Node& n = nodes[current];
      n.type = id[0];
      size_t hash = line.find('#', end);
      if (hash != std::string_view::npos) n.desc = std::string(Quoted(line, hash, &end));
      ++headers;
      continue;
    }
    if (line[0] != '[') continue;  // vendid=, devid=, sysimgguid=, "Non-Chassis Nodes"...
    if (current.empty()) {
      return InvalidArgumentError(fmt::format("ibnetdiscover line {}: a port line before any Switch or Ca header", line_no));
    }
    const int local_port = PortOf(line);
    size_t end = 0;
    std::string_view remote = Quoted(line, 0, &end);
    if (local_port < 0 || remote.size() < 3 || remote[1] != '-') continue;  // an unconnected port
    const int remote_port = PortOf(line.substr(end));
    std::string remote_id(remote);
    Node& r = nodes[remote_id];
    r.type = remote[0];
    size_t hash = line.find('#', end);
    if (hash != std::string_view::npos && r.type == 'S' && r.desc.empty()) {
      // For a CA's port line the comment starts with its own lid; the peer's description is the quoted part.
      r.desc = std::string(Quoted(line, hash, &end));
    } else if (hash != std::string_view::npos && r.type != 'S' && r.desc.empty()) {
      r.desc = std::string(Quoted(line, hash, &end));
    }
    const char here = nodes[current].type;
    if (here == 'S' && r.type == 'S') {
      switch_links.insert(std::minmax(current, remote_id));
    } else if (here == 'S' && r.type == 'H') {
      ca_port_switch[{remote_id, remote_port}] = current;
    } else if (here == 'H' && r.type == 'S') {
      ca_port_switch[{current, local_port}] = remote_id;
    }
  }
  if (headers == 0) {
    return InvalidArgumentError("ibnetdiscover: no Switch or Ca block found; give the output of `ibnetdiscover` "
                                "(default format, not -p or -l)");
  }
  // Switch names: the description when it is unique, else the id ibnetdiscover prints.
  std::map<std::string, int> desc_count;
  for (const auto& [id, n] : nodes) {
    if (n.type == 'S' && !n.desc.empty()) ++desc_count[n.desc];
  }
  auto switch_name = [&](const std::string& id) {
    const Node& n = nodes[id];
    return !n.desc.empty() && desc_count[n.desc] == 1 ? n.desc : id;
  };
  // Hosts: CA ports grouped by the first word of the node description.
  struct Port {
    std::string hca;
    int port;
    std::string leaf_id;
  };
  std::map<std::string, std::vector<Port>> hosts;
  Imported out;
  for (const auto& [key, leaf] : ca_port_switch) {
    const auto& [ca, port] = key;
    std::string desc = nodes[ca].desc;
    auto words = Split(desc, ' ', true);
    std::string host = words.size() >= 2 ? words[0] : ca;
    std::string hca = words.size() >= 2 ? words[1] : ca;
    hosts[host].push_back({hca, port, leaf});
  }
  if (hosts.empty()) return NotFoundError("ibnetdiscover: no channel adapter is cabled to a switch");
  std::map<size_t, int> count_hist;
  for (auto& [host, ports] : hosts) {
    std::sort(ports.begin(), ports.end(), [](const Port& a, const Port& b) {
      return a.hca != b.hca ? NaturalLess(a.hca, b.hca) : a.port < b.port;
    });
    ++count_hist[ports.size()];
  }
  int rails = o.rails;
  if (rails <= 0) {
    rails = static_cast<int>(std::max_element(count_hist.begin(), count_hist.end(), [](auto& a, auto& b) {
                               return a.second != b.second ? a.second < b.second : a.first < b.first;
                             })->first);
  }
  std::set<std::string> leaf_ids;
  std::vector<std::set<std::string>> rail_leaves(rails);
  std::vector<std::string> names;
  for (const auto& [host, ports] : hosts) names.push_back(host);
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  for (const std::string& host : names) {
    const auto& ports = hosts[host];
    if (static_cast<int>(ports.size()) < rails) {
      out.notes.push_back(fmt::format("{}: {} connected CA port(s), fewer than the {} rails; left out", host,
                                      ports.size(), rails));
      continue;
    }
    Member m;
    m.name = host;
    for (int r = 0; r < rails; ++r) {
      m.leaves.push_back(switch_name(ports[r].leaf_id));
      leaf_ids.insert(ports[r].leaf_id);
      rail_leaves[r].insert(ports[r].leaf_id);
    }
    if (static_cast<int>(ports.size()) > rails) {
      out.notes.push_back(fmt::format("{}: {} connected CA ports, only the first {} are rails", host, ports.size(), rails));
    }
    out.fabric.members.push_back(std::move(m));
  }
  out.fabric.rails = rails;
  out.fabric.source = "ibnetdiscover";
  // Spines of a rail: switches linked to that rail's leaves that serve no CA.
  bool any_spine = false;
  out.fabric.spines.resize(rails);
  for (int r = 0; r < rails; ++r) {
    std::set<std::string> spines;
    for (const auto& [a, b] : switch_links) {
      if (rail_leaves[r].count(a) && !leaf_ids.count(b)) spines.insert(switch_name(b));
      if (rail_leaves[r].count(b) && !leaf_ids.count(a)) spines.insert(switch_name(a));
    }
    out.fabric.spines[r].assign(spines.begin(), spines.end());
    any_spine = any_spine || !spines.empty();
  }
  if (!any_spine) out.fabric.spines.clear();
  RETURN_IF_ERROR(ValidateFabric(out.fabric));
  return out;
}

}  // namespace fabcheck::fabric
