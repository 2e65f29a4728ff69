#include "coll/tcp_rendezvous.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <thread>

#include "base/json_text.h"
#include "base/log.h"
#include "base/strings.h"
#include "fabcheck/model/json_fields.h"
#include "net/http_client.h"
#include "net/json_call.h"
#include "net/http_service.h"

namespace fabcheck::coll {
namespace {

using nlohmann::json;

// The ranks a rendezvous answer lists as missing; a malformed list reads as
// none (its other fields still say what went wrong), never as a cast number.
std::vector<int> MissingRanks(const json& answer) {
  try {
    return model::json_fields::NumbersOr<int>(answer, "missing");
  } catch (const json::exception&) {
    return {};
  }
}

constexpr size_t kIdBytes = sizeof(dl::ncclUniqueId::internal);

// A short, printable excerpt of something a peer sent.
std::string Excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 80) out += "...";
  return out;
}

// "3,5,7" (the first 20, then how many more).
std::string RankList(const std::vector<int>& ranks) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks.size() && i < 20; ++i) parts.push_back(std::to_string(ranks[i]));
  std::string out = Join(parts, ",");
  if (ranks.size() > 20) out += fmt::format(" and {} more", ranks.size() - 20);
  return out;
}

std::optional<int> IntField(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  int64_t v = it->get<int64_t>();
  if (v < -1 || v > 100'000'000) return std::nullopt;
  return static_cast<int>(v);
}

std::optional<std::string> StringField(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::chrono::steady_clock::time_point DeadlineAfter(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

std::string UniqueIdToHex(const dl::ncclUniqueId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(kIdBytes * 2);
  for (char c : id.internal) {
    auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

Result<dl::ncclUniqueId> UniqueIdFromHex(std::string_view hex) {
  if (hex.size() != kIdBytes * 2) {
    return InvalidArgumentError(fmt::format("an NCCL id is {} hex digits, not {}", kIdBytes * 2, hex.size()));
  }
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  dl::ncclUniqueId id{};
  for (size_t i = 0; i < kIdBytes; ++i) {
    int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgumentError(fmt::format("the NCCL id has a non-hex digit at {}", 2 * i));
    id.internal[i] = static_cast<char>(hi * 16 + lo);
  }
  return id;
}

int LocalRankOf(const std::vector<std::string>& hosts, int rank, int* local_size) {
  int local = 0, count = 0;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r) {
    if (hosts[r] != hosts[rank]) continue;
    if (r < rank) ++local;
    ++count;
  }
  if (local_size != nullptr) *local_size = count;
  return local;
}

// ---- the board ----

void RendezvousBoard::NoteProblem(std::string problem) {
  if (problems_.size() >= 20 || std::find(problems_.begin(), problems_.end(), problem) != problems_.end()) return;
  problems_.push_back(std::move(problem));
}

Status RendezvousBoard::Join(std::string_view body, const std::string& peer) {
  auto reject = [&](std::string message) {
    NoteProblem(message);
    return InvalidArgumentError(std::move(message));
  };
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return reject(fmt::format("{} sent a join that is not a JSON object: '{}'", peer, Excerpt(body)));
  auto rank = IntField(j, "rank");
  if (!rank) return reject(fmt::format("{} sent a join without a valid \"rank\": '{}'", peer, Excerpt(body)));
  auto size = IntField(j, "size");
  auto host = StringField(j, "host");
  if (*rank < 0 || *rank >= size_) {
    return reject(
        fmt::format("rank {} ({}) is not below the world size {} of this rendezvous (check the "
                    "launcher's rank variables)",
                    *rank, peer, size_));
  }
  if (!size || *size != size_) {
    return reject(
        fmt::format("rank {} ({}) was started for a world of {} ranks, but this rendezvous expects {} "
                    "(start every rank with the same size)",
                    *rank, peer, size ? std::to_string(*size) : "?", size_));
  }
  if (!host || host->empty() || host->size() > 255) {
    return reject(fmt::format("rank {} ({}) sent no valid \"host\"", *rank, peer));
  }
  if (*rank == 0) {
    auto hex = StringField(j, "nccl_id");
    if (!hex) return reject(fmt::format("rank 0 ({}) joined without its \"nccl_id\"", peer));
    if (auto id = UniqueIdFromHex(*hex); !id.ok()) {
      return reject(fmt::format("rank 0 ({}) sent a malformed nccl_id: {}", peer, id.status().message()));
    }
    id_hex_ = *hex;
  }
  auto& slot = members_[static_cast<size_t>(*rank)];
  if (slot && (slot->host != *host || slot->peer != peer)) {
    std::string message = fmt::format(
        "rank {} joined twice: from {} ({}) and from {} ({}); two processes got the same rank (check the "
        "launcher's rank variables)",
        *rank, slot->host, slot->peer, *host, peer);
    NoteProblem(message);
    return FailedPreconditionError(message);
  }
  slot = Member{*host, peer};  // a retry from the same process is harmless
  return Status::Ok();
}

Status RendezvousBoard::AddResult(std::string_view body, const std::string& peer) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) {
    std::string message = fmt::format("{} sent a result that is not a JSON object: '{}'", peer, Excerpt(body));
    NoteProblem(message);
    return InvalidArgumentError(message);
  }
  auto outcome = OutcomeFromJson(j);
  if (!outcome.ok() || outcome->rank < 0 || outcome->rank >= size_) {
    std::string message = fmt::format(
        "{} sent a bad result: {}", peer,
        outcome.ok() ? fmt::format("rank {} is not below {}", outcome->rank, size_) : outcome.status().message());
    NoteProblem(message);
    return InvalidArgumentError(message);
  }
  if (!outcome->error.empty() && !Ready() && failure_.empty()) {
    failure_ = fmt::format("rank {} ({}) failed before the ranks met: {}", outcome->rank,
                           outcome->host.empty() ? peer : outcome->host, outcome->error);
  }
  results_[static_cast<size_t>(outcome->rank)] = OutcomeToJson(*outcome);
  return Status::Ok();
}

bool RendezvousBoard::Ready() const { return id_hex_.has_value() && MissingJoins().empty(); }

std::vector<int> RendezvousBoard::MissingJoins() const {
  std::vector<int> out;
  for (int r = 0; r < size_; ++r) {
    if (!members_[static_cast<size_t>(r)]) out.push_back(r);
  }
  return out;
}

std::vector<int> RendezvousBoard::MissingResults() const {
  std::vector<int> out;
  for (int r = 0; r < size_; ++r) {
    if (!results_[static_cast<size_t>(r)]) out.push_back(r);
  }
  return out;
}

json RendezvousBoard::Meeting() const {
  auto missing = MissingJoins();
  json j = {{"size", size_},
            {"joined", size_ - static_cast<int>(missing.size())},
            {"missing", missing},
            {"problems", problems_}};
  if (Ready()) {
    j["state"] = "ready";
    j["nccl_id"] = *id_hex_;
    json hosts = json::array();
    for (const auto& m : members_) hosts.push_back(m->host);
    j["hosts"] = std::move(hosts);
  } else if (!failure_.empty()) {
    j["state"] = "failed";
    j["failure"] = failure_;
  } else {
    j["state"] = "waiting";
  }
  return j;
}

json RendezvousBoard::Results() const {
  json results = json::array();
  for (const auto& r : results_) {
    if (r) results.push_back(*r);
  }
  auto missing = MissingResults();
  return {{"size", size_},
          {"reported", size_ - static_cast<int>(missing.size())},
          {"results", std::move(results)},
          {"missing", missing},
          {"problems", problems_}};
}

json OutcomeToJson(const RankOutcome& o) {
  return {{"rank", o.rank}, {"host", o.host},  {"cuda_device", o.cuda_device}, {"pci_bus_id", o.pci_bus_id},
          {"name", o.name}, {"error", o.error}};
}

Result<RankOutcome> OutcomeFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgumentError("a rank's result is not a JSON object");
  RankOutcome o;
  auto rank = IntField(j, "rank");
  if (!rank) return InvalidArgumentError("a rank's result has no valid \"rank\"");
  o.rank = *rank;
  auto device = IntField(j, "cuda_device");
  o.cuda_device = device.value_or(-1);
  for (auto [name, field] : {std::pair{"host", &o.host}, std::pair{"pci_bus_id", &o.pci_bus_id},
                             std::pair{"name", &o.name}, std::pair{"error", &o.error}}) {
    if (j.contains(name) && !j[name].is_string()) {
      return InvalidArgumentError(fmt::format("rank {}'s result has a non-string \"{}\"", o.rank, name));
    }
    *field = j.value(name, "");
  }
  return o;
}

// ---- the server ----

struct RendezvousServer::Impl {
  std::unique_ptr<net::HttpService> http;
  mutable std::mutex mu;
  RendezvousBoard board;
  explicit Impl(int size) : board(size) {}
};

Result<std::unique_ptr<RendezvousServer>> RendezvousServer::Start(const std::string& bind, int port, int size,
                                                                  std::optional<std::string> token,
                                                                  std::shared_ptr<const net::TlsContext> tls) {
  if (size < 1) return InvalidArgumentError("a rendezvous needs a world size of at least 1");
  std::unique_ptr<RendezvousServer> server(new RendezvousServer());
  server->impl_ = std::make_unique<Impl>(size);
  Impl* impl = server->impl_.get();
  net::HttpServiceOptions service;
  service.name = "coll rendezvous";
  service.bind = bind;
  service.port = port;
  service.bind_hint = "port in use? another rank 0 or an earlier run still here? choose another --coordinator port";
  service.token = std::move(token);
  service.unauthorized_message = "missing or wrong token (give every rank the same --token-file)";
  service.on_unauthorized = [impl](const std::string& remote_addr) {
    std::lock_guard lock(impl->mu);
    impl->board.NoteProblem(fmt::format("{} sent a request without the right token", remote_addr));
  };
  // The board only ever needs a few hundred bytes per request; every rank
  // polls it, so enough workers for a large world's bursts.
  service.limits.max_body_bytes = 64 * 1024;
  service.limits.workers = 8;
  service.limits.max_connections = 4096;
  service.tls = std::move(tls);
  auto answer = [](httplib::Response& res, const Status& s) {
    if (s.ok()) {
      res.set_content(R"({"ok":true})", "application/json");
      return;
    }
    res.status = net::HttpStatusFor(s.code());  // 409 for a rank claimed twice, 400 for a bad join
    res.set_content(ToJsonText(json{{"error", s.message()}}), "application/json");
  };
  // The board is not thread-safe: every handler holds the lock.
  auto locked = [impl](auto handler) {
    return [impl, handler](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(impl->mu);
      handler(req, res);
    };
  };
  auto routes = [impl, answer, locked](httplib::Server& http) {
    http.Post("/v1/coll/join", locked([impl, answer](const httplib::Request& req, httplib::Response& res) {
                Status s = impl->board.Join(req.body, req.remote_addr);
                if (!s.ok()) LOG_WARN("coll", "rendezvous: {}", s.message());
                answer(res, s);
              }));
    http.Post("/v1/coll/result", locked([impl, answer](const httplib::Request& req, httplib::Response& res) {
                Status s = impl->board.AddResult(req.body, req.remote_addr);
                if (!s.ok()) LOG_WARN("coll", "rendezvous: {}", s.message());
                answer(res, s);
              }));
    http.Get("/v1/coll/meeting", locked([impl](const httplib::Request&, httplib::Response& res) {
               res.set_content(ToJsonText(impl->board.Meeting()), "application/json");
             }));
    http.Get("/v1/coll/results", locked([impl](const httplib::Request&, httplib::Response& res) {
               res.set_content(ToJsonText(impl->board.Results()), "application/json");
             }));
  };
  ASSIGN_OR_RETURN(impl->http, net::HttpService::Start(std::move(service), routes));
  server->port_ = impl->http->port();
  return server;
}

RendezvousServer::~RendezvousServer() {
  if (impl_ && impl_->http) (void)impl_->http->Stop();
}

std::vector<int> RendezvousServer::MissingResults() const {
  std::lock_guard lock(impl_->mu);
  return impl_->board.MissingResults();
}

std::vector<std::string> RendezvousServer::Problems() const {
  std::lock_guard lock(impl_->mu);
  return impl_->board.problems();
}

// ---- one rank's side ----

Result<std::unique_ptr<TcpRankExchange>> TcpRankExchange::Create(const std::string& host, int port,
                                                             const RankExchangeConfig& config, bool serve) {
  if (config.world_size < 1 || config.rank < 0 || config.rank >= config.world_size) {
    return InvalidArgumentError(fmt::format("rank {} of {} cannot join a rendezvous", config.rank, config.world_size));
  }
  std::unique_ptr<TcpRankExchange> r(new TcpRankExchange());
  r->host_ = host;
  r->port_ = port;
  r->connect_host_ = host;
  r->config_ = config;
  if (serve) {
    // Every address unless told (the others reach rank 0 by whatever name
    // --coordinator gives); an agent's ranks bind the agent's address.
    std::shared_ptr<const net::TlsContext> tls;
    if (config.tls) {
      ASSIGN_OR_RETURN(tls, net::TlsContext::ForServer(*config.tls));
    }
    ASSIGN_OR_RETURN(r->server_, RendezvousServer::Start(config.bind.empty() ? "0.0.0.0" : config.bind, port,
                                                             config.world_size, config.token, tls));
    r->port_ = r->server_->port();
    r->connect_host_ = "127.0.0.1";
  }
  return r;
}

TcpRankExchange::~TcpRankExchange() {
  if (!server_) return;
  // Rank 0 leaving early (it failed, or a rank never reported): give the
  // others a moment to read "failed" and report instead of finding the port
  // closed and waiting out their timeout.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!server_->MissingResults().empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string TcpRankExchange::Describe() const { return fmt::format("tcp:{}:{}", host_, port_); }

Result<json> TcpRankExchange::Call(const std::string& method, const std::string& path, const json* body,
                                 std::chrono::steady_clock::time_point deadline, bool* retryable) {
  *retryable = false;
  // Rank 0 talks to its own server on loopback, yet checks the name the others dial.
  const net::TlsFiles* tls = config_.tls ? &*config_.tls : nullptr;
  httplib::Client http = net::MakeHttpClient(connect_host_, port_, tls, tls ? host_ : "");
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  auto cap = [&](std::chrono::milliseconds limit) {
    return std::max(std::chrono::milliseconds(100), std::min(limit, left));
  };
  http.set_connection_timeout(cap(std::chrono::milliseconds(2000)));
  http.set_read_timeout(cap(std::chrono::milliseconds(10000)));
  http.set_write_timeout(cap(std::chrono::milliseconds(10000)));
  if (config_.token) http.set_bearer_token_auth(*config_.token);
  net::JsonCall call{method, path, body ? body->dump() : "", fmt::format("the rendezvous at {}:{}", host_, port_), "",
                     tls, host_};
  // The board's answers list at most every rank's host: an answer longer
  // than this is not a fabcheck rendezvous, and must not fill this rank's memory.
  call.max_body = kMaxRendezvousAnswer;
  // One call's deadline (the exchange's own wait ends the loop around it, with its message).
  call.deadline = std::chrono::steady_clock::now() + cap(std::chrono::milliseconds(12000));
  httplib::Error no_answer = httplib::Error::Success;
  auto answer = net::CallJson(http, call, &no_answer);
  if (no_answer != httplib::Error::Success) {
    *retryable = true;  // rank 0 may not be listening yet
    return UnavailableError(fmt::format("cannot reach {}: {}", call.where, httplib::to_string(no_answer)));
  }
  if (answer.ok() && answer->is_object()) return answer;
  const StatusCode code = answer.ok() ? StatusCode::kDataLoss : answer.status().code();
  switch (code) {
    case StatusCode::kUnauthenticated:
      return UnauthenticatedError(fmt::format("{} refused our token (give every rank the same --token-file)", call.where));
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return Status(code, fmt::format("{} refused rank {}: {}", call.where, config_.rank, answer.status().message()));
    case StatusCode::kDeadlineExceeded:
      *retryable = true;  // a slow answer: the exchange's deadline decides
      return UnavailableError(answer.status().message());
    case StatusCode::kResourceExhausted:  // too large, out of memory: the same on every retry
    case StatusCode::kUnavailable:        // TLS failed, or rank 0 cannot serve
      return answer.status();
    default:
      return UnavailableError(fmt::format(
          "{} (not a fabcheck coll rendezvous? is HOST:PORT rank 0's address, and rank 0 the same fabcheck version?)",
          answer.ok() ? call.where + ": the answer is not a JSON object" : answer.status().message()));
  }
}

Result<Meeting> TcpRankExchange::Exchange(int rank, const std::string& host, const dl::ncclUniqueId& id) {
  const double timeout = config_.timeout_seconds;
  const auto deadline = DeadlineAfter(timeout);
  json body = {{"rank", rank}, {"size", config_.world_size}, {"host", host}};
  if (rank == 0) body["nccl_id"] = UniqueIdToHex(id);
  bool retryable = false;
  std::string last;
  while (true) {
    auto joined = Call("POST", "/v1/coll/join", &body, deadline, &retryable);
    if (joined.ok()) break;
    if (!retryable) return joined.status();
    last = joined.status().message();
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceededError(
          fmt::format("rank {} could not join within {:.0f} s ({}); is rank 0 running, "
                      "and {}:{} its address?",
                      rank, timeout, last, host_, port_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  json state;
  while (true) {
    auto got = Call("GET", "/v1/coll/meeting", nullptr, deadline, &retryable);
    if (!got.ok() && !retryable) return got.status();
    if (got.ok()) {
      state = *got;
      std::string s = state.value("state", "");
      if (s == "ready") break;
      if (s == "failed") {
        return AbortedError(fmt::format("the run stopped: {}", state.value("failure", "another rank failed")));
      }
      if (s != "waiting") {
        return UnavailableError(
            fmt::format("the rendezvous at {}:{} sent state '{}': not a fabcheck coll "
                        "rendezvous",
                        host_, port_, Excerpt(s)));
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      if (!got.ok()) {
        return DeadlineExceededError(
            fmt::format("rank {} lost the rendezvous at {}:{} while waiting ({}); did "
                        "rank 0 stop?",
                        rank, host_, port_, got.status().message()));
      }
      std::vector<int> missing = MissingRanks(state);
      std::string problems;
      for (const auto& p : state.value("problems", std::vector<std::string>())) problems += "; " + p;
      return DeadlineExceededError(fmt::format(
          "{} of {} ranks arrived at the rendezvous {}:{} within {:.0f} s; missing rank{} {} (did they start? can "
          "they reach {}:{}? raise --rendezvous-timeout){}",
          model::json_fields::NumberOr(state, "joined", 0), config_.world_size, host_, port_, timeout, missing.size() == 1 ? "" : "s",
          RankList(missing), host_, port_, problems));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Meeting meeting;
  auto parsed = UniqueIdFromHex(state.value("nccl_id", ""));
  if (!parsed.ok()) {
    return UnavailableError(
        fmt::format("the rendezvous at {}:{} sent a bad NCCL id: {}", host_, port_, parsed.status().message()));
  }
  meeting.id = *parsed;
  auto hosts = state.find("hosts");
  if (hosts == state.end() || !hosts->is_array() || static_cast<int>(hosts->size()) != config_.world_size) {
    return UnavailableError(
        fmt::format("the rendezvous at {}:{} sent no host list of {} ranks", host_, port_, config_.world_size));
  }
  for (const auto& h : *hosts) meeting.hosts.push_back(h.is_string() ? h.get<std::string>() : "");
  meeting.local_rank = LocalRankOf(meeting.hosts, rank, &meeting.local_size);
  return meeting;
}

Status TcpRankExchange::Report(const RankOutcome& outcome) {
  // An error is worth a short try only: when every rank fails alike (no GPU
  // on the node), rank 0 may be gone already.
  const auto deadline =
      DeadlineAfter(outcome.error.empty() ? config_.timeout_seconds : std::min(config_.timeout_seconds, 5.0));
  json body = OutcomeToJson(outcome);
  bool retryable = false;
  while (true) {
    auto sent = Call("POST", "/v1/coll/result", &body, deadline, &retryable);
    if (sent.ok()) return Status::Ok();
    if (!retryable || std::chrono::steady_clock::now() >= deadline) {
      return sent.status().WithContext(fmt::format("rank {} reporting its result", outcome.rank));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Result<std::vector<RankOutcome>> TcpRankExchange::Gather(const RankOutcome& own) {
  RETURN_IF_ERROR(Report(own));
  const double timeout = config_.timeout_seconds;
  const auto deadline = DeadlineAfter(timeout);
  json results;
  bool retryable = false;
  while (true) {
    auto got = Call("GET", "/v1/coll/results", nullptr, deadline, &retryable);
    if (!got.ok() && !retryable) return got.status();
    if (got.ok()) {
      results = *got;
      if (MissingRanks(results).empty()) break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      if (!got.ok()) return got.status();
      break;  // what arrived, and the rest named as missing below
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<RankOutcome> out(static_cast<size_t>(config_.world_size));
  for (int r = 0; r < config_.world_size; ++r) {
    out[r].rank = r;
    out[r].error = fmt::format(
        "rank {} never reported its result within {:.0f} s (it failed or hung: see its own "
        "output)",
        r, timeout);
  }
  auto list = results.find("results");
  if (list != results.end() && list->is_array()) {
    for (const auto& item : *list) {
      auto o = OutcomeFromJson(item);
      if (o.ok() && o->rank >= 0 && o->rank < config_.world_size) out[o->rank] = *o;
    }
  }
  return out;
}

}  // namespace fabcheck::coll
