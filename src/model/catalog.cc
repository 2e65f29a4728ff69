#include "fabcheck/model/catalog.h"

namespace fabcheck::model {

void to_json(nlohmann::json& j, const CatalogEntry& e) {
  j = {{"id", e.id}, {"source", e.source}, {"group", e.group}, {"title", e.title}, {"why", e.why}, {"fix", e.fix}};
  if (e.severity) j["severity"] = *e.severity;
}

}  // namespace fabcheck::model
