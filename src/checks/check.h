// The doctor's check framework.
//
// A check is one rule with a stable ID (documentation and automation rely
// on it), a rung of the test ladder, catalog text (what / why / how to fix)
// and a function that looks at the node and emits findings. One check per
// source file under checks/<rung>/; registry.cc lists them in ladder order.
//
// Rules every check follows:
//  - It always says something: a pass (with what it looked at), or findings.
//  - It never fails for lack of data: what it cannot read is "unknown" with
//    the reason. Absence of RDMA hardware is "info", never "fail".
//  - Evidence names the file and the value read, or the call and its result.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "checks/env.h"
#include "checks/profile.h"
#include "fabcheck/model/finding.h"
#include "fabcheck/model/inventory.h"
#include "sys/infiniband.h"
#include "sys/sysroot.h"

namespace fabcheck::checks {

// Groups in ladder order; the name is the Finding::group.
enum class Rung { kL1, kL2, kRoce, kGdr, kHost, kContainer, kNccl };
std::string_view RungName(Rung rung);  // "L1", "L2", "RoCE", "GDR", "host", "container", "NCCL"
std::string_view RungTitle(Rung rung);  // "physical and driver", ...
std::optional<Rung> ParseRung(std::string_view name);  // case-insensitive
inline constexpr Rung kAllRungs[] = {Rung::kL1,   Rung::kL2,        Rung::kRoce, Rung::kGdr,
                                     Rung::kHost, Rung::kContainer, Rung::kNccl};

struct Context;
class Reporter;

struct Check {
  const char* id;     // "port.down"
  Rung rung;
  const char* title;  // one line: what is wrong when it fires
  const char* why;    // why it matters (catalog)
  const char* fix;    // how to fix it (catalog; findings carry specific remedies)
  void (*run)(const Context& ctx, Reporter& out);
};

// Everything a check may look at. Inventory is read once for all checks.
struct Context {
  const sys::SysRoot* root = nullptr;
  const model::Inventory* inventory = nullptr;  // nullptr when it could not be read
  std::string inventory_error;                   // why (when inventory == nullptr)
  const Profile* profile = nullptr;              // nullptr: expectations come from the node
  const NcclEnv* env = nullptr;
  // Whether the sysroot holds what the checks read beyond the inventory
  // (the live node, or a capture/fixture marked by ReadEvidence). Where it
  // does not, a missing file proves nothing: "unknown", not pass or fail.
  bool evidence_complete = true;
  // The same for the host tuning files (/proc/interrupts, cpufreq, cpuidle,
  // hugepages...), which captures hold only since the host checks exist: in
  // an older capture their absence says nothing about the node.
  bool host_evidence_complete = true;
  // An explicit TCP intent (doctor --expect-transport tcp, or the profile's
  // `transport: tcp`): a node without usable RDMA is then as meant (info).
  bool tcp_intended = false;

  // Whether RDMA is expected here: no TCP intent, and the node has GPUs or
  // the profile describes compute NICs (a multi-node GPU job needs RDMA).
  bool RdmaExpected() const;

  // Whether the node has any RDMA device (false also when unknown).
  bool HasRdma() const;
  bool HasGpus() const;
  // Ports the checks look at: every port of every RDMA device (the profile's
  // compute NICs only, when it names them).
  struct PortRef {
    const model::RdmaDevice* device;
    const model::RdmaPort* port;
    std::string Label() const;  // "mlx5_0 port 1"
    sys::infiniband::PortFiles Files() const;  // the port's sysfs files (sys/infiniband.h)
  };
  std::vector<PortRef> Ports() const;
  std::vector<PortRef> RocePorts() const;  // link layer Ethernet
  // Ports whose state is ACTIVE (what NCCL and perftest can use).
  std::vector<PortRef> ActivePorts() const;
};

// Capture metadata that marks a sysroot as holding the doctor's evidence.
inline constexpr std::string_view kEvidenceMeta = "doctor/evidence.json";
bool EvidenceComplete(const sys::SysRoot& root);
inline constexpr std::string_view kHostEvidenceMeta = "doctor/host-evidence.json";
bool HostEvidenceComplete(const sys::SysRoot& root);

// Collects one check's findings with its ID and rung filled in.
class Reporter {
 public:
  Reporter(const Check& check, std::vector<model::Finding>* out) : check_(check), out_(out) {}

  model::Finding& Add(model::Severity severity, std::string object, std::string message,
                      std::vector<std::string> evidence = {}, std::string remedy = {});
  model::Finding& Pass(std::string object, std::string message, std::vector<std::string> evidence = {}) {
    return Add(model::Severity::kPass, std::move(object), std::move(message), std::move(evidence));
  }
  model::Finding& Info(std::string object, std::string message, std::vector<std::string> evidence = {}) {
    return Add(model::Severity::kInfo, std::move(object), std::move(message), std::move(evidence));
  }
  model::Finding& Unknown(std::string object, std::string reason, std::vector<std::string> evidence = {},
                          std::string remedy = {}) {
    return Add(model::Severity::kUnknown, std::move(object), std::move(reason), std::move(evidence),
               std::move(remedy));
  }
  // Common preambles. Each returns false (after reporting) when the check
  // cannot go on: no inventory, or no RDMA device (info: nothing to check).
  bool NeedInventory(const Context& ctx);
  bool NeedRdma(const Context& ctx);

  size_t count() const { return count_; }

 private:
  const Check& check_;
  std::vector<model::Finding>* out_;
  size_t count_ = 0;
};

// "path = value" evidence. Paths are written as on the node (the report
// header names the sysroot they were read from).
std::string Evidence(std::string_view path, std::string_view value);

}  // namespace fabcheck::checks
