#include "net/json_call.h"

#include <fmt/format.h>

#include <new>

#include "base/units.h"
#include "net/http_client.h"

namespace fabcheck::net {

StatusCode StatusCodeForHttp(int http_status) {
  switch (http_status) {
    case 200: return StatusCode::kOk;
    case 400: return StatusCode::kInvalidArgument;
    case 401: return StatusCode::kUnauthenticated;
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kNotFound;
    case 409: return StatusCode::kFailedPrecondition;
    case 413:
    case 429: return StatusCode::kResourceExhausted;
    case 501: return StatusCode::kUnimplemented;
    case 503: return StatusCode::kUnavailable;
    case 504: return StatusCode::kDeadlineExceeded;
    default: return http_status >= 500 && http_status < 600 ? StatusCode::kInternal : StatusCode::kUnknown;
  }
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted:
    case StatusCode::kAlreadyExists: return 409;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kUnimplemented: return 501;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

namespace {

std::string Excerpt(const std::string& body) {
  constexpr size_t kMax = 200;
  std::string out;
  for (char c : body.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (body.size() > kMax) out += "...";
  return out;
}

}  // namespace

Result<nlohmann::json> CallJson(httplib::Client& http, const JsonCall& call, httplib::Error* no_answer) {
  if (no_answer) *no_answer = httplib::Error::Success;
  BoundedRequest request;
  request.method = call.method;
  request.path = call.path;
  request.body = call.body;
  request.max_body = call.max_body;
  request.deadline = call.deadline == std::chrono::steady_clock::time_point{}
                         ? std::chrono::steady_clock::now() + kDefaultJsonCallTime
                         : call.deadline;
  request.where = call.where;
  httplib::Error err = httplib::Error::Success;
  auto res = SendBounded(http, request, &err);
  if (!res.ok()) {
    if (err == httplib::Error::Success) return res.status();  // a limit: too large, too late, out of memory
    if (err == httplib::Error::SSLServerVerification || err == httplib::Error::SSLConnection) {
      // A server answered and TLS failed: the next try fails the same way.
      return UnavailableError(HttpErrorText(err, call.where, call.tls, call.tls_name, http.get_openssl_verify_result()));
    }
    if (no_answer) *no_answer = err;
    if (err == httplib::Error::Read || err == httplib::Error::ConnectionTimeout) {
      return DeadlineExceededError(fmt::format("{}: no answer ({}) within the timeout", call.where,
                                               httplib::to_string(err)));
    }
    return UnavailableError(fmt::format("{}: {}{}{}", call.where, httplib::to_string(err),
                                        call.unreachable_hint.empty() ? "" : " ", call.unreachable_hint));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(res->body, nullptr, false);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(fmt::format("{}: out of memory parsing a {} answer", call.where,
                                              FormatSize(res->body.size())));
  }
  if (res->status != 200) {
    // Whatever answers on the port may send anything: only a string "error"
    // is taken as the message.
    std::string message = j.is_object() && j.contains("error") && j["error"].is_string()
                              ? j["error"].get<std::string>()
                              : Excerpt(res->body);
    return Status(StatusCodeForHttp(res->status), fmt::format("{}: HTTP {}: {}", call.where, res->status, message));
  }
  if (j.is_discarded()) return DataLossError(fmt::format("{}: the answer is not JSON", call.where));
  return j;
}

}  // namespace fabcheck::net
