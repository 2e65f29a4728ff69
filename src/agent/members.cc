#include "agent/members.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/input.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/strings.h"
#include "net/address.h"
#include "net/auth.h"
#include "net/http_client.h"
#include "net/http_service.h"
#include "net/json_call.h"
#include "net/slurm.h"

namespace fabcheck::agent {

Result<std::vector<control::HostPort>> ParseAgentList(std::string_view list, int default_port) {
  std::vector<control::HostPort> out;
  std::set<std::string> seen;
  for (const std::string& item : Split(list, ',', true)) {
    auto hp = control::ParseHostPort(item, default_port);
    if (!hp.ok()) return InvalidArgumentError(fmt::format("--agents: {}", hp.status().message()));
    if (!seen.insert(hp->ToString()).second) {
      return InvalidArgumentError(fmt::format("--agents: {} is listed twice", hp->ToString()));
    }
    out.push_back(*hp);
  }
  return out;
}

Result<std::vector<control::HostPort>> ReadAgentsFile(const std::string& path, int default_port) {
  auto content = ReadFileBounded(path, 16 << 20);
  if (!content.ok()) return Status(content.status().code(), "cannot read agents file: " + content.status().message());
  std::vector<control::HostPort> out;
  std::set<std::string> seen;
  std::vector<std::string> lines = Split(*content, '\n');
  for (int number = 1; number <= static_cast<int>(lines.size()); ++number) {
    const std::string& line = lines[number - 1];
    std::string_view text = Trim(std::string_view(line).substr(0, line.find('#')));
    if (text.empty()) continue;
    auto hp = control::ParseHostPort(text, default_port);
    if (!hp.ok()) return InvalidArgumentError(fmt::format("{}:{}: {}", path, number, hp.status().message()));
    if (!seen.insert(hp->ToString()).second) {
      return InvalidArgumentError(fmt::format("{}:{}: {} is listed twice", path, number, hp->ToString()));
    }
    out.push_back(*hp);
  }
  if (out.empty()) return InvalidArgumentError(fmt::format("agents file {} lists no agent (one host:port per line)", path));
  return out;
}

struct AgentRegistry::Impl {
  std::unique_ptr<net::HttpService> http;
  std::mutex mu;
  std::condition_variable cv;
  int size = 0;
  std::map<int, control::HostPort> members;
  std::string state = "waiting";
};

namespace {

// A certificate name as a rank may report it: a DNS name or an address.
bool PlausibleTlsName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':') return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<AgentRegistry>> AgentRegistry::Start(const std::string& bind, int port, int size,
                                                            std::optional<std::string> token,
                                                            std::shared_ptr<const net::TlsContext> tls) {
  std::unique_ptr<AgentRegistry> r(new AgentRegistry());
  r->impl_ = std::make_unique<Impl>();
  Impl* impl = r->impl_.get();
  impl->size = size;
  net::HttpServiceOptions service;
  service.name = "sweep rendezvous";
  service.bind = bind;
  service.port = port;
  service.bind_hint = "in use? is another rank 0 running here?";
  service.token = std::move(token);
  service.unauthorized_message = "missing or wrong token";
  service.limits.max_body_bytes = 64 * 1024;
  service.tls = std::move(tls);
  auto routes = [impl](httplib::Server& http) {
    http.Post("/v1/rendezvous/join", [impl](const httplib::Request& req, httplib::Response& res) {
      auto j = nlohmann::json::parse(req.body, nullptr, false);
      auto field = [&](const char* name, int fallback) {
        if (!j.is_object()) return fallback;
        auto it = j.find(name);
        return it != j.end() && it->is_number_integer() ? it->get<int>() : fallback;
      };
      int rank = field("rank", -1), size = field("size", -1), agent_port = field("agent_port", 0);
      std::string tls_name;
      bool tls_name_ok = true;
      if (j.is_object() && j.contains("tls_name")) {
        tls_name_ok = j["tls_name"].is_string() && PlausibleTlsName(j["tls_name"].get<std::string>());
        if (tls_name_ok) tls_name = j["tls_name"].get<std::string>();
      }
      std::lock_guard lock(impl->mu);
      if (rank < 1 || rank >= impl->size || size != impl->size || agent_port <= 0 || agent_port > 65535 ||
          !tls_name_ok) {
        res.status = 400;
        res.set_content(ToJsonText(nlohmann::json{{"error", fmt::format("bad join {}: expected rank 1..{}, size {}, "
                                                                        "agent_port (and a DNS name or address as "
                                                                        "tls_name)",
                                                                        req.body.substr(0, 200), impl->size - 1,
                                                                        impl->size)}}),
                        "application/json");
        return;
      }
      // The address the rank reached us from is the one the others can reach it at.
      impl->members[rank] = control::HostPort{req.remote_addr, agent_port, tls_name};
      impl->cv.notify_all();
      res.set_content(ToJsonText(nlohmann::json{{"ok", true}, {"joined", impl->members.size()}}), "application/json");
    });
    http.Get("/v1/rendezvous/state", [impl](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(impl->mu);
      res.set_content(
          ToJsonText(nlohmann::json{{"state", impl->state}, {"joined", impl->members.size()}, {"size", impl->size}}),
          "application/json");
    });
  };
  ASSIGN_OR_RETURN(impl->http, net::HttpService::Start(std::move(service), routes));
  r->port_ = impl->http->port();
  return r;
}

AgentRegistry::~AgentRegistry() {
  if (impl_ && impl_->http) (void)impl_->http->Stop();
}

void AgentRegistry::AddSelf(int rank, control::HostPort agent) {
  std::lock_guard lock(impl_->mu);
  impl_->members[rank] = std::move(agent);
  impl_->cv.notify_all();
}

void AgentRegistry::SetState(std::string state) {
  std::lock_guard lock(impl_->mu);
  impl_->state = std::move(state);
}

Result<std::vector<control::HostPort>> AgentRegistry::WaitForAll(std::chrono::milliseconds timeout,
                                                              const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(impl_->mu);
  while (static_cast<int>(impl_->members.size()) < impl_->size) {
    if (stop && stop->load()) return CancelledError("rendezvous: interrupted");
    if (std::chrono::steady_clock::now() >= deadline) {
      std::vector<std::string> missing;
      for (int r = 0; r < impl_->size && missing.size() < 20; ++r) {
        if (!impl_->members.count(r)) missing.push_back(std::to_string(r));
      }
      return DeadlineExceededError(fmt::format(
          "rendezvous: {} of {} ranks joined within {} s; missing ranks {} (did they start? can they reach the "
          "--coordinator address? raise --rendezvous-timeout)",
          impl_->members.size(), impl_->size, timeout.count() / 1000, Join(missing, ",")));
    }
    impl_->cv.wait_for(lock, std::chrono::milliseconds(200));
  }
  std::vector<control::HostPort> out;
  for (const auto& [rank, hp] : impl_->members) out.push_back(hp);
  return out;
}

namespace {

// Rank 0's answers are a few hundred bytes: an endless or huge one (an
// impostor at the coordinator's address) ends the call, not the rank. One
// call ends within kBoardCallTime.
constexpr size_t kMaxBoardAnswer = 64 << 10;
constexpr std::chrono::seconds kBoardCallTime{10};

httplib::Client MakeClient(const RendezvousClient& r) {
  httplib::Client http = net::MakeHttpClient(r.coordinator.host, r.coordinator.port, r.tls ? &*r.tls : nullptr);
  http.set_connection_timeout(std::chrono::seconds(2));
  http.set_read_timeout(std::chrono::seconds(5));
  if (r.token) http.set_bearer_token_auth(*r.token);
  return http;
}

}  // namespace

Status JoinRendezvous(const RendezvousClient& rendezvous, const net::LaunchRank& me, int agent_port,
                      const std::string& tls_name, std::chrono::milliseconds timeout, const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string where = "the rendezvous at " + rendezvous.coordinator.ToString();
  std::string last = "no attempt";
  bool cut_off = false;
  nlohmann::json body = {{"rank", me.rank}, {"size", me.size}, {"agent_port", agent_port}};
  if (!tls_name.empty()) body["tls_name"] = tls_name;
  const net::TlsFiles* tls = rendezvous.tls ? &*rendezvous.tls : nullptr;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop && stop->load()) return CancelledError("rendezvous: interrupted");
    auto http = MakeClient(rendezvous);
    net::JsonCall call{"POST", "/v1/rendezvous/join", ToJsonText(body), where, "", tls, rendezvous.coordinator.host};
    call.max_body = kMaxBoardAnswer;
    call.deadline = std::min(deadline, std::chrono::steady_clock::now() + kBoardCallTime);
    httplib::Error no_answer = httplib::Error::Success;
    auto joined = net::CallJson(http, call, &no_answer);
    if (joined.ok()) return Status::Ok();
    const StatusCode code = joined.status().code();
    // Rank 0 answered and refused (a wrong token, a bad join), TLS failed, or
    // the answer was too large to be a board's: the next try fares the same.
    if (no_answer == httplib::Error::Success &&
        (code == StatusCode::kInvalidArgument || code == StatusCode::kUnauthenticated ||
         code == StatusCode::kPermissionDenied || code == StatusCode::kFailedPrecondition ||
         code == StatusCode::kUnavailable || code == StatusCode::kResourceExhausted)) {
      return Status(code, fmt::format("rank {}: {}", me.rank, joined.status().message()));
    }
    last = joined.status().message();
    // TLS 1.3 refuses a client certificate after the client's side of the
    // handshake is done: the client sees its request cut off, not a TLS error.
    cut_off = no_answer == httplib::Error::Read || no_answer == httplib::Error::Write;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // rank 0 may not be up yet
  }
  return DeadlineExceededError(fmt::format(
      "rendezvous: could not join {} within {} s (last: {}); is rank 0 running and --coordinator its address?{}",
      rendezvous.coordinator.ToString(), timeout.count() / 1000, last,
      rendezvous.tls && cut_off ? " Rank 0 cut the requests off: does it accept this rank's certificate (--tls-cert "
                                  "signed by the CA rank 0 was given as --tls-ca)?"
                                : ""));
}

Status WaitForFinish(const RendezvousClient& rendezvous, std::chrono::milliseconds timeout,
                     const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string where = "the rendezvous at " + rendezvous.coordinator.ToString();
  int misses = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop && stop->load()) return CancelledError("interrupted while the sweep ran");
    auto http = MakeClient(rendezvous);
    net::JsonCall call{"GET", "/v1/rendezvous/state", "", where, "", rendezvous.tls ? &*rendezvous.tls : nullptr,
                       rendezvous.coordinator.host};
    call.max_body = kMaxBoardAnswer;
    call.deadline = std::chrono::steady_clock::now() + kBoardCallTime;
    auto state = net::CallJson(http, call);
    if (state.ok()) {
      misses = 0;
      if (state->is_object() && state->value("state", "") == "done") return Status::Ok();
    } else if (++misses >= 5) {
      // Rank 0 is gone: it finished (and exited) or died; either way we stop.
      LOG_INFO("sweep", "coordinator {} no longer answers; leaving", rendezvous.coordinator.ToString());
      return Status::Ok();
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return DeadlineExceededError(fmt::format("the sweep at {} did not finish within {} s",
                                           rendezvous.coordinator.ToString(), timeout.count() / 1000));
}

Status CheckSpmdTls(const net::TlsFiles& files) {
  if (files.cert.empty() || files.key.empty() || files.ca.empty()) {
    return InvalidArgumentError(
        "TLS in an SPMD launch is mutual among the ranks: give every rank --tls-cert, --tls-key and --tls-ca (one CA "
        "for the job; docs/tls.md)");
  }
  RETURN_IF_ERROR(net::TlsContext::ForServer(files).status());
  RETURN_IF_ERROR(net::TlsContext::ForClient(files).status());
  return net::CertificateName(files.cert).status();
}

namespace {

// Rank 0's rendezvous listens where the other ranks dial it: on loopback
// when the coordinator is a loopback address (one host), else everywhere.
std::string RendezvousBind(const control::HostPort& coordinator) {
  return coordinator.host != "localhost" && net::IsLoopbackAddress(coordinator.host) ? coordinator.host : "0.0.0.0";
}

}  // namespace

Status CheckSpmdListen(const SpmdOptions& o) {
  if (o.token) return Status::Ok();
  const bool loopback = net::IsLoopbackAddress(o.agent.bind) && RendezvousBind(o.coordinator) != "0.0.0.0";
  return net::CheckTokenlessListen("this rank's agent and the rendezvous",
                                   o.agent.bind + " (rendezvous " + RendezvousBind(o.coordinator) + ":" +
                                       std::to_string(o.coordinator.port) + ")",
                                   loopback, o.tls.has_value(), o.insecure_no_token);
}

Result<SpmdMembers> MeetSpmd(SpmdOptions o) {
  RETURN_IF_ERROR(CheckSpmdListen(o));
  SpmdMembers out;
  std::string tls_name;
  std::shared_ptr<const net::TlsContext> server_tls;
  if (o.tls) {
    RETURN_IF_ERROR(CheckSpmdTls(*o.tls));
    ASSIGN_OR_RETURN(server_tls, net::TlsContext::ForServer(*o.tls));
    ASSIGN_OR_RETURN(o.agent.peer_tls, net::TlsContext::ForClient(*o.tls));
    ASSIGN_OR_RETURN(tls_name, net::CertificateName(o.tls->cert));
    o.agent.tls = server_tls;
  }
  ASSIGN_OR_RETURN(out.own_agent, LocalAgent::Start(std::move(o.agent)));
  const int agent_port = out.own_agent->control_port();
  if (o.me.rank != 0) {
    RendezvousClient rendezvous{o.coordinator, o.token, o.tls};
    RETURN_IF_ERROR(JoinRendezvous(rendezvous, o.me, agent_port, tls_name, o.rendezvous_timeout, o.stop));
    RETURN_IF_ERROR(WaitForFinish(rendezvous, std::chrono::hours(48), o.stop));
    return out;
  }
  ASSIGN_OR_RETURN(out.registry, AgentRegistry::Start(RendezvousBind(o.coordinator), o.coordinator.port, o.me.size, o.token, server_tls));
  out.registry->AddSelf(0, control::HostPort{o.coordinator.host, agent_port, tls_name});
  auto all = out.registry->WaitForAll(o.rendezvous_timeout, o.stop);
  if (!all.ok()) {
    out.registry->SetState("done");
    return all.status();
  }
  out.registry->SetState("running");
  out.agents = std::move(all).value();
  return out;
}

Result<Members> FindMembers(const MemberOptions& o, const net::EnvLookup& env) {
  Members out;
  if (!o.agents.empty() && !o.agents_file.empty()) {
    return InvalidArgumentError("give either --agents or --agents-file, not both");
  }
  if (!o.agents.empty() || !o.agents_file.empty()) {
    auto list = !o.agents.empty() ? ParseAgentList(o.agents, control::kDefaultControlPort)
                                  : ReadAgentsFile(o.agents_file, control::kDefaultControlPort);
    if (!list.ok() && !o.agents.empty()) return InvalidArgumentError(list.status().message());
    // An --agents-file that is missing, unreadable, empty or malformed is an
    // input the command could not run on (exit 3), not a mistake of the
    // command line's words (64): never InvalidArgument.
    if (!list.ok()) {
      const StatusCode code = list.status().code();
      return Status(code == StatusCode::kInvalidArgument ? StatusCode::kFailedPrecondition : code,
                    list.status().message());
    }
    out.agents = std::move(list).value();
    return out;
  }
  auto spmd = net::DetectLaunchRank(env, o.world);
  if (!spmd.ok()) return InvalidArgumentError(spmd.status().message());
  if (!*spmd) {
    return InvalidArgumentError(
        "no members: give --agents host:port,..., --agents-file F, or launch one rank per node with "
        "srun/mpirun/an Indexed Job and --coordinator HOST:PORT (see --help)");
  }
  const net::LaunchRank me = **spmd;
  if (me.size < o.min_ranks) {
    return InvalidArgumentError(fmt::format("rank {} of {} ({}): a {} needs at least {} ranks", me.rank, me.size,
                                            me.source, o.command, o.min_ranks));
  }
  std::string coordinator_text = o.coordinator;
  if (coordinator_text.empty()) {
    // Under srun rank 0 runs on the step's first node, whether or not the
    // command was typed inside sbatch (where $(hostname) would also do).
    auto first = net::SlurmFirstHost(env);
    if (!first.ok()) return InvalidArgumentError(first.status().message());
    if (!*first) {
      return InvalidArgumentError("an SPMD launch needs --coordinator HOST:PORT (rank 0's address)");
    }
    coordinator_text = **first;
    if (me.rank == 0) LOG_INFO(o.command, "rendezvous at {}:{}, the Slurm step's first node", coordinator_text, kDefaultRendezvousPort);
  }
  auto coordinator = control::ParseHostPort(coordinator_text, kDefaultRendezvousPort);
  if (!coordinator.ok()) return InvalidArgumentError("--coordinator " + coordinator.status().message());
  LOG_INFO(o.command, "rank {} of {} (from {})", me.rank, me.size, me.source);
  const std::string rank = fmt::format("rank {}: ", me.rank);
  if (!o.own_agent) return InternalError(rank + "no agent configuration for an SPMD launch");
  auto config = o.own_agent();
  if (!config.ok()) return Status(config.status().code(), rank + config.status().message());
  SpmdOptions spmd_options{me, *coordinator, std::move(config).value(), o.token};
  spmd_options.tls = o.tls;
  spmd_options.rendezvous_timeout = o.rendezvous_timeout;
  spmd_options.stop = o.stop;
  spmd_options.insecure_no_token = o.insecure_no_token;
  // Serving without a token beyond loopback is the command line's to fix (64).
  if (Status open = CheckSpmdListen(spmd_options); !open.ok()) return InvalidArgumentError(rank + open.message());
  auto met = MeetSpmd(std::move(spmd_options));
  if (!met.ok()) return Status(met.status().code(), rank + met.status().message());
  out.own_agent = std::move(met->own_agent);
  out.registry = std::move(met->registry);
  out.agents = std::move(met->agents);
  out.rank_done = me.rank != 0;
  return out;
}

}  // namespace fabcheck::agent
