#include "verdict/judged.h"

#include "report/checklist.h"
#include "report/findings.h"
#include "report/load.h"

namespace fabcheck::verdict {

std::vector<model::Diagnosis> JudgedInBundle(const std::string& bundle_path) {
  std::vector<model::Diagnosis> out;
  if (bundle_path.empty()) return out;
  auto bundle = report::LoadBundle(bundle_path);
  if (!bundle.ok()) return out;
  for (const auto& f : report::BundleFindings(*bundle, report::EvaluateChecklist(*bundle))) {
    out.push_back(model::FromFinding(f, f.member, "the go-live report of " + bundle_path));
  }
  return out;
}

}  // namespace fabcheck::verdict
