#include "perf/verbs/device.h"

#include <fmt/format.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "base/strings.h"
#include "perf/verbs/plan.h"
#include "sys/net_class.h"

namespace fabcheck::perf::verbs {

std::string_view PortStateName(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP: return "NOP";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
  }
  return "UNKNOWN";
}

namespace {

struct List {
  DeviceListPtr list;
  int count = 0;
};

Result<List> GetList() {
  List l;
  errno = 0;
  l.list.reset(ibv_get_device_list(&l.count));
  if (!l.list) {
    int err = errno;
    if (err == ENOSYS) {
      return UnavailableError(
          "no RDMA support in this kernel (ibv_get_device_list: ENOSYS); the verbs transport needs an RDMA NIC "
          "or soft-RoCE (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0); use --transport tcp here");
    }
    return ErrnoError(err, "ibv_get_device_list", " (is rdma-core installed and ib_uverbs loaded?)");
  }
  if (l.count == 0) {
    return UnavailableError(
        "no RDMA device found (ibv_get_device_list returned none): load the NIC driver (mlx5_ib) or create a "
        "soft-RoCE device (rdma link add rxe0 type rxe netdev eth0); use --transport tcp meanwhile");
  }
  return l;
}

}  // namespace

Result<std::vector<std::string>> ListDevices() {
  ASSIGN_OR_RETURN(List l, GetList());
  std::vector<std::string> names;
  for (int i = 0; i < l.count; ++i) names.push_back(ibv_get_device_name(l.list.get()[i]));
  return names;
}

Result<PortState> QueryPort(ibv_context* ctx, const std::string& device, int port) {
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(ctx, static_cast<uint8_t>(port), &pa); rc != 0) {
    return ErrnoError(rc, fmt::format("ibv_query_port {} port {}", device, port));
  }
  PortState p;
  p.port = port;
  p.active = pa.state == IBV_PORT_ACTIVE;
  p.state = std::string(PortStateName(pa.state));
  p.infiniband = pa.link_layer == IBV_LINK_LAYER_INFINIBAND;
  p.active_mtu = MtuBytesFromEnum(pa.active_mtu);
  p.lid = pa.lid;
  // ibv_query_gid_table gives type and netdev per slot in one call (rdma-core 32+).
  std::vector<ibv_gid_entry> entries(pa.gid_tbl_len > 0 ? pa.gid_tbl_len : 1);
  ssize_t n = ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
  if (n < 0) {
    return ErrnoError(static_cast<int>(-n), fmt::format("ibv_query_gid_table {}", device));
  }
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& e = entries[i];
    if (e.port_num != static_cast<uint32_t>(port)) continue;
    GidEntry g;
    g.index = static_cast<int>(e.gid_index);
    std::copy(std::begin(e.gid.raw), std::end(e.gid.raw), g.gid.begin());
    switch (e.gid_type) {
      case IBV_GID_TYPE_IB: g.type = GidType::kIb; break;
      case IBV_GID_TYPE_ROCE_V1: g.type = GidType::kRoceV1; break;
      case IBV_GID_TYPE_ROCE_V2: g.type = GidType::kRoceV2; break;
      default: g.type = GidType::kUnknown; break;
    }
    if (e.ndev_ifindex != 0) {
      char name[IF_NAMESIZE] = {};
      if (if_indextoname(e.ndev_ifindex, name) != nullptr) g.netdev = name;
    }
    if (!GidIsZero(g.gid)) p.gids.push_back(std::move(g));
  }
  std::sort(p.gids.begin(), p.gids.end(), [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return p;
}

Result<Device> OpenDevice(const std::string& name, int port, const std::string& prefer_ipv4) {
  ASSIGN_OR_RETURN(List l, GetList());
  std::vector<std::string> seen;
  struct Candidate {
    int index;
    int port;
    bool has_addr;
  };
  std::optional<Candidate> best;
  for (int i = 0; i < l.count; ++i) {
    std::string dev_name = ibv_get_device_name(l.list.get()[i]);
    seen.push_back(dev_name);
    if (!name.empty() && dev_name != name) continue;
    ContextPtr ctx(ibv_open_device(l.list.get()[i]));
    if (!ctx) {
      if (!name.empty()) return ErrnoError(errno, "ibv_open_device " + dev_name, " (permissions on /dev/infiniband?)");
      continue;
    }
    ibv_device_attr attr{};
    if (ibv_query_device(ctx.get(), &attr) != 0) continue;
    for (int p = 1; p <= attr.phys_port_cnt; ++p) {
      if (port != 0 && p != port) continue;
      auto ps = QueryPort(ctx.get(), dev_name, p);
      if (!ps.ok() || !ps->active) continue;
      bool has_addr = false;
      for (const GidEntry& g : ps->gids) has_addr |= GidIpv4(g.gid) == prefer_ipv4;
      if (!best || (has_addr && !best->has_addr)) best = Candidate{i, p, has_addr};
    }
    if (!name.empty()) break;
  }
  if (!name.empty() && std::find(seen.begin(), seen.end(), name) == seen.end()) {
    return NotFoundError(fmt::format("RDMA device {} not found (devices here: {}); check --device", name, Join(seen, ", ")));
  }
  if (!best) {
    std::string what = name.empty() ? "no RDMA device" : "device " + name;
    std::string which = port == 0 ? "an ACTIVE port" : fmt::format("port {} ACTIVE", port);
    return FailedPreconditionError(fmt::format(
        "{} has {} (devices here: {}); check the cable/link (ibstat, rdma link show) or pick another with --device/--port",
        what, which, Join(seen, ", ")));
  }
  Device d;
  d.name = ibv_get_device_name(l.list.get()[best->index]);
  d.context.reset(ibv_open_device(l.list.get()[best->index]));
  if (!d.context) return ErrnoError(errno, "ibv_open_device " + d.name);
  if (int rc = ibv_query_device(d.context.get(), &d.attr); rc != 0) return ErrnoError(rc, "ibv_query_device " + d.name);
  ASSIGN_OR_RETURN(d.port, QueryPort(d.context.get(), d.name, best->port));
  return d;
}

std::vector<std::string> PortNetdevs(const sys::SysRoot& root, const std::vector<GidEntry>& gids) {
  std::string own;
  for (const GidEntry& e : gids) {
    if (!e.netdev.empty() && GidIsLinkLocal(e.gid)) {
      own = e.netdev;
      break;
    }
  }
  if (own.empty()) {
    for (const GidEntry& e : gids) {
      if (!e.netdev.empty()) {
        own = e.netdev;
        break;
      }
    }
  }
  if (own.empty()) return {};
  std::vector<std::string> out{own};
  for (std::string& upper : sys::net_class::UpperDevices(root, own)) out.push_back(std::move(upper));
  return out;
}

}  // namespace fabcheck::perf::verbs
