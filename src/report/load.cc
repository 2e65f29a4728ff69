#include "report/load.h"

#include <algorithm>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/input.h"
#include "base/json_budget.h"
#include "base/parallel.h"
#include "bundle/bundle.h"
#include "bundle/correlate.h"

namespace fabcheck::report {

Result<BundleEvidence> LoadBundle(const std::string& path) {
  auto bundle = bundle::Bundle::Open(path);
  if (!bundle.ok()) return bundle.status();
  BundleEvidence e;
  e.source = bundle->Describe();
  e.manifest = bundle->manifest();
  // A bundle from a ladder before pairs carried their counters: connect them
  // here, as the ladder does now, so every output names the same suspect.
  for (auto& rung : e.manifest.rungs) {
    if (rung.id == "L3") bundle::CorrelatePairCounters(rung);
  }
  // Parsing each member's inventory and doctor JSON is most of a large
  // bundle's load time: one member per task, on every core (the reads are
  // independent; results are merged in member order, so the output does not
  // depend on the threads).
  const auto& members = e.manifest.members;
  std::vector<std::optional<Result<model::Inventory>>> inventories(members.size());
  std::vector<std::optional<Result<model::DoctorReport>>> doctors(members.size());
  const size_t width = std::max(1u, std::thread::hardware_concurrency());
  base::ParallelFor(members.size(), width, [&](size_t i) {
    if (!members[i].inventory_file.empty()) inventories[i] = bundle->ReadInventory(members[i]);
    if (!members[i].doctor_file.empty()) doctors[i] = bundle->ReadDoctor(members[i]);
  });
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    if (inventories[i]) {
      if (inventories[i]->ok()) {
        e.inventories.emplace(m.id, std::move(**inventories[i]));
      } else {
        e.notes.push_back(m.id + ": inventory unreadable: " + inventories[i]->status().message());
      }
    }
    if (doctors[i]) {
      if (doctors[i]->ok()) {
        e.doctors.emplace(m.id, std::move(**doctors[i]));
      } else {
        e.notes.push_back(m.id + ": doctor report unreadable: " + doctors[i]->status().message());
      }
    }
  }
  return e;
}

Status LoadKvResults(const std::string& path, BundleEvidence& e) {
  ASSIGN_OR_RETURN(std::string text, ReadFileBounded(path));
  auto parsed = ParseJsonWithin(text, path, kClusterDocumentBudget);
  if (!parsed.ok() && parsed.status().code() != StatusCode::kInvalidArgument) return parsed.status();
  const nlohmann::json j = parsed.ok() ? std::move(*parsed) : nlohmann::json();
  if (!j.is_object()) return InvalidArgumentError(path + ": not JSON (write it with fabcheck kv run --json)");
  const std::string schema = j.value("schema", "");
  try {
    if (schema == model::kKvSchema) {
      e.kv.push_back({path, j.get<model::KvResult>()});
    } else if (schema == model::kKvFanSchema) {
      auto fan = j.get<model::KvFanResult>();
      for (auto& m : fan.members) {
        if (m.result) {
          e.kv.push_back({path, std::move(*m.result)});
        } else {
          model::KvResult failed;
          failed.server = m.decode;
          failed.client.host = m.prefill;
          failed.error = m.error.empty() ? "no result" : m.error;
          e.kv.push_back({path, std::move(failed)});
        }
      }
    } else {
      return InvalidArgumentError(fmt::format("{}: schema '{}' is not a kv result ({} or {})", path, schema,
                                              model::kKvSchema, model::kKvFanSchema));
    }
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgumentError(fmt::format("{}: malformed kv result: {}", path, ex.what()));
  }
  return Status::Ok();
}

}  // namespace fabcheck::report
