// The model's one convention for JSON fields that may be missing, used by
// every to_json/from_json in src/model/ and by the control API:
//  * A fact that could not be read or measured is written as null: unknown,
//    never a made-up zero (PutNullable, Nullable).
//  * A section that does not apply to a document is left out, e.g. the
//    latency figures of a bandwidth test (PutIfSet).
//  * Readers treat an absent key and null alike, so a document from an older
//    fabcheck (fewer keys) still loads: Read leaves the default in place,
//    ReadOptional and Optional give nullopt. A value of the wrong type throws
//    a json exception naming the key (from_json reports it; nothing crosses a
//    module boundary: the Parse* functions catch it), Require also a missing key.
// Plain structs whose every field is always present use nlohmann's
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT instead.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace fabcheck::model::json_fields {

template <typename T>
nlohmann::json Nullable(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <typename T>
void PutNullable(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  j[key] = Nullable(v);
}

template <typename T>
void PutIfSet(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

// nlohmann's what() without its "[json.exception.type_error.302] " prefix.
inline std::string ExceptionMessage(const nlohmann::json::exception& e) {
  std::string what = e.what();
  auto close = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos) what.erase(0, close + 2);
  return what;
}

template <typename T>
void Read(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->template get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw nlohmann::json::other_error::create(501, std::string(key) + ": " + ExceptionMessage(e), &j);
  }
}

template <typename T>
void ReadOptional(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out.reset();
    return;
  }
  T value{};
  Read(j, key, value);
  out = std::move(value);
}

// A key a document of this type cannot do without.
template <typename T>
void Require(const nlohmann::json& j, const char* key, T& out) {
  if (!j.is_object() || !j.contains(key)) {
    throw nlohmann::json::other_error::create(501, std::string("missing '") + key + "'", &j);
  }
  Read(j, key, out);
}

inline void RequireObject(const nlohmann::json& j, const char* what) {
  if (!j.is_object()) {
    throw nlohmann::json::type_error::create(302, std::string(what) + " must be an object, not " + j.type_name(), &j);
  }
}

template <typename T>
std::optional<T> Optional(const nlohmann::json& j, const char* key) {
  std::optional<T> out;
  ReadOptional(j, key, out);
  return out;
}

}  // namespace fabcheck::model::json_fields
