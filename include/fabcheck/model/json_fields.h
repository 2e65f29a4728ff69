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

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

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

// A JSON value as the number type T, refusing what T cannot hold. nlohmann
// converts a float to an integer with a plain cast: undefined behaviour out of
// range (2.1e12 as an int, a port or a timeout from a hostile client) and a
// fraction silently dropped. Throws a type_error naming `key`.
template <typename T>
T Number(const nlohmann::json& v, const char* key) {
  auto refuse = [&](const std::string& why) {
    return nlohmann::json::type_error::create(302, std::string(key) + ": " + why, &v);
  };
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using Limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const uint64_t u = v.template get<uint64_t>();
      if (u > static_cast<uint64_t>(Limits::max())) throw refuse(std::to_string(u) + " is out of range");
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const int64_t i = v.template get<int64_t>();
      if (i < static_cast<int64_t>(Limits::min()) || (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(Limits::max()))) {
        throw refuse(std::to_string(i) + " is out of range");
      }
      return static_cast<T>(i);
    }
    if (v.is_number_float()) {
      // Whole numbers written as floats (1e3) are accepted while exact.
      const double d = v.template get<double>();
      constexpr double kExact = 9007199254740992.0;  // 2^53
      if (!std::isfinite(d) || d != std::floor(d) || d < -kExact || d > kExact ||
          d < static_cast<double>(Limits::min()) || d > static_cast<double>(Limits::max())) {
        throw refuse(nlohmann::json(d).dump() + " is not a whole number in range");
      }
      return static_cast<T>(static_cast<int64_t>(d));
    }
    throw refuse(std::string("must be a number, not ") + v.type_name());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw refuse(std::string("must be a number, not ") + v.type_name());
    return v.template get<T>();
  } else {
    return v.template get<T>();
  }
}

// j.value(key, fallback) with Number's checks: absent or null gives fallback.
template <typename T>
T NumberOr(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return Number<T>(*it, key);
}

// An array of numbers with Number's checks on each; absent or null gives {}.
template <typename T>
std::vector<T> NumbersOr(const nlohmann::json& j, const char* key) {
  std::vector<T> out;
  if (!j.is_object()) return out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) {
    throw nlohmann::json::type_error::create(302, std::string(key) + ": must be an array, not " + it->type_name(),
                                             &*it);
  }
  out.reserve(it->size());
  for (const auto& v : *it) out.push_back(Number<T>(v, key));
  return out;
}

template <typename T>
void Read(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      out = Number<T>(*it, key);
    } else {
      out = it->template get<T>();
    }
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
