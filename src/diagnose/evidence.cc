#include "diagnose/evidence.h"

#include "base/strings.h"

namespace fabcheck::diagnose {
namespace {

// "eth0:10.0.0.5<0>" or "OOB eth0:10.0.0.5<0>" -> "10.0.0.5"
std::string AddressOf(std::string v) {
  if (StartsWith(v, "OOB ")) v = v.substr(4);
  size_t colon = v.find(':');
  if (colon == std::string::npos) return "";
  v = v.substr(colon + 1);
  return v.substr(0, v.find('<'));
}

}  // namespace

std::string Evidence::MemberOf(const std::string& key) const {
  if (key.empty()) return "";
  for (const auto& m : members) {
    if (m.id == key) return m.id;
    for (const auto& a : m.addresses) {
      if (a == key) return m.id;
    }
  }
  if (nccl) {
    for (const auto& [host, boot] : nccl->bootstrap) {
      if (host == key || AddressOf(boot) == key) return host;
    }
    for (const auto& d : nccl->net_devices) {
      if (!d.host.empty() && (AddressOf(d.address) == key || (d.kind == "Socket" && AddressOf(d.name + ":" + d.address) == key))) {
        return d.host;
      }
    }
  }
  return "";
}

std::string Evidence::Name(const std::string& key) const {
  std::string m = MemberOf(key);
  if (m.empty() || m == key) return key;
  return m + " (" + key + ")";
}

}  // namespace fabcheck::diagnose
