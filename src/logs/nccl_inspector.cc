#include "logs/nccl_inspector.h"

#include <nlohmann/json.hpp>

namespace fabcheck::logs {
namespace {

constexpr size_t kMaxRecords = 2000000;

// Splits concatenated JSON objects ("{...}\n{...}" or pretty-printed ones) at
// depth 0, respecting strings; calls `f` with each object's text.
template <typename F>
void ForEachObject(std::string_view text, F f) {
  int depth = 0;
  bool in_string = false, escape = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      if (depth++ == 0) start = i;
    } else if (c == '}' && depth > 0) {
      if (--depth == 0 && !f(text.substr(start, i + 1 - start))) return;
    }
  }
}

}  // namespace

bool LooksLikeInspectorJson(std::string_view head) {
  head = head.substr(0, 8192);
  return head.find("\"coll_perf\"") != std::string_view::npos ||
         head.find("\"inspector_output_format_version\"") != std::string_view::npos;
}

InspectorFile ParseInspectorJson(std::string_view text) {
  InspectorFile out;
  int n = 0;
  ForEachObject(text, [&](std::string_view object) {
    ++n;
    nlohmann::json j = nlohmann::json::parse(object, nullptr, false);
    if (!j.is_object() || !j.contains("coll_perf") || !j["coll_perf"].is_object()) {
      ++out.skipped;
      return true;
    }
    const auto& h = j.value("header", nlohmann::json::object());
    const auto& m = j.value("metadata", nlohmann::json::object());
    const auto& c = j["coll_perf"];
    InspectorRecord r;
    r.object = n;
    if (h.is_object()) {
      r.comm_id = h.value("id", "");
      r.rank = h.value("rank", -1);
      r.n_ranks = h.value("n_ranks", 0);
      r.nnodes = h.value("nnodes", 0);
    }
    if (m.is_object()) {
      r.hostname = m.value("hostname", "");
      r.pid = m.value("pid", 0);
      r.version = m.value("inspector_output_format_version", "");
    }
    r.coll = c.value("coll", "");
    r.seq = c.value("coll_sn", uint64_t{0});
    r.bytes = c.value("coll_msg_size_bytes", uint64_t{0});
    r.exec_us = c.value("coll_exec_time_us", 0.0);
    r.busbw_gbs = c.value("coll_busbw_gbs", 0.0);
    if (r.rank < 0 || r.coll.empty() || r.busbw_gbs <= 0) {
      ++out.skipped;
      return true;
    }
    out.records.push_back(std::move(r));
    return out.records.size() < kMaxRecords;
  });
  return out;
}

}  // namespace fabcheck::logs
