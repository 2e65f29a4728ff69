// 6. Confirmed that NCCL actually uses the expected HCA, interface, and
// GPUDirect path. Decided by what NCCL itself logged in the L4 run (nccl-log
// verdicts per member): a NET/Socket transport is the silent TCP fallback, an
// HCA outside the member's RDMA NICs or a bootstrap interface that carries no
// data-plane address is not the expected path, NET/IB without GDRDMA stages
// through host memory. The doctor's NCCL and GPUDirect prerequisites that fail
// (NCCL_IB_DISABLE, no peer memory, ...) fail the item even without an L4 run.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "report/checklist.h"

namespace fabcheck::report {
namespace {

std::set<std::string> RdmaDevices(const model::Inventory& inv) {
  std::set<std::string> out;
  for (const auto& d : inv.rdma_devices) out.insert(d.name);
  return out;
}

std::set<std::string> DataNetdevs(const model::Inventory& inv, const model::LadderMember& m) {
  std::set<std::string> out;
  for (const auto& n : inv.netdevs) {
    for (const auto& a : n.addresses) {
      if (std::find(m.data_addresses.begin(), m.data_addresses.end(), a.address) != m.data_addresses.end()) {
        out.insert(n.name);
      }
    }
  }
  return out;
}

}  // namespace

model::ChecklistItem CheckNcclPath(const BundleEvidence& e) {
  auto item = checklist::NewItem(6);
  item.rungs = {"L1L2.node", "L4"};
  for (const auto& f : checklist::DoctorFindings(e, {"nccl.", "gdr.", "pcie.acs", "iommu."})) {
    if (f.finding->severity != model::Severity::kFail) continue;
    checklist::Raise(item, model::ChecklistStatus::kFail);
    checklist::AddMember(item, f.member);
    item.evidence.push_back(checklist::Describe(f) + " (doctor)");
  }
  const model::RungResult* l4 = e.Rung("L4");
  size_t confirmed = 0;
  if (l4 && l4->verdict != model::RungVerdict::kNotRun) {
    for (const auto& n : l4->nccl) {
      std::vector<std::string> problems;
      if (std::any_of(n.transports.begin(), n.transports.end(),
                      [](const std::string& t) { return StartsWith(t, "NET/Socket"); })) {
        problems.push_back("NET/Socket: NCCL fell back to TCP" + (n.reason.empty() ? "" : " (" + n.reason + ")"));
      }
      const model::Inventory* inv = e.InventoryOf(n.member);
      const model::LadderMember* m = e.Member(n.member);
      if (inv) {
        auto devices = RdmaDevices(*inv);
        for (const auto& hca : n.hcas) {
          std::string dev = hca.substr(0, hca.find(':'));
          if (!devices.empty() && devices.count(dev) == 0) problems.push_back("HCA " + hca + " is not an RDMA NIC of the node");
        }
        if (m && !n.interface.empty()) {
          auto data = DataNetdevs(*inv, *m);
          std::string iface = n.interface.substr(0, n.interface.find(':'));
          if (!data.empty() && data.count(iface) == 0) {
            problems.push_back("bootstrap interface " + n.interface + " carries no data-plane address");
          }
        }
      }
      bool ib = std::any_of(n.transports.begin(), n.transports.end(),
                            [](const std::string& t) { return StartsWith(t, "NET/IB"); });
      if (ib && !n.gpudirect) problems.push_back("NET/IB without GDRDMA: data staged through host memory");
      if (n.verdict == model::RungVerdict::kFail && problems.empty()) {
        problems.push_back(n.reason.empty() ? "nccl-log verdict fail" : n.reason);
      }
      std::string used = fmt::format("{} via {} on {}{}", Join(n.transports, ","), n.hcas.empty() ? "-" : Join(n.hcas, ","),
                                     n.interface.empty() ? "?" : n.interface, n.gpudirect ? ", GPUDirect RDMA" : "");
      if (problems.empty()) {
        ++confirmed;
        if (confirmed <= 4) item.evidence.push_back(n.member + ": " + used);
        continue;
      }
      checklist::Raise(item, model::ChecklistStatus::kFail);
      checklist::AddMember(item, n.member);
      item.evidence.push_back(n.member + ": " + Join(problems, "; ") + " [" + used + "]");
    }
    if (confirmed > 4) item.evidence.push_back(fmt::format("... {} members in all on the expected path", confirmed));
  }
  if (item.status == model::ChecklistStatus::kFail) {
    item.summary = "NCCL did not use the expected RDMA path on " +
                   checklist::Count(item.members.size(), "member", "members");
    item.remedy = "set NCCL_IB_HCA to the node's rail NICs and NCCL_SOCKET_IFNAME to the data-plane interface, load "
                  "nvidia-peermem or use DMA-BUF, unset NCCL_IB_DISABLE; then rerun L4 and check NET/IB/GDRDMA";
  } else if (!l4 || l4->verdict == model::RungVerdict::kNotRun || l4->nccl.empty()) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "no NCCL run in this bundle" +
                   (l4 && !l4->reason.empty() ? ": L4 " + l4->reason : std::string(": rung L4 absent"));
    item.record = {"run the ladder with L4 on the GPU nodes (`fabcheck ladder --rungs L1-L4`), or `fabcheck coll` "
                   "there and `fabcheck nccl-log` on its logs"};
  } else {
    item.summary = fmt::format("NCCL used NET/IB with GPUDirect RDMA on the rail HCAs on all {} members", confirmed);
  }
  return item;
}

}  // namespace fabcheck::report
