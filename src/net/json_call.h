// One JSON call over HTTP(S), the way every fabcheck client asks a fabcheck
// server (the agent API, the sweep/ladder rendezvous, the coll rendezvous),
// and one table between HTTP statuses and canonical codes, used by both the
// servers (code -> status) and the clients (status -> code):
//
//   400 InvalidArgument      the request is malformed; fix it
//   401 Unauthenticated      no or a wrong token
//   403 PermissionDenied     authenticated, not allowed
//   404 NotFound             no such route (an older fabcheck) or object
//   409 FailedPrecondition   the server's state refuses it now: an agent busy
//                            with another test or job, a rank claimed by another host
//   413, 429 ResourceExhausted  over a size or rate limit
//   501 Unimplemented        the server lacks the feature (no GPU, no NCCL)
//   503 Unavailable          the server cannot serve now
//   504 DeadlineExceeded     the work ran out of time on the server
//   other 5xx Internal, anything else Unknown
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <string>

#include "base/status.h"
#include "net/tls.h"

namespace fabcheck::net {

StatusCode StatusCodeForHttp(int http_status);
int HttpStatusFor(StatusCode code);

struct JsonCall {
  std::string method = "GET";  // GET or POST
  std::string path;
  std::string body;            // POST: JSON text
  std::string where;           // names the server and call in messages: "agent h:p POST /v1/test"
  // Said when nothing answers: "is 'fabcheck agent' running there and the port open?"
  std::string unreachable_hint;
  const TlsFiles* tls = nullptr;  // the client's TLS, to explain a failed verification
  std::string tls_name;           // the name the server's certificate was checked for
  // The answer is read within these (SendBounded): no route of a fabcheck
  // server answers more than the route's cap, and the whole call (connect,
  // headers, body) ends by the deadline. An unset deadline is
  // kDefaultJsonCallTime from the call's start.
  size_t max_body = 1 << 20;
  std::chrono::steady_clock::time_point deadline{};
};

inline constexpr std::chrono::seconds kDefaultJsonCallTime{60};

// Sends the call on `http` (made by MakeHttpClient, timeouts and token set)
// and returns the answer's JSON. A non-200 answer is a Status of the table's
// code, its message the answer's "error" string (or the body's start). An
// answer over max_body or out of memory is ResourceExhausted, one not complete
// by the deadline DeadlineExceeded. When no server answered at all (refused,
// reset, timed out: rank 0 may not be up yet), *no_answer says how, so a
// caller can retry; it stays Success when a server answered (a TLS failure is
// an answer: the next try fails the same way) or a limit ended the call.
Result<nlohmann::json> CallJson(httplib::Client& http, const JsonCall& call, httplib::Error* no_answer = nullptr);

}  // namespace fabcheck::net
